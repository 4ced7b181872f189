import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { sandboxVirtualAccountRoutes, virtualAccountRoutes } from './routes.js';
import { VirtualAccountService } from './service.js';

export interface VirtualAccountServices {
  virtualAccounts: VirtualAccountService;
  /** The status simulation routes exist in the sandbox only. */
  sandbox: boolean;
}

/** The virtual account service; the module has no worker (docs/virtual-accounts.md). */
export function virtualAccountServices(context: ModuleContext): VirtualAccountServices {
  const virtualAccounts = new VirtualAccountService(context.storage, context.provisioning, context.clock, context.caches, context.endUsers);
  return { virtualAccounts, sandbox: context.config.apiEnvironment === 'sandbox' };
}

/** The virtual accounts plugin: docs/spec.md §4 /virtual-accounts and, in the sandbox, the simulated status change. */
export async function virtualAccountsPlugin(app: FastifyInstance, { virtualAccounts, sandbox }: VirtualAccountServices): Promise<void> {
  virtualAccountRoutes(app, virtualAccounts);
  if (sandbox) sandboxVirtualAccountRoutes(app, virtualAccounts);
}

export { type VirtualAccountRow, activeVirtualAccountsIn } from './repository.js';
export { type VirtualAccountRecord } from './schemas.js';
export { type VirtualAccountService } from './service.js';
