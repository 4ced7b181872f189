import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createVirtualAccount, deposit, fiatBalance, settle, virtualBalance } from '../helpers/money.js';
import { createTestApp, postgresUrl, testDialect, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * Issue 4: "200 parallel payments of 10.00 against a balance of 1,000.00 (fee 0): exactly 100 succeed, 100 get
 * 422, the final balance is 0.00 and `ledger verify` passes". Fee 0: INTERNAL transfers between two own accounts
 * (default INTERNAL schedule, docs/fees.md). In-process here, on SQLite and PostgreSQL; the two-process SQLite
 * case is test/e2e/payments-two-processes.test.ts.
 */
/** Generous: on PostgreSQL one customer's payments queue on its row lock, and a loaded CI machine is slow. */
const concurrencyTestTimeoutMs = 120_000;
/** How long the busy customer's payments may take to reach their wait on the held row (a loaded machine is slow). */
const lockWaitDeadlineMs = 30_000;

describe(`concurrent payments on ${testDialect}`, { timeout: concurrencyTestTimeoutMs }, () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    csrf = await t.csrfToken(alice.key);
  });
  afterAll(async () => t.close());

  const payment = (from: string, to: string, reference: string) =>
    t.app.inject({
      method: 'POST',
      url: '/payments',
      headers: { 'x-api-key': alice.key, 'x-csrf-token': csrf },
      payload: { fromAccountId: from, toAccountId: to, amount: 10, currency: 'EUR', reference },
    });

  it('200 parallel payments of 10.00 against 1,000.00: exactly 100 succeed, 100 get 422, balance 0.00, ledger verifies', async () => {
    const from = await createFiatAccount(t, alice, { accountName: 'Source', currency: 'EUR' });
    const to = await createFiatAccount(t, alice, { accountName: 'Target', currency: 'EUR' });
    await deposit(t, alice, from.id, 1000);

    const responses = await Promise.all(Array.from({ length: 200 }, (_, index) => payment(from.id, to.id, `Parallel ${index}`)));
    const statuses = responses.map((response) => response.statusCode);
    const unexpected = responses.filter((response) => response.statusCode !== 201 && response.statusCode !== 422).map((response) => response.body);
    expect(unexpected).toEqual([]);
    expect(statuses.filter((status) => status === 201)).toHaveLength(100);
    expect(statuses.filter((status) => status === 422)).toHaveLength(100);
    for (const response of responses.filter((candidate) => candidate.statusCode === 422)) {
      expect(response.json().error.code).toBe('INSUFFICIENT_FUNDS');
    }
    expect(await fiatBalance(t, alice, from.id)).toBe(0);

    // Exactly one outgoing record per accepted payment, with a gapless balance chain 1000 → 0.
    const history = await t.request({ url: `/transactions?account_id=${from.id}&direction=outgoing&limit=100`, key: alice.key });
    expect(history.json().meta.pagination.total).toBe(100);
    const afters = (history.json().data as { balance_before: number; balance_after: number }[]).map((record) => [record.balance_before, record.balance_after]);
    expect(afters.map(([, after]) => after).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 100 }, (_, index) => index * 10));
    for (const [before, after] of afters) expect(before! - after!).toBe(10);
    // The dense history sequence has no gap or duplicate: one deposit + 100 payments.
    const all = await t.request({ url: '/transactions?limit=100&page=2', key: alice.key });
    expect(all.json().meta.pagination.total).toBe(101);
    expect(all.json().data).toHaveLength(1);
    expect(all.json().data[0].transaction_type).toBe('deposit');

    const report = await verifyLedger(t.storage);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.system_balances_minor['suspense:EUR']).toBe('100000');

    // Settling every accepted payment, concurrently too, moves the whole 1,000.00 to the target.
    const accepted = responses.filter((response) => response.statusCode === 201).map((response) => response.json().data.id as string);
    await Promise.all(accepted.map((id) => settle(t, alice, id, 'completed')));
    expect(await fiatBalance(t, alice, to.id)).toBe(1000);
    const settled = await verifyLedger(t.storage);
    expect(settled.problems).toEqual([]);
    expect(settled.system_balances_minor['suspense:EUR'] ?? '0').toBe('0');
  });

  it('parallel payments from a master and its virtual account never spend the virtual account’s money twice', async () => {
    const master = await createFiatAccount(t, alice, { accountName: 'Master', currency: 'EUR' });
    const to = await createFiatAccount(t, alice, { accountName: 'Target 2', currency: 'EUR' });
    const virtual = await createVirtualAccount(t, alice, master.id);
    await deposit(t, alice, master.id, 500);
    await deposit(t, alice, virtual.id, 500);

    const requests = Array.from({ length: 200 }, (_, index) => payment(index % 2 === 0 ? master.id : virtual.id, to.id, `Mixed ${index}`));
    const responses = await Promise.all(requests);
    const fromMaster = responses.filter((_, index) => index % 2 === 0);
    const fromVirtual = responses.filter((_, index) => index % 2 === 1);
    expect(responses.filter((response) => response.statusCode !== 201 && response.statusCode !== 422).map((response) => response.body)).toEqual([]);
    expect(fromMaster.filter((response) => response.statusCode === 201)).toHaveLength(50);
    expect(fromVirtual.filter((response) => response.statusCode === 201)).toHaveLength(50);
    expect(await fiatBalance(t, alice, master.id)).toBe(0);
    expect(await virtualBalance(t, alice, virtual.id)).toBe(0);
    const report = await verifyLedger(t.storage);
    expect(report.problems).toEqual([]);
  });

  it('parallel deposits and payments keep every balance equal to its postings', async () => {
    const from = await createFiatAccount(t, alice, { accountName: 'Busy', currency: 'EUR' });
    const to = await createFiatAccount(t, alice, { accountName: 'Busy target', currency: 'EUR' });
    await deposit(t, alice, from.id, 100);
    // 50 deposits of 10.00 race 100 payments of 10.00: whatever the interleaving, 10 + 50 payments at most succeed.
    const work = [
      ...Array.from({ length: 50 }, () => t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${from.id}/deposits`, key: alice.key, csrf, body: { amount: 10 } })),
      ...Array.from({ length: 100 }, (_, index) => payment(from.id, to.id, `Busy ${index}`)),
    ];
    const responses = await Promise.all(work);
    expect(responses.filter((response) => response.statusCode !== 201 && response.statusCode !== 422).map((response) => response.body)).toEqual([]);
    const paid = responses.slice(50).filter((response) => response.statusCode === 201).length;
    expect(responses.slice(0, 50).every((response) => response.statusCode === 201)).toBe(true);
    expect(paid).toBeLessThanOrEqual(60);
    expect(await fiatBalance(t, alice, from.id)).toBe(600 - paid * 10);
    const report = await verifyLedger(t.storage);
    expect(report.problems).toEqual([]);
  });
});

/**
 * The sessions waiting, directly or behind another waiter, on the locks `blockerPid` holds. Asked from a session
 * outside any transaction: PostgreSQL freezes pg_stat_activity for the rest of a transaction at its first read, so
 * a backend the pool connects later would never show there.
 */
async function sessionsWaitingBehind(observer: pg.Client, blockerPid: number): Promise<number> {
  const { rows } = await observer.query<{ waiting: number }>(
    `with recursive behind(pid) as (
       select pid from pg_stat_activity where $1 = any(pg_blocking_pids(pid))
       union
       select activity.pid from pg_stat_activity activity join behind on behind.pid = any(pg_blocking_pids(activity.pid))
     ) select count(*)::int as waiting from behind`,
    [blockerPid],
  );
  return rows[0]!.waiting;
}

describe.skipIf(testDialect !== 'postgres')('one busy customer and the connection pool (PostgreSQL)', { timeout: concurrencyTestTimeoutMs }, () => {
  it('keeps serving other customers while one customer’s payments wait on a locked account: they take at most two pooled connections', async () => {
    const t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' }, poolSize: 4 });
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(t.storage.db);
    const blocker = new pg.Client({ connectionString: postgresUrl(), options: `-c search_path=${rows[0]!.schema}` });
    const observer = new pg.Client({ connectionString: postgresUrl() });
    try {
      const busy = await t.createCustomer('Busy Ltd');
      const calm = await t.createCustomer('Calm Ltd');
      const busyFrom = await createFiatAccount(t, busy);
      const busyTo = await createFiatAccount(t, busy);
      const calmFrom = await createFiatAccount(t, calm);
      const calmTo = await createFiatAccount(t, calm);
      await deposit(t, busy, busyFrom.id, 1000);
      await deposit(t, calm, calmFrom.id, 1000);
      const busyCsrf = await t.csrfToken(busy.key);

      // Another session holds the busy customer's row: its money operations wait inside the database.
      await Promise.all([blocker.connect(), observer.connect()]);
      await blocker.query('begin');
      await blocker.query('select 1 from customers where id = $1 for update', [busy.id]);
      const { rows: [held] } = await blocker.query<{ pid: number }>('select pg_backend_pid() as pid');
      // 20 payments in flight at once; only two may hold a pooled connection, the rest wait in the instance.
      let answered = 0;
      const waiting = Array.from({ length: 20 }, (_, index) =>
        t.app
          .inject({
            method: 'POST',
            url: '/payments',
            headers: { 'x-api-key': busy.key, 'x-csrf-token': busyCsrf },
            payload: { fromAccountId: busyFrom.id, toAccountId: busyTo.id, amount: 1, currency: 'EUR', reference: `busy ${index}` },
          })
          .finally(() => (answered += 1)),
      );
      // The waits happen inside PostgreSQL, another process: polled, with a deadline.
      await vi.waitFor(async () => expect(await sessionsWaitingBehind(observer, held!.pid)).toBeGreaterThanOrEqual(2), { timeout: lockWaitDeadlineMs, interval: 20 });

      // The calm customer reads and pays meanwhile, well within the pool's wait timeout.
      const started = Date.now();
      expect((await t.request({ url: '/fiat-accounts', key: calm.key })).statusCode).toBe(200);
      const paid = await t.request({ method: 'POST', url: '/payments', key: calm.key, csrf: true, body: { fromAccountId: calmFrom.id, toAccountId: calmTo.id, amount: 1, currency: 'EUR', reference: 'calm' } });
      expect(paid.statusCode, paid.body).toBe(201);
      expect(Date.now() - started).toBeLessThan(5000);
      // ...while every busy payment still waited, on no more than two connections.
      expect(answered).toBe(0);
      expect(await sessionsWaitingBehind(observer, held!.pid)).toBe(2);

      await blocker.query('commit');
      const settled = await Promise.all(waiting);
      expect(settled.map((response) => response.statusCode)).toEqual(settled.map(() => 201));
      expect(await fiatBalance(t, busy, busyFrom.id)).toBe(980);
      expect((await verifyLedger(t.storage)).problems).toEqual([]);
    } finally {
      await blocker.end().catch(() => undefined);
      await observer.end().catch(() => undefined);
      await t.close();
    }
  });
});
