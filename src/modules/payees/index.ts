import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { payeeRoutes, sandboxPayeeRoutes } from './routes.js';
import { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { payeeStatusLifecycle } from './lifecycle.js';
import type { PayeeRecord } from './schemas.js';
import { PayeeService } from './service.js';

/**
 * Registers the routes of the payees module (spec §4 POST /payees, GET /payees; GET /payees/{id} is additive) and,
 * their status lifecycle and, in the sandbox, its status simulation.
 */
export function registerPayees(app: FastifyInstance, context: ModuleContext): void {
  const payees = new PayeeService(context.storage, context.provisioning, context.clock, context.caches, context.endUsers);
  payeeRoutes(app, payees);
  const lifecycle = payeeStatusLifecycle(context.storage, context.clock, context.caches);
  context.providerEvents.register(lifecycle);
  if (context.config.apiEnvironment === 'sandbox') sandboxPayeeRoutes(app, new SandboxStatuses<PayeeRecord>(context.providerEvents, 'payee.status_changed', lifecycle));
}
