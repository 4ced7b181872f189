import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { accountStatuses, finalAccountStatuses, forgetCustomerAccounts, presentVirtualAccount } from '../accounts/index.js';
import type { ModuleContext } from '../module-context.js';
import { providerStatuses } from '../status-change.js';
import { findVirtualAccount, transitionVirtualAccountStatus } from './repository.js';
import type { VirtualAccountRecord } from './schemas.js';

/**
 * A virtual account's status, as its bank reports it (`virtual_account.status_changed`, reference: its
 * fr_virtual_account_id); closed is final. Its master's status is its own (a frozen master stops its virtual
 * accounts' payments too: payments/accounts.ts).
 */
export function virtualAccountStatuses(context: ModuleContext): SandboxStatuses<VirtualAccountRecord> | undefined {
  return providerStatuses(context, 'virtual_account', {
    statuses: accountStatuses,
    final: finalAccountStatuses,
    find: findVirtualAccount,
    findByReference: (db, reference) => db.selectFrom('virtual_accounts').selectAll().where('fr_virtual_account_id', '=', reference).executeTakeFirst(),
    referenceOf: (row) => row.fr_virtual_account_id,
    transition: transitionVirtualAccountStatus,
    present: presentVirtualAccount,
    changed: (customerId) => forgetCustomerAccounts(context.caches, customerId),
  });
}
