import { sql } from 'kysely';
import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { sandboxDecisionBatchSize, sandboxDecisionLeaseMs } from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import type { Storage } from '../../storage/database.js';
import type { EndUsersTable } from '../../storage/tables.js';
import { claimDue } from '../../workers/claim.js';
import type { ProviderEventInbox } from '../inbox.js';
import type { VerificationOutcome } from '../kyc.js';
import { sandboxProviderName } from './name.js';

/** What the simulated KYC provider needs to know of the end-users module: the reference of a caller's end user. */
export interface EndUserReferences {
  referenceOf(customerId: string, endUserId: string): Promise<string>;
}

const eventTypeOf = { verified: 'end_user.verified', rejected: 'end_user.rejected', review_required: 'end_user.review_required' } as const;

/**
 * The simulated KYC provider's decisions. It reports them as provider events, applied at once through the inbox by
 * the verification lifecycle (modules/end-users/lifecycle.ts); it changes no status itself. Decisions come from its
 * magic names (registerEndUser announces one, kept in the end user's sandbox_decision until SANDBOX_AUTO_SETTLE_MS
 * has passed: its timer) and from POST /sandbox/end-users/{id}/verification, the dashboard and the onboarding page.
 */
export class SandboxVerification<EndUserRecord = unknown> {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly inbox: ProviderEventInbox,
    private readonly endUsers: EndUserReferences,
  ) {}

  /** A decision on demand; the answer is the end user as the lifecycle left it. */
  async decide(customerId: string, endUserId: string, outcome: VerificationOutcome): Promise<EndUserRecord> {
    const reference = await this.endUsers.referenceOf(customerId, endUserId);
    return (await this.inbox.report({ provider: sandboxProviderName, type: eventTypeOf[outcome], reference, idempotencyKey: `simulation:${newId()}`, payload: {} })) as EndUserRecord;
  }

  /**
   * The timer: reports the decisions announced by magic names once their time has come. Each is claimed first (its
   * sandbox_decide_at moves a lease ahead, workers/claim.ts), so several instances never report one at once.
   */
  async applyDueSandboxDecisions(): Promise<number> {
    const now = this.clock.now();
    const due = await claimDue<EndUsersTable>(this.storage, {
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
      const event = { provider: sandboxProviderName, type: eventTypeOf[outcome], reference: row.fr_end_user_id, idempotencyKey: `timer:${row.id}`, payload: {} };
      await this.inbox.report(event).catch((error: unknown) => {
        // Decided by hand in the meantime: the announced decision no longer applies.
        if (!(error instanceof DomainError)) throw error;
      });
      await this.storage.db.updateTable('end_users').set({ sandbox_decision: null, sandbox_decide_at: null }).where('id', '=', row.id).execute();
    }
    return due.length;
  }
}
