import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import type { WithProviderStatuses } from '../status-change.js';
import { payeeRoutes, sandboxPayeeRoutes } from './routes.js';
import { payeeStatuses } from './lifecycle.js';
import type { PayeeRecord } from './schemas.js';
import { PayeeService } from './service.js';

export type PayeeServices = WithProviderStatuses<{ payees: PayeeService }, PayeeRecord>;

/** The payee service and its status lifecycle (applying the bank's status changes), and in the sandbox the simulated bank's. */
export function payeeServices(context: ModuleContext): PayeeServices {
  return { payees: new PayeeService(context.storage, context.provisioning, context.clock, context.endUsers), sandbox: payeeStatuses(context) };
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
export { CreatePayeeBody, type CreatePayeeInput, type PayeeRecord, PayeeStatusBody, payeeStatuses as payeeStatusValues } from './schemas.js';
