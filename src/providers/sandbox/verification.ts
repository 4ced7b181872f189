import type { TestClockTime } from '../../clock.js';
import { newId } from '../../ids.js';
import { DomainError } from '../../errors.js';
import type { ProviderEventInbox } from '../inbox.js';
import type { VerificationOutcome } from '../kyc.js';
import { sandboxProviderName } from './name.js';
import type { FiredTimer, SandboxTimers } from './timers.js';

/** What the simulated KYC provider needs to know of the end-users module: the reference of a caller's end user. */
export interface EndUserReferences {
  referenceOf(customerId: string, endUserId: string): Promise<string>;
}

const eventTypeOf = { verified: 'end_user.verified', rejected: 'end_user.rejected', review_required: 'end_user.review_required' } as const;

/**
 * The simulated KYC provider's decisions. It reports them as provider events, applied at once through the inbox by
 * the verification lifecycle (modules/end-users/lifecycle.ts); it changes no status itself. Decisions come from its
 * magic names (registerEndUser announces one, kept as the end user's timer in the sandbox's schedule, timers.ts,
 * until SANDBOX_AUTO_SETTLE_MS has passed) and from POST /sandbox/end-users/{id}/verification, the dashboard and the
 * onboarding page.
 */
export class SandboxVerification<EndUserRecord = unknown> {
  constructor(
    private readonly inbox: ProviderEventInbox,
    private readonly endUsers: EndUserReferences,
    /** The sandbox's schedule; undefined outside the sandbox, where nothing is decided by a timer. */
    private readonly timers: SandboxTimers | undefined,
  ) {}

  /**
   * A decision on demand; the answer is the end user as the lifecycle left it. It replaces a decision the end user's
   * name had announced: that timer goes first, so a decision made cannot be overridden by the announced one, even if
   * this process stops right after making it (stopped before, the call failed and the announced decision is dropped).
   */
  async decide(customerId: string, endUserId: string, outcome: VerificationOutcome): Promise<EndUserRecord> {
    const reference = await this.endUsers.referenceOf(customerId, endUserId);
    await this.timers?.forget(endUserId.toLowerCase());
    return (await this.inbox.report({ provider: sandboxProviderName, type: eventTypeOf[outcome], reference, idempotencyKey: `simulation:${newId()}`, payload: {} })) as EndUserRecord;
  }

  /** The timer: reports the decisions announced by magic names once their time has come (one pass; how many fired). */
  async applyDueSandboxDecisions(): Promise<number> {
    return this.timers ? this.timers.fireDue('end_user', (timer) => this.reportAnnounced(timer)) : 0;
  }

  /** The timer, for the end users of a test clock's customer (an advance): every decision due by the clock's time. */
  async applyDueSandboxDecisionsOnClock(testClock: TestClockTime): Promise<void> {
    await this.timers?.fireAllDueOnClock('end_user', (timer) => this.reportAnnounced(timer), testClock);
  }

  /** Reports the decision a timer announced; the timer is done with either way (it returns no next step). */
  private async reportAnnounced(timer: FiredTimer): Promise<undefined> {
    const outcome = timer.answer as VerificationOutcome;
    try {
      const reference = await this.endUsers.referenceOf(timer.customer_id, timer.id);
      await this.inbox.report({ provider: sandboxProviderName, type: eventTypeOf[outcome], reference, idempotencyKey: `timer:${timer.id}`, payload: {} });
    } catch (error) {
      // Decided by hand in the meantime: the announced decision no longer applies.
      if (!(error instanceof DomainError)) throw error;
    }
    return undefined;
  }
}
