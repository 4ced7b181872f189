import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { accountStatuses, finalAccountStatuses, forgetCustomerAccounts, presentFiatAccount } from '../accounts/index.js';
import type { ModuleContext } from '../module-context.js';
import { providerStatuses } from '../status-change.js';
import { findFiatAccount, transitionFiatAccountStatus } from './repository.js';
import type { FiatAccountRecord } from './schemas.js';

/**
 * A fiat account's status, as its bank reports it (`fiat_account.status_changed`, reference: its fr_account_id):
 * active, frozen or closed, closed being final. Payments see a change at once in this process (payments/accounts.ts
 * caches statuses briefly).
 */
export function fiatAccountStatuses(context: ModuleContext): SandboxStatuses<FiatAccountRecord> | undefined {
  return providerStatuses(context, 'fiat_account', {
    statuses: accountStatuses,
    final: finalAccountStatuses,
    find: findFiatAccount,
    findByReference: (db, reference) => db.selectFrom('fiat_accounts').selectAll().where('fr_account_id', '=', reference).executeTakeFirst(),
    referenceOf: (row) => row.fr_account_id,
    transition: transitionFiatAccountStatus,
    present: presentFiatAccount,
    changed: (customerId) => forgetCustomerAccounts(context.caches, customerId),
  });
}
