import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { feeRoutes } from './routes.js';
import { FeeService } from './service.js';

/** Registers POST /fees/preview (spec §4); schedules are set by the operator CLI (`customer-api fees`). */
export function registerFees(app: FastifyInstance, context: ModuleContext): void {
  feeRoutes(app, new FeeService(context.storage, context.clock));
}
