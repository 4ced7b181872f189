import { normalizeTimestamp, type Clock, type CustomerClocks, type TestClockTime } from '../../clock.js';
import { testClockAdvanceHoldMs, testClockAdvanceMaxMs, testClockAttachmentCacheEntriesMax, testClockAttachmentCacheMs } from '../../config/limits.js';
import { DomainError, notFound, validationError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { SandboxTestClocksTable } from '../../storage/tables.js';
import { deleteTestClock, findTestClock, insertTestClock, moveTestClock, releaseTestClock, testClockOfCustomer } from './repository.js';
import type { CreateTestClockInput, TestClockRecord } from './schemas.js';

const present = (row: Omit<SandboxTestClocksTable, 'advancing_until'>): TestClockRecord => ({ id: row.id, name: row.name, frozen_time: row.frozen_time, created_at: row.created_at });

/**
 * Sandbox test clocks (docs/test-clocks.md): a customer's own time, frozen until advanced. A clock is attached to its
 * customer from creation until deleted (the API key's customer is the customer, as a Stripe clock is bound to its
 * customers when they are created), one at a time; while attached, the rules that follow test clocks read it through
 * testClockOf, and an advance runs the work that fell due before it answers.
 */
export class TestClocks implements CustomerClocks {
  private readonly advanceWork: ((clock: TestClockTime) => Promise<unknown>)[] = [];
  private readonly detachWork: ((clockId: string | null) => Promise<unknown>)[] = [];
  /** Which clock each customer has, if any: the hot paths read this; the clock's time is read fresh. */
  private readonly attached;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    caches: ReadCaches,
  ) {
    this.attached = caches.named<string, { clockId: string | null }>('test-clock-attachments', testClockAttachmentCacheMs, testClockAttachmentCacheEntriesMax);
  }

  async testClockOf(customerId: string): Promise<TestClockTime | undefined> {
    const attachment = await this.attached.getOrLoad(customerId, async () => ({ clockId: (await testClockOfCustomer(this.storage.db, customerId))?.id ?? null }));
    if (!attachment?.clockId) return undefined;
    const row = await findTestClock(this.storage.db, customerId, attachment.clockId);
    return row ? { clockId: row.id, now: new Date(row.frozen_time) } : undefined;
  }

  onAdvance(work: (clock: TestClockTime) => Promise<unknown>): void {
    this.advanceWork.push(work);
  }

  onDetach(work: (clockId: string | null) => Promise<unknown>): void {
    this.detachWork.push(work);
  }

  /** Gives the rows of every deleted clock back to the server clock (the reaper's pass runs it): none stays stranded. */
  async releaseDeletedClocks(): Promise<number> {
    for (const work of this.detachWork) await work(null);
    return 0;
  }

  async create(caller: AuthenticatedKey, input: CreateTestClockInput): Promise<TestClockRecord> {
    const now = this.clock.now().toISOString();
    const frozenTime = input.frozen_time === undefined ? now : timestampOf(input.frozen_time, '/frozen_time');
    const row: SandboxTestClocksTable = { id: newId(), customer_id: caller.customerId, name: input.name ?? null, frozen_time: frozenTime, created_at: now, advancing_until: null };
    if (!(await insertTestClock(this.storage.db, row))) {
      const existing = await testClockOfCustomer(this.storage.db, caller.customerId);
      throw new DomainError('TEST_CLOCK_ALREADY_ATTACHED', 'A test clock is already attached to your customer: advance it, or delete it first.', { test_clock_id: existing?.id ?? null });
    }
    this.attached.delete(caller.customerId);
    return present(row);
  }

  async get(caller: AuthenticatedKey, id: string): Promise<TestClockRecord> {
    return present(await this.require(caller, id));
  }

  /** The caller's clocks: the one attached, or none. */
  async list(caller: AuthenticatedKey): Promise<TestClockRecord[]> {
    const row = await testClockOfCustomer(this.storage.db, caller.customerId);
    return row ? [present(row)] : [];
  }

  /**
   * Moves the clock forward to `to`, then runs what fell due up to it (the customer's sandbox timers, the webhook
   * deliveries they cause) before answering. Never backwards, at most testClockAdvanceMaxMs at once.
   */
  async advance(caller: AuthenticatedKey, id: string, toText: string): Promise<TestClockRecord> {
    const to = timestampOf(toText, '/to');
    const row = await this.require(caller, id);
    if (to <= row.frozen_time) throw validationError([{ location: 'body', path: '/to', reason: `must be after the clock's frozen_time (${row.frozen_time}): a test clock only moves forward` }]);
    if (Date.parse(to) - Date.parse(row.frozen_time) > testClockAdvanceMaxMs) {
      throw validationError([{ location: 'body', path: '/to', reason: `must be at most ${testClockAdvanceMaxMs / 86_400_000} days after the clock's frozen_time (${row.frozen_time})` }]);
    }
    // A concurrent advance or delete moved the clock meanwhile, or another advance's work still runs: this one is
    // refused rather than moving it back, or running beside it (its claims are leases in the clock's time, which a
    // later advance would see run out).
    const now = this.clock.now();
    const holdUntil = new Date(now.getTime() + testClockAdvanceHoldMs).toISOString();
    if (!(await moveTestClock(this.storage.db, row.id, row.frozen_time, to, now.toISOString(), holdUntil))) {
      throw new DomainError('INVALID_STATUS_TRANSITION', 'The test clock moved, is advancing, or was deleted meanwhile: read it and advance again.', { to });
    }
    try {
      const time: TestClockTime = { clockId: row.id, now: new Date(to) };
      for (const work of this.advanceWork) await work(time);
    } finally {
      await releaseTestClock(this.storage.db, row.id, holdUntil);
    }
    return present({ ...row, frozen_time: to });
  }

  /** Deletes the clock, which detaches it: the customer's rules read the server clock again. */
  async delete(caller: AuthenticatedKey, id: string): Promise<void> {
    const row = await this.require(caller, id);
    if (!(await deleteTestClock(this.storage.db, caller.customerId, row.id, this.clock.now().toISOString()))) {
      // Not while an advance's work runs: that work holds deliveries leased in the clock's time, which the server
      // clock would read as run out, and another instance would attempt them again.
      if (await findTestClock(this.storage.db, caller.customerId, row.id)) {
        throw new DomainError('INVALID_STATUS_TRANSITION', 'The test clock is advancing: delete it once the advance has answered.', {});
      }
      throw notFound('test clock');
    }
    this.attached.delete(caller.customerId);
    for (const work of this.detachWork) await work(row.id);
  }

  private async require(caller: AuthenticatedKey, id: string): Promise<SandboxTestClocksTable> {
    const row = await findTestClock(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('test clock');
    return row;
  }
}

function timestampOf(text: string, path: string): string {
  const normalized = normalizeTimestamp(text);
  if (normalized === undefined) throw validationError([{ location: 'body', path, reason: 'must be an RFC 3339 date-time between the years 0000 and 9999' }]);
  return normalized;
}
