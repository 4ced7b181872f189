import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import type { WithProviderStatuses } from '../status-change.js';
import { sandboxVirtualAccountRoutes, virtualAccountRoutes } from './routes.js';
import { virtualAccountStatuses } from './lifecycle.js';
import type { VirtualAccountRecord } from './schemas.js';
import { VirtualAccountService } from './service.js';

export type VirtualAccountServices = WithProviderStatuses<{ virtualAccounts: VirtualAccountService }, VirtualAccountRecord>;

/**
 * The virtual account service and its status lifecycle (applying the bank's status changes), and in the sandbox the
 * simulated bank's; the module has no worker (docs/virtual-accounts.md).
 */
export function virtualAccountServices(context: ModuleContext): VirtualAccountServices {
  return { virtualAccounts: new VirtualAccountService(context.storage, context.provisioning, context.clock, context.endUsers), sandbox: virtualAccountStatuses(context) };
}

/** The virtual accounts plugin: docs/spec.md §4 /virtual-accounts and, in the sandbox, the simulated status change. */
export async function virtualAccountsPlugin(app: FastifyInstance, { virtualAccounts, sandbox }: VirtualAccountServices): Promise<void> {
  virtualAccountRoutes(app, virtualAccounts);
  if (sandbox) sandboxVirtualAccountRoutes(app, sandbox);
}

export { type VirtualAccountRow, type VirtualAccountWithOwner, activeVirtualAccountsIn, virtualAccountByReference, virtualAccountWithOwner } from './repository.js';
export { CreateVirtualAccountBody, type CreateVirtualAccountInput, type VirtualAccountRecord } from './schemas.js';
export { type VirtualAccountService } from './service.js';
