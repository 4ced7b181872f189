import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { virtualAccountRoutes } from './routes.js';
import { VirtualAccountService } from './service.js';

/** Registers the routes of this module; it has no worker (docs/virtual-accounts.md). */
export function registerVirtualAccounts(app: FastifyInstance, context: ModuleContext): void {
  virtualAccountRoutes(app, new VirtualAccountService(context.storage, context.provisioning, context.clock, context.endUsers));
}
