import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { sandboxVirtualAccountRoutes, virtualAccountRoutes } from './routes.js';
import { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { virtualAccountStatusLifecycle } from './lifecycle.js';
import type { VirtualAccountRecord } from './schemas.js';
import { VirtualAccountService } from './service.js';

export interface VirtualAccountServices {
  virtualAccounts: VirtualAccountService;
  /** The simulated bank's status changes: the sandbox only. */
  sandbox: SandboxStatuses<VirtualAccountRecord> | undefined;
}

/**
 * The virtual account service and its status lifecycle (applying the bank's status changes), and in the sandbox the
 * simulated bank's; the module has no worker (docs/virtual-accounts.md).
 */
export function virtualAccountServices(context: ModuleContext): VirtualAccountServices {
  const virtualAccounts = new VirtualAccountService(context.storage, context.provisioning, context.clock, context.endUsers);
  const lifecycle = virtualAccountStatusLifecycle(context.storage, context.clock, context.caches);
  context.providerEvents.register(lifecycle);
  const sandbox = context.config.apiEnvironment === 'sandbox' ? new SandboxStatuses<VirtualAccountRecord>(context.providerEvents, 'virtual_account.status_changed', lifecycle) : undefined;
  return { virtualAccounts, sandbox };
}

/** The virtual accounts plugin: docs/spec.md §4 /virtual-accounts and, in the sandbox, the simulated status change. */
export async function virtualAccountsPlugin(app: FastifyInstance, { virtualAccounts, sandbox }: VirtualAccountServices): Promise<void> {
  virtualAccountRoutes(app, virtualAccounts);
  if (sandbox) sandboxVirtualAccountRoutes(app, sandbox);
}

export { type VirtualAccountRow, type VirtualAccountWithOwner, activeVirtualAccountsIn, virtualAccountByReference, virtualAccountWithOwner } from './repository.js';
export { type VirtualAccountRecord } from './schemas.js';
export { type VirtualAccountService } from './service.js';
