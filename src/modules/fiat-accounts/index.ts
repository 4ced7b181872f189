import type { FastifyInstance } from 'fastify';
import type { WithProviderStatuses } from '../status-change.js';
import { fiatAccountRoutes, sandboxFiatAccountRoutes } from './routes.js';
import type { FiatAccountRecord } from './schemas.js';
import type { FiatAccountService } from './service.js';

/** The fiat accounts plugin: docs/spec.md §4 /fiat-accounts and, in the sandbox, the simulated status change. */
export async function fiatAccountsPlugin(app: FastifyInstance, { fiatAccounts, sandbox }: WithProviderStatuses<{ fiatAccounts: FiatAccountService }, FiatAccountRecord>): Promise<void> {
  fiatAccountRoutes(app, fiatAccounts);
  if (sandbox) sandboxFiatAccountRoutes(app, sandbox);
}

export { type FiatAccountRow, type FiatAccountWithOwner, activeFiatAccountsIn, fiatAccountByReference, fiatAccountWithOwner } from './repository.js';
export { CreateFiatAccountBody, type CreateFiatAccountInput, type FiatAccountRecord, FiatAccountStatusBody, ibanCountries } from './schemas.js';
export { FiatAccountService, findCustomerFiatAccount } from './service.js';
export { fiatAccountStatuses } from './lifecycle.js';
