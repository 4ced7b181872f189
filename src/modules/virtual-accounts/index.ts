import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { sandboxVirtualAccountRoutes, virtualAccountRoutes } from './routes.js';
import { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { virtualAccountStatusLifecycle } from './lifecycle.js';
import type { VirtualAccountRecord } from './schemas.js';
import { VirtualAccountService } from './service.js';

/**
 * Registers the routes of this module, its status lifecycle, and in the sandbox its status simulation; it has no
 * worker (docs/virtual-accounts.md).
 */
export function registerVirtualAccounts(app: FastifyInstance, context: ModuleContext): VirtualAccountService {
  const virtualAccounts = new VirtualAccountService(context.storage, context.provisioning, context.clock, context.caches, context.endUsers);
  virtualAccountRoutes(app, virtualAccounts);
  const lifecycle = virtualAccountStatusLifecycle(context.storage, context.clock, context.caches);
  context.providerEvents.register(lifecycle);
  if (context.config.apiEnvironment === 'sandbox') {
    sandboxVirtualAccountRoutes(app, new SandboxStatuses<VirtualAccountRecord>(context.providerEvents, 'virtual_account.status_changed', lifecycle));
  }
  return virtualAccounts;
}

export { type VirtualAccountRow } from './repository.js';
export { type VirtualAccountRecord } from './schemas.js';
export { type VirtualAccountService } from './service.js';
