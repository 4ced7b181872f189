import type { Clock } from '../../clock.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { accountStatuses, finalAccountStatuses, forgetCustomerAccounts, presentFiatAccount } from '../accounts/index.js';
import { ProviderStatusLifecycle } from '../status-change.js';
import { findFiatAccount, transitionFiatAccountStatus } from './repository.js';

/**
 * A fiat account's status, as its bank reports it (`fiat_account.status_changed`, reference: its fr_account_id):
 * active, frozen or closed, closed being final. Payments see a change at once in this process (payments/accounts.ts
 * caches statuses briefly).
 */
export function fiatAccountStatusLifecycle(storage: Storage, clock: Clock, caches: ReadCaches) {
  return new ProviderStatusLifecycle('fiat_account', storage, clock, {
    name: 'fiat account',
    statuses: accountStatuses,
    final: finalAccountStatuses,
    event: 'fiat_account.status_updated',
    find: findFiatAccount,
    findByReference: (db, reference) => db.selectFrom('fiat_accounts').selectAll().where('fr_account_id', '=', reference).executeTakeFirst(),
    referenceOf: (row) => row.fr_account_id,
    transition: transitionFiatAccountStatus,
    present: presentFiatAccount,
    changed: (customerId) => forgetCustomerAccounts(caches, customerId),
  });
}
