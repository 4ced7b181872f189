import type { FastifyInstance } from 'fastify';
import { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import type { ModuleContext } from '../module-context.js';
import { fiatAccountStatusLifecycle } from './lifecycle.js';
import { fiatAccountRoutes, sandboxFiatAccountRoutes } from './routes.js';
import type { FiatAccountRecord } from './schemas.js';
import type { FiatAccountService } from './service.js';

/**
 * The fiat accounts' status lifecycle, applying the bank's status changes, registered with the provider events inbox;
 * in the sandbox, the simulated bank that reports them.
 */
export function fiatAccountStatuses(context: ModuleContext): SandboxStatuses<FiatAccountRecord> | undefined {
  const lifecycle = fiatAccountStatusLifecycle(context.storage, context.clock, context.caches);
  context.providerEvents.register(lifecycle);
  return context.config.apiEnvironment === 'sandbox' ? new SandboxStatuses<FiatAccountRecord>(context.providerEvents, 'fiat_account.status_changed', lifecycle) : undefined;
}

/** The fiat accounts plugin: docs/spec.md §4 /fiat-accounts and, in the sandbox, the simulated status change. */
export async function fiatAccountsPlugin(app: FastifyInstance, { fiatAccounts, sandbox }: { fiatAccounts: FiatAccountService; sandbox: SandboxStatuses<FiatAccountRecord> | undefined }): Promise<void> {
  fiatAccountRoutes(app, fiatAccounts);
  if (sandbox) sandboxFiatAccountRoutes(app, sandbox);
}

export { type FiatAccountRow, type FiatAccountWithOwner, activeFiatAccountsIn, fiatAccountByReference, fiatAccountWithOwner } from './repository.js';
export { type FiatAccountRecord, ibanCountries } from './schemas.js';
export { FiatAccountService, findCustomerFiatAccount } from './service.js';
