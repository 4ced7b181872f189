import { sql, type RawBuilder, type Transaction } from 'kysely';
import { clockRowsToRelease } from '../../storage/test-clock-rows.js';
import type { Clock, CustomerClocks, TestClockTime } from '../../clock.js';
import type { Config } from '../../config/config.js';
import { settlementBatchSize, testClockAdvanceBatchesMax } from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import type { NewResourceRows } from '../../ledger/unit-of-work.js';
import type { Storage } from '../../storage/database.js';
import type { Database, SandboxTimersTable } from '../../storage/tables.js';
import { claimDue } from '../../workers/claim.js';

export type TimedResource = SandboxTimersTable['resource'];

/** A timer as it fires: the resource it answers for, and the answer decided in advance if there is one. */
export type FiredTimer = Pick<SandboxTimersTable, 'id' | 'customer_id' | 'answer'>;

/**
 * Keeps an answer the provider announced when a resource was created (an end user's magic name) until it is due.
 * Asked with the customer before the transaction that creates the resource (it reads the customer's test clock), it
 * gives the writer of the timer in that transaction; a writer of nothing for any other provider.
 */
export type AnnouncedAnswers = (customerId: string) => Promise<AnnouncedAnswerWriter>;
type AnnouncedAnswerWriter = (trx: Transaction<Database>, id: string, answer: string) => Promise<void>;

export const noAnnouncedAnswers: AnnouncedAnswers = async () => async () => undefined;

/**
 * What the sandbox does when a resource's timer fires: reports its answer, and returns when it answers next (an OTC
 * order's second step, nextStep(firedAt)), or nothing when it is done with the resource. `firedAt` is when the step
 * happens: the server's now, or in a test clock's time the step's due time, so that one advance past several steps
 * takes each at its time.
 */
export type TimerStep = (timer: FiredTimer, firedAt: Date) => Promise<Date | undefined>;

/** The sandbox's timers in a sandbox deployment (SANDBOX_AUTO_SETTLE_MS, SETTLEMENT_LEASE_SECONDS); none in production. */
export function sandboxTimersOf(
  config: Pick<Config, 'apiEnvironment' | 'sandboxAutoSettleMs' | 'settlementLeaseMs'>,
  storage: Storage,
  clock: Clock,
  customerClocks: CustomerClocks,
): SandboxTimers | undefined {
  return config.apiEnvironment === 'sandbox' ? new SandboxTimers(storage, clock, customerClocks, config.sandboxAutoSettleMs, config.settlementLeaseMs) : undefined;
}

/**
 * The sandbox's schedule (table `sandbox_timers`, which only this adapter reads or writes): when the simulated bank,
 * custodian and liquidity provider answer for a payment, a wallet transfer or an OTC order, and when the simulated
 * KYC provider decides an end user whose name announced its decision. A new resource's timer is
 * written in the unit of work that creates it, so neither exists without the other; the resource tables hold none
 * of it. One mechanism fires every kind: the due timers are claimed (workers/claim.ts), each moved ahead by the lease
 * (SETTLEMENT_LEASE_SECONDS) so several instances never answer for one resource at once, and one that was not
 * answered (its instance stopped, the database was away) fires again once the lease has run out.
 */
