import { sql } from 'kysely';
import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import { appendEvent } from '../../events/outbox.js';
import type { VerificationOutcome } from '../../providers/kyc.js';
import type { Storage } from '../../storage/database.js';
import { claimDue } from '../../workers/claim.js';
import { findCustomerById } from '../customers/index.js';
import { presentEndUser } from './presenter.js';
import { findEndUser, transitionEndUserStatus, type EndUserRow } from './repository.js';
import type { EndUserRecord, EndUserStatus } from './schemas.js';
import { sandboxDecisionBatchSize, sandboxDecisionLeaseMs } from '../../config/limits.js';

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

export class VerificationService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** Applies a provider decision to the caller's end user; an illegal move answers 422 and changes nothing. */
  async decide(customerId: string, endUserId: string, outcome: VerificationOutcome): Promise<EndUserRecord> {
    const row = await findEndUser(this.storage.db, customerId, endUserId.toLowerCase());
    if (!row) throw notFound('end user');
    return this.apply(row, outcome);
  }

  /**
   * Sandbox: applies the decisions the simulated provider announced, once their time has come. Each is claimed first
   * (its sandbox_decide_at moves a lease ahead, workers/claim.ts), so several instances never decide one at once.
   */
  async applyDueSandboxDecisions(): Promise<number> {
    const now = this.clock.now();
    const due = await claimDue<EndUserRow>(this.storage, {
      table: 'end_users',
      due: sql`sandbox_decision is not null`,
      leaseColumn: 'sandbox_decide_at',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + sandboxDecisionLeaseMs).toISOString(),
      orderBy: 'sandbox_decide_at',
      limit: sandboxDecisionBatchSize,
    });
    for (const row of due) {
      const outcome = row.sandbox_decision as VerificationOutcome;
      await this.apply(row, outcome).catch((error: unknown) => {
        // Decided by hand in the meantime: the announced decision no longer applies.
        if (!(error instanceof DomainError)) throw error;
      });
      await this.storage.db.updateTable('end_users').set({ sandbox_decision: null, sandbox_decide_at: null }).where('id', '=', row.id).execute();
    }
    return due.length;
  }

  private async apply(row: EndUserRow, outcome: VerificationOutcome): Promise<EndUserRecord> {
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
      sandbox_decision: null,
      sandbox_decide_at: null,
    };
    const record = presentEndUser({ ...row, ...changes }, customer.fr_owner_business_id);
    await this.storage.transaction(async (trx) => {
      if (!(await transitionEndUserStatus(trx, row.id, from, changes))) {
        throw new DomainError('INVALID_STATUS_TRANSITION', 'The end user changed status meanwhile; read it again.', { from, to: outcome });
      }
      const event = { customerId: row.customer_id, data: record, createdAt: now };
      await appendEvent(trx, { ...event, type: 'end_user.status_updated' });
      if (outcome === 'review_required') await appendEvent(trx, { ...event, type: 'end_user.review_required' });
    });
    return record;
  }
}
