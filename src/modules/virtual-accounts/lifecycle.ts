import type { Clock } from '../../clock.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { accountStatuses, finalAccountStatuses, forgetCustomerAccounts, presentVirtualAccount } from '../accounts/index.js';
import { ProviderStatusLifecycle } from '../status-change.js';
import { findVirtualAccount, transitionVirtualAccountStatus } from './repository.js';

/**
 * A virtual account's status, as its bank reports it (`virtual_account.status_changed`, reference: its
 * fr_virtual_account_id); closed is final. Its master's status is its own (a frozen master stops its virtual
 * accounts' payments too: payments/accounts.ts).
 */
export function virtualAccountStatusLifecycle(storage: Storage, clock: Clock, caches: ReadCaches) {
  return new ProviderStatusLifecycle('virtual_account', storage, clock, {
    name: 'virtual account',
    statuses: accountStatuses,
    final: finalAccountStatuses,
    event: 'virtual_account.status_updated',
    find: findVirtualAccount,
    findByReference: (db, reference) => db.selectFrom('virtual_accounts').selectAll().where('fr_virtual_account_id', '=', reference).executeTakeFirst(),
    referenceOf: (row) => row.fr_virtual_account_id,
    transition: transitionVirtualAccountStatus,
    present: presentVirtualAccount,
    changed: (customerId) => forgetCustomerAccounts(caches, customerId),
  });
}
