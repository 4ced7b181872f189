import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { payeeRoutes, sandboxPayeeRoutes } from './routes.js';
import { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { payeeStatusLifecycle } from './lifecycle.js';
import type { PayeeRecord } from './schemas.js';
import { PayeeService } from './service.js';

export interface PayeeServices {
  payees: PayeeService;
  /** The simulated bank's status changes: the sandbox only. */
  sandbox: SandboxStatuses<PayeeRecord> | undefined;
}

/** The payee service and its status lifecycle (applying the bank's status changes), and in the sandbox the simulated bank's. */
export function payeeServices(context: ModuleContext): PayeeServices {
  const payees = new PayeeService(context.storage, context.provisioning, context.clock, context.endUsers);
  const lifecycle = payeeStatusLifecycle(context.storage, context.clock, context.caches);
  context.providerEvents.register(lifecycle);
  const sandbox = context.config.apiEnvironment === 'sandbox' ? new SandboxStatuses<PayeeRecord>(context.providerEvents, 'payee.status_changed', lifecycle) : undefined;
  return { payees, sandbox };
}

/**
 * The payees plugin (docs/spec.md §4 POST /payees, GET /payees; GET /payees/{id} is additive) and, in the sandbox, its
 * status simulation.
 */
export async function payeesPlugin(app: FastifyInstance, { payees, sandbox }: PayeeServices): Promise<void> {
  payeeRoutes(app, payees);
  if (sandbox) sandboxPayeeRoutes(app, sandbox);
}

export { type PayeeTarget, findPayeeTarget, requirePayeeActive } from './payee-target.js';
