import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { providerEventLeaseMs } from '../../src/config/limits.js';
import type { ReportedProviderEvent } from '../../src/providers/events.js';
import type { Storage } from '../../src/storage/database.js';
import { settleRequest } from '../helpers/money.js';
import { providerEventsSetup } from '../helpers/provider-events.js';
import { testDialect, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * An outcome reported and applied at once (`inbox.report`, docs/providers.md "Reporting outcomes"): its event is the
 * reporter's while the reporter applies it, and an event is failed only for a refusal that stands once every earlier
 * write has committed.
 */
describe('provider events reported and applied at once', () => {
  const setup = providerEventsSetup(() => ({ SANDBOX_AUTO_SETTLE_MS: 'off' }));
  const { applyDue, paymentOf, newPayment } = setup;
  let t: TestApp;
  let alice: TestCustomer;
  beforeAll(() => ({ t, alice } = setup));

  const eventsOf = (reference: string) =>
    t.storage.db.selectFrom('provider_events').selectAll().where('reference', '=', reference).orderBy('id').execute();
  const completion = (reference: string, idempotencyKey = `evt-${randomUUID()}`): ReportedProviderEvent => ({
    provider: 'test-bank',
    type: 'payment.completed',
    reference,
    idempotencyKey,
    payload: {},
  });

  /**
   * Runs `during` once, as the first database transaction (or, on PostgreSQL, money operation) begins after an event
   * of `reference` is written: while that event is being applied. `during` is given the storage's own transaction.
   * Answers a function that undoes the hook.
   */
  function whenApplying(reference: string, during: (transaction: Storage['transaction']) => Promise<void>): () => void {
    const transaction = t.storage.transaction.bind(t.storage);
    const perCustomer = t.storage.perCustomer.bind(t.storage);
    let pending = true;
    const beforeWork = async () => {
      if (pending && (await eventsOf(reference)).length > 0) {
        pending = false;
        await during(transaction);
      }
    };
    t.storage.transaction = (async (work) => {
      await beforeWork();
      return transaction(work);
    });
    t.storage.perCustomer = (async (customerId, work) => {
      await beforeWork();
      return perCustomer(customerId, work);
    });
    return () => {
      t.storage.transaction = transaction;
      t.storage.perCustomer = perCustomer;
    };
  }

  it('leaves an event to the simulation route that reported it while the route applies it: the worker finds nothing to claim', async () => {
    const payment = await newPayment('Reported');
    let claimedMeanwhile: number | undefined;
    const undo = whenApplying(payment.frPaymentId, async () => {
      claimedMeanwhile = await applyDue();
    });
    try {
      const settled = await settleRequest(t, alice, payment.id, 'completed');
      expect(settled.statusCode, settled.body).toBe(200);
      expect(settled.json().data.status).toBe('completed');
    } finally {
      undo();
    }
    expect(claimedMeanwhile).toBe(0);
    expect(await applyDue()).toBe(0);
    const [event] = await eventsOf(payment.frPaymentId);
    expect(event).toMatchObject({ state: 'applied', lease_until: null, error_code: null });
    expect(Number(event!.attempts)).toBe(0);
  });

  it('lets the worker take a reported event once its reporter has held it past its lease, as when the reporter died', async () => {
    const payment = await newPayment('Reporter gone');
    const claimed: number[] = [];
    const undo = whenApplying(payment.frPaymentId, async () => {
      claimed.push(await applyDue());
      t.clock.advance(providerEventLeaseMs);
      claimed.push(await applyDue());
    });
    try {
      // The reporter, back too late, finds its event applied by the worker.
      await expect(t.app.providerEvents.report(completion(payment.frPaymentId))).rejects.toMatchObject({ code: 'INVALID_STATUS_TRANSITION' });
    } finally {
      undo();
    }
    expect(claimed).toEqual([0, 1]);
    expect((await paymentOf(payment.id)).status).toBe('completed');
    expect((await eventsOf(payment.frPaymentId)).map((row) => row.state)).toEqual(['applied']);
  });

  it('gives a reported event whose application failed for another reason than a refusal to the worker at once', async () => {
    const payment = await newPayment('Given back');
    const transaction = t.storage.transaction.bind(t.storage);
    const perCustomer = t.storage.perCustomer.bind(t.storage);
    const unavailable = (() => Promise.reject(new Error('the database is away'))) as Storage['transaction'] & Storage['perCustomer'];
    t.storage.transaction = unavailable;
    t.storage.perCustomer = unavailable;
    try {
      await expect(t.app.providerEvents.report(completion(payment.frPaymentId))).rejects.toThrow('the database is away');
    } finally {
      t.storage.transaction = transaction;
      t.storage.perCustomer = perCustomer;
    }
    expect((await eventsOf(payment.frPaymentId))[0]).toMatchObject({ state: 'received', lease_until: null });
    expect(await applyDue()).toBe(1);
    expect((await paymentOf(payment.id)).status).toBe('completed');
  });

  it('applies one outcome reported twice at once a single time: the second report waits for the first and answers that it was applied', async () => {
    const payment = await newPayment('Reported twice');
    const event = completion(payment.frPaymentId);
    const answers = await Promise.all([t.app.providerEvents.report(event), t.app.providerEvents.report(event)]);
    expect(answers.filter((answer) => answer === undefined)).toHaveLength(1);
    expect(answers.find((answer) => answer !== undefined)).toMatchObject({ id: payment.id, status: 'completed' });
    expect((await eventsOf(payment.frPaymentId)).map((row) => [row.state, row.error_code])).toEqual([['applied', null]]);
  });

  describe.skipIf(testDialect !== 'sqlite')('on SQLite, whose group commit shows a transaction the uncommitted writes of its group', () => {
    beforeAll(async () => {
      // A foreign key checked only at COMMIT: a transaction that breaks it makes its whole group's COMMIT fail, then
      // fails again when it is run alone (the fault injection of test/storage/group-commit.test.ts).
      await sql`create table fault_parents (id text primary key)`.execute(t.storage.db);
      await sql`create table fault_children (parent_id text not null references fault_parents(id) deferrable initially deferred)`.execute(t.storage.db);
    });

    it('fails an event for a refusal only if the refusal still stands once the writes it saw have committed', async () => {
      const payment = await newPayment('Refusal on a rolled-back write');
      await t.app.providerEvents.record(completion(payment.frPaymentId));
      const [received] = await eventsOf(payment.frPaymentId);
      // Another caller applies the same event in the group the worker's transaction joins; that group's COMMIT then
      // fails, and the other caller's work with it. The worker saw the event applied and was refused.
      let otherApplier: Promise<unknown> | undefined;
      const undo = whenApplying(payment.frPaymentId, async (transaction) => {
        otherApplier = transaction(async (trx) => {
          await trx.updateTable('provider_events').set({ state: 'applied', lease_until: null }).where('id', '=', received!.id).execute();
          await sql`insert into fault_children (parent_id) values (${randomUUID()})`.execute(trx);
        });
        otherApplier.catch(() => undefined);
      });
      try {
        expect(await applyDue()).toBe(1);
      } finally {
        undo();
      }
      await expect(otherApplier).rejects.toThrow(/FOREIGN KEY/i);
      expect((await eventsOf(payment.frPaymentId)).map((row) => [row.state, row.error_code])).toEqual([['applied', null]]);
      expect((await paymentOf(payment.id)).status).toBe('completed');
    });
  });
});
