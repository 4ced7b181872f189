import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { sandboxVirtualAccountRoutes, virtualAccountRoutes } from './routes.js';
import { VirtualAccountService } from './service.js';

/** Registers the routes of this module, and in the sandbox its status simulation; it has no worker (docs/virtual-accounts.md). */
export function registerVirtualAccounts(app: FastifyInstance, context: ModuleContext): VirtualAccountService {
  const virtualAccounts = new VirtualAccountService(context.storage, context.provisioning, context.clock, context.endUsers);
  virtualAccountRoutes(app, virtualAccounts);
  if (context.config.apiEnvironment === 'sandbox') sandboxVirtualAccountRoutes(app, virtualAccounts);
  return virtualAccounts;
}

export { type VirtualAccountRow } from './repository.js';
export { type VirtualAccountRecord } from './schemas.js';
export { type VirtualAccountService } from './service.js';
