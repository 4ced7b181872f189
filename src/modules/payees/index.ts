import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { payeeRoutes, sandboxPayeeRoutes } from './routes.js';
import { PayeeService } from './service.js';

export interface PayeeServices {
  payees: PayeeService;
  /** The status simulation routes exist in the sandbox only. */
  sandbox: boolean;
}

export function payeeServices(context: ModuleContext): PayeeServices {
  return { payees: new PayeeService(context.storage, context.provisioning, context.clock, context.caches, context.endUsers), sandbox: context.config.apiEnvironment === 'sandbox' };
}

/**
 * The payees plugin (docs/spec.md §4 POST /payees, GET /payees; GET /payees/{id} is additive) and, in the sandbox, its
 * status simulation.
 */
export async function payeesPlugin(app: FastifyInstance, { payees, sandbox }: PayeeServices): Promise<void> {
  payeeRoutes(app, payees);
  if (sandbox) sandboxPayeeRoutes(app, payees);
}

export { type PayeeTarget, findPayeeTarget, requirePayeeActive } from './payee-target.js';