export class SandboxTimers {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly customerClocks: CustomerClocks,
    /** How long after its creation the sandbox answers for a resource (SANDBOX_AUTO_SETTLE_MS); undefined = never by itself. */
    private readonly answerAfterMs: number | undefined,
    /** How long a fired timer is its instance's (SETTLEMENT_LEASE_SECONDS). */
    private readonly leaseMs: number,
  ) {}

  /**
   * The timer rows of a new `resource`, for the unit of work that creates it; none when the sandbox answers only when
   * asked. A customer with a test clock attached has its timers in the clock's time (docs/test-clocks.md): only an
   * advance of that clock fires them.
   */
  rowsFor(resource: TimedResource): NewResourceRows {
    return async (id, customerId, now) => {
      const due = await this.dueOf(customerId, now);
      return due === undefined ? [] : [{ table: 'sandbox_timers', values: { id, resource, customer_id: customerId, answer: null, ...due } }];
    };
  }

  /** The announced answers of a new `resource` (SANDBOX_AUTO_SETTLE_MS after its creation, in the customer's time); none when the sandbox answers only when asked. */
  announcedAnswers(resource: TimedResource): AnnouncedAnswers {
    return async (customerId) => {
      const due = await this.dueOf(customerId, this.clock.now());
      if (due === undefined) return async () => undefined;
      return async (trx, id, answer) => {
        await trx.insertInto('sandbox_timers').values({ id, resource, customer_id: customerId, answer, ...due }).execute();
      };
    };
  }

  /** When a timer set `now` is due, in its customer's time, and the test clock that is (null: the server's); none when the sandbox answers only when asked. */
  private async dueOf(customerId: string, now: Date): Promise<Pick<SandboxTimersTable, 'due_at' | 'clock_id'> | undefined> {
    if (this.answerAfterMs === undefined) return undefined;
    const testClock = await this.customerClocks.testClockOf(customerId);
    return { due_at: this.after(testClock?.now ?? now)!.toISOString(), clock_id: testClock?.clockId ?? null };
  }

  /** When a step taken at `firedAt` is followed by the next (SANDBOX_AUTO_SETTLE_MS later), if the sandbox answers by itself. */
  nextStep(firedAt: Date): Date | undefined {
    return this.after(firedAt);
  }

  private after(now: Date): Date | undefined {
    return this.answerAfterMs === undefined ? undefined : new Date(now.getTime() + this.answerAfterMs);
  }

  /** A simulation route's answer for the resource `id`: once it is given, the resource's timer has nothing left to do. */
  async answered<T>(id: string, answer: () => Promise<T>): Promise<T> {
    const given = await answer();
    await this.forget(id);
    return given;
  }

  /** The resource `id` needs no answer from its timer any more. */
  async forget(id: string): Promise<void> {
    await this.storage.db.deleteFrom('sandbox_timers').where('id', '=', id).execute();
  }

  /**
   * One pass: fires the due timers of `resource`, oldest first; returns how many it claimed. A resource that moved on
   * meanwhile (INVALID_STATUS_TRANSITION) needs no answer any more. Any other failure does not hold up the rest of
   * the batch: the first one is thrown after it, for the worker to log, and its timer fires again after the lease.
   */
  fireDue(resource: TimedResource, step: TimerStep): Promise<number> {
    return this.fire(sql`resource = ${resource} and clock_id is null`, this.clock.now(), step, false);
  }

  /**
   * fireDue for the timers of `resource` in a test clock's time, by the clock's time (an advance): a batch at a time
   * until none is due, each step at its due time, so a step due again by the clock's time (an OTC order's credit) is
   * taken in the same advance. At most testClockAdvanceBatchesMax batches.
   */
  async fireAllDueOnClock(resource: TimedResource, step: TimerStep, testClock: TestClockTime): Promise<void> {
    for (let batch = 0; batch < testClockAdvanceBatchesMax; batch += 1) {
      if ((await this.fire(sql`resource = ${resource} and clock_id = ${testClock.clockId}`, testClock.now, step, true)) === 0) return;
    }
  }

  /** A deleted test clock's timers keep their due times, read by the server clock from now on. */
  async releaseClock(clockId: string | null): Promise<void> {
    await this.storage.db.updateTable('sandbox_timers').set({ clock_id: null }).where(clockRowsToRelease('sandbox_timers', clockId)).execute();
  }

  /** `atDueTime`: each step is taken at its timer's due time (a test clock's), not at `now`. */
  private async fire(due: RawBuilder<unknown>, now: Date, step: TimerStep, atDueTime: boolean): Promise<number> {
    const claimed = await claimDue<SandboxTimersTable & { was_due_at: string }>(this.storage, {
      table: 'sandbox_timers',
      due,
      leaseColumn: 'due_at',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + this.leaseMs).toISOString(),
      orderBy: 'due_at',
      limit: settlementBatchSize,
      previousLeaseAs: 'was_due_at',
    });
    let firstFailure: { error: unknown } | undefined;
    for (const timer of claimed) {
      try {
        await this.afterFiring(timer, await step(timer, atDueTime ? new Date(timer.was_due_at) : now).catch(movedOn));
      } catch (error) {
        firstFailure ??= { error };
      }
    }
    if (firstFailure !== undefined) throw firstFailure.error;
    return claimed.length;
  }

  /** The timer fires again at `next`, or is gone; only while it is still this claim's (its due_at the lease it took). */
  private async afterFiring(timer: SandboxTimersTable, next: Date | undefined): Promise<void> {
    const db = this.storage.db;
    if (next === undefined) {
      await db.deleteFrom('sandbox_timers').where('id', '=', timer.id).where('due_at', '=', timer.due_at).execute();
    } else {
      await db.updateTable('sandbox_timers').set({ due_at: next.toISOString() }).where('id', '=', timer.id).where('due_at', '=', timer.due_at).execute();
    }
  }
}

/** A step refused because its resource moved on meanwhile (settled by a simulation, say) has nothing left to do. */
function movedOn(error: unknown): undefined {
  if (error instanceof DomainError && error.code === 'INVALID_STATUS_TRANSITION') return undefined;
  throw error;
}
