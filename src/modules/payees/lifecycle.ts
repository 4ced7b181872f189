import type { Clock } from '../../clock.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { forgetPayeeTarget } from './payee-target.js';
import { ProviderStatusLifecycle } from '../status-change.js';
import { presentPayee } from './presenter.js';
import { findPayee, transitionPayeeStatus } from './repository.js';
import { payeeStatuses } from './schemas.js';

/**
 * A payee's status, as the bank reports it (`payee.status_changed`, reference: its fr_payee_id). Both ways are
 * allowed: no payee status is final. Payments see it at once in this process (payments/accounts.ts caches briefly).
 */
export function payeeStatusLifecycle(storage: Storage, clock: Clock, caches: ReadCaches) {
  return new ProviderStatusLifecycle('payee', storage, clock, {
    name: 'payee',
    statuses: payeeStatuses,
    final: [],
    event: 'payee.status_updated',
    find: findPayee,
    findByReference: (db, reference) => db.selectFrom('payees').selectAll().where('fr_payee_id', '=', reference).executeTakeFirst(),
    referenceOf: (row) => row.fr_payee_id,
    transition: transitionPayeeStatus,
    present: presentPayee,
    changed: (customerId, id) => forgetPayeeTarget(caches, customerId, id),
  });
}
