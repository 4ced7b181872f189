import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { payeeRoutes, sandboxPayeeRoutes } from './routes.js';
import { PayeeService } from './service.js';

/**
 * Registers the routes of the payees module (spec §4 POST /payees, GET /payees; GET /payees/{id} is additive) and,
 * in the sandbox, its status simulation.
 */
export function registerPayees(app: FastifyInstance, context: ModuleContext): void {
  const payees = new PayeeService(context.storage, context.provisioning, context.clock, context.endUsers);
  payeeRoutes(app, payees);
  if (context.config.apiEnvironment === 'sandbox') sandboxPayeeRoutes(app, payees);
}
