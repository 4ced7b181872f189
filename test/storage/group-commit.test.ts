import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { deposit, payRequest } from '../helpers/money.js';
import { insertCustomerRow } from '../helpers/rows.js';
import { createTestApp, freshStorage, testDialect, type TestApp } from '../helpers/test-app.js';

/** SQLite group commit (src/storage/sqlite-group-commit.ts, docs/decisions/0004-sqlite-group-commit.md). */

describe.skipIf(testDialect !== 'sqlite')('SQLite group commit', () => {
  let storage: Storage;
  let drop: () => Promise<void>;
  /** A connection of its own, as another process would have: it sees only what is committed. */
  let outside: BetterSqlite3.Database;

  beforeAll(async () => {
    ({ storage, drop } = await freshStorage());
    await migrateToLatest(storage);
    outside = new BetterSqlite3(storage.location, { readonly: true });
  });
  afterAll(async () => {
    outside?.close();
    await storage?.close();
    await drop?.();
  });

  const committedNames = (names: string[]) =>
    (outside.prepare(`select name from customers where name in (${names.map(() => '?').join(', ')})`).all(...names) as Array<{ name: string }>).map((row) => row.name).sort();
  const insertCustomer = (trx: Storage['db'], name: string) =>
    trx.insertInto('customers').values({ id: crypto.randomUUID(), name, fr_owner_business_id: `busi_${crypto.randomUUID()}`, created_at: new Date().toISOString() }).execute();
  const stats = () => ({ ...storage.groupCommits! });

  it('makes parallel transactions durable with fewer COMMITs than transactions, each committed when it resolves', async () => {
    const before = stats();
    const names = Array.from({ length: 20 }, (_, index) => `group ${index} ${crypto.randomUUID()}`);
    const seenWhenResolved = await Promise.all(
      names.map(async (name) => {
        await storage.db.transaction().execute((trx) => insertCustomer(trx, name));
        return committedNames([name]).length;
      }),
    );
    expect(seenWhenResolved).toEqual(names.map(() => 1));
    const after = stats();
    expect(after.transactions - before.transactions).toBe(20);
    expect(after.commits - before.commits).toBeGreaterThanOrEqual(1);
    expect(after.commits - before.commits).toBeLessThan(20);
  });

  it('rolls back only the transaction that fails; the others of its group commit', async () => {
    const names = Array.from({ length: 5 }, (_, index) => `partial ${index} ${crypto.randomUUID()}`);
    const results = await Promise.allSettled(
      names.map((name, index) =>
        storage.db.transaction().execute(async (trx) => {
          await insertCustomer(trx, name);
          if (index === 2) throw new Error('refused');
        }),
      ),
    );
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    expect(committedNames(names)).toEqual(names.filter((_, index) => index !== 2).sort());
  });

  it('never lets a read outside the transaction see a change before it is committed', async () => {
    const name = `uncommitted ${crypto.randomUUID()}`;
    const visible = async () => (await storage.db.selectFrom('customers').select('id').where('name', '=', name).execute()).length;
    let seenInside: number | undefined;
    let seenOutside: number | undefined;
    await storage.db.transaction().execute(async (trx) => {
      await insertCustomer(trx, name);
      seenInside = (await trx.selectFrom('customers').select('id').where('name', '=', name).execute()).length;
      seenOutside = await visible();
    });
    expect(seenInside).toBe(1);
    expect(seenOutside).toBe(0);
    expect(await visible()).toBe(1);
  });

  it('groups single writes outside a transaction too, each durable when it resolves', async () => {
    const before = stats();
    const names = Array.from({ length: 10 }, (_, index) => `single ${index} ${crypto.randomUUID()}`);
    await Promise.all(names.map((name) => insertCustomer(storage.db, name)));
    expect(committedNames(names)).toEqual([...names].sort());
    const after = stats();
    expect(after.transactions - before.transactions).toBe(10);
    expect(after.commits - before.commits).toBeLessThan(10);
  });

  it('answers a failed single write with its error and keeps the rest of its group', async () => {
    const name = `kept ${crypto.randomUUID()}`;
    const duplicateId = await insertCustomerRow(storage);
    const results = await Promise.allSettled([
      insertCustomer(storage.db, name),
      storage.db.insertInto('customers').values({ id: duplicateId, name: 'dup', fr_owner_business_id: 'busi_dup', created_at: new Date().toISOString() }).execute(),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected']);
    expect(committedNames([name])).toEqual([name]);
  });

  it('keeps the savepoints’ journals in memory on the writing connection (temp_store=MEMORY), not in temporary files', async () => {
    const result = await storage.db.transaction().execute((trx) => sql<{ temp_store: number | bigint }>`pragma temp_store`.execute(trx));
    expect(Number(result.rows[0]?.temp_store)).toBe(2);
  });

  it('commits a group before it grows past 64 transactions', async () => {
    const before = stats();
    await Promise.all(Array.from({ length: 200 }, (_, index) => storage.db.transaction().execute((trx) => insertCustomer(trx, `many ${index} ${crypto.randomUUID()}`))));
    const after = stats();
    expect(after.transactions - before.transactions).toBe(200);
    expect(after.commits - before.commits).toBeGreaterThanOrEqual(4);
  });
});

describe.skipIf(testDialect !== 'sqlite')('the metrics listener on SQLite', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t.close());

  const counter = (text: string, name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').find((line) => line.startsWith(`${name} `)) ?? '')?.[2]);

  it('reports COMMITs and the transactions they made durable: parallel payments share them', async () => {
    const read = () => t.metrics();
    const customer = await t.createCustomer('Grouped Ltd');
    const from = await createFiatAccount(t, customer);
    const to = await createFiatAccount(t, customer);
    await deposit(t, customer, from.id, 100);
    const before = await read();
    const payments = await Promise.all(
      Array.from({ length: 10 }, () => payRequest(t, customer, { fromAccountId: from.id, toAccountId: to.id, amount: 1, currency: 'EUR', reference: 'grouped' })),
    );
    expect(payments.map((response) => response.statusCode)).toEqual(payments.map(() => 201));
    const after = await read();
    const transactions = counter(after, 'sqlite_committed_transactions_total') - counter(before, 'sqlite_committed_transactions_total');
    const commits = counter(after, 'sqlite_commits_total') - counter(before, 'sqlite_commits_total');
    expect(transactions).toBeGreaterThanOrEqual(10);
    expect(commits).toBeGreaterThanOrEqual(1);
    expect(commits).toBeLessThan(transactions);
  });
});
