import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import { appendEvent } from '../../events/outbox.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { VerificationOutcome } from '../../providers/kyc.js';
import type { Storage } from '../../storage/database.js';
import { findCustomerById } from '../customers/index.js';
import { presentEndUser } from './presenter.js';
import { findEndUser, findEndUserByReference, transitionEndUserStatus, type EndUserRow } from './repository.js';
import type { EndUserRecord, EndUserStatus } from './schemas.js';

/**
 * The verification lifecycle (docs/spec.md §3 shows only pending_verification; docs/end-users.md has the rest):
 * pending_verification → verified | rejected | review_required; review_required → verified | rejected.
 * verified and rejected are final.
 */
export const allowedTransitions: Record<EndUserStatus, readonly EndUserStatus[]> = {
  pending_verification: ['verified', 'rejected', 'review_required'],
  review_required: ['verified', 'rejected'],
  verified: [],
  rejected: [],
};

const outcomeOf: Record<string, VerificationOutcome> = {
  'end_user.verified': 'verified',
  'end_user.rejected': 'rejected',
  'end_user.review_required': 'review_required',
};

/**
 * The end users' verification, whatever the KYC provider: its decisions arrive as the provider events
 * `end_user.verified`, `end_user.rejected` and `end_user.review_required` (reference: the end user's fr_end_user_id)
 * and move the status as allowedTransitions says, with `end_user.status_updated` (and `end_user.review_required`) in
 * the same transaction as the event's applied mark. A move the state machine forbids is refused (422).
 */
export class EndUserVerificationLifecycle implements Lifecycle<'end_user'> {
  readonly resource = 'end_user';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** The provider's reference of the caller's end user (404 for anyone else's). */
  async referenceOf(customerId: string, endUserId: string): Promise<string> {
    const row = await findEndUser(this.storage.db, customerId, endUserId.toLowerCase());
    if (!row) throw notFound('end user');
    return row.fr_end_user_id;
  }

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<EndUserRecord> {
    const row = await findEndUserByReference(this.storage.db, event.reference);
    const outcome = outcomeOf[event.type];
    if (!row || !outcome) throw notFound('end user');
    return this.decide(row, outcome, applied);
  }

  private async decide(row: EndUserRow, outcome: VerificationOutcome, applied: AppliedMark): Promise<EndUserRecord> {
    const from = row.status as EndUserStatus;
    if (!allowedTransitions[from].includes(outcome)) {
      throw new DomainError('INVALID_STATUS_TRANSITION', `An end user in status ${from} cannot become ${outcome}.`, { from, to: outcome });
    }
    const customer = await findCustomerById(this.storage.db, row.customer_id);
    if (!customer) throw notFound('end user');
    const now = this.clock.now();
    const final = outcome === 'verified' || outcome === 'rejected';
    const changes = {
      status: outcome,
      updated_at: now.toISOString(),
      ...(final ? { verification_completed_at: now.toISOString() } : {}),
    };
    const record = presentEndUser({ ...row, ...changes }, customer.fr_owner_business_id);
    await this.storage.transaction(async (trx) => {
      if (!(await transitionEndUserStatus(trx, row.id, from, changes))) {
        throw new DomainError('INVALID_STATUS_TRANSITION', 'The end user changed status meanwhile; read it again.', { from, to: outcome });
      }
      await applied.inTransaction(trx);
      const event = { customerId: row.customer_id, data: record, createdAt: now };
      await appendEvent(trx, { ...event, type: 'end_user.status_updated' });
      if (outcome === 'review_required') await appendEvent(trx, { ...event, type: 'end_user.review_required' });
    });
    return record;
  }
}
