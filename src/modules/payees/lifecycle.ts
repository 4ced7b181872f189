import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import type { ModuleContext } from '../module-context.js';
import { providerStatuses } from '../status-change.js';
import { forgetPayeeTarget } from './payee-target.js';
import { presentPayee } from './presenter.js';
import { findPayee, transitionPayeeStatus } from './repository.js';
import { payeeStatuses as statuses, type PayeeRecord } from './schemas.js';

/**
 * A payee's status, as the bank reports it (`payee.status_changed`, reference: its fr_payee_id). Both ways are
 * allowed: no payee status is final. Payments see it at once in this process (payments/accounts.ts caches briefly).
 */
export function payeeStatuses(context: ModuleContext): SandboxStatuses<PayeeRecord> | undefined {
  return providerStatuses(context, 'payee', {
    statuses,
    final: [],
    find: findPayee,
    findByReference: (db, reference) => db.selectFrom('payees').selectAll().where('fr_payee_id', '=', reference).executeTakeFirst(),
    referenceOf: (row) => row.fr_payee_id,
    transition: transitionPayeeStatus,
    present: presentPayee,
    changed: (customerId, id) => forgetPayeeTarget(context.caches, customerId, id),
  });
}
