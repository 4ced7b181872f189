import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { payeeRoutes } from './routes.js';
import { PayeeService } from './service.js';

/** Registers the routes of the payees module (spec §4 POST /payees, GET /payees; GET /payees/{id} is additive). */
export function registerPayees(app: FastifyInstance, context: ModuleContext): void {
  payeeRoutes(app, new PayeeService(context.storage, context.provisioning, context.clock, context.endUsers));
}
