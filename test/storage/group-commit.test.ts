import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { deposit, payRequest } from '../helpers/money.js';
import { insertCustomerRow } from '../helpers/rows.js';
import { createTestApp, freshStorage, testDialect, type TestApp } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/** SQLite group commit (src/storage/sqlite-group-commit.ts, docs/decisions/0004-sqlite-group-commit.md). */

describe.skipIf(testDialect !== 'sqlite')('SQLite group commit', () => {
  let storage: Storage;
  /** A connection of its own, as another process would have: it sees only what is committed. */
  let outside: BetterSqlite3.Database;

  useFreshStorage((fresh) => (storage = fresh));
  beforeAll(async () => {
    await migrateToLatest(storage);
    outside = new BetterSqlite3(storage.location, { readonly: true });
  });
  afterAll(async () => {
    outside?.close();
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

describe.skipIf(testDialect !== 'sqlite')('SQLite group commit under faults', () => {
  let storage: Storage;
  let config: Parameters<typeof openStorage>[0];
  let drop: () => Promise<void>;
  let outside: BetterSqlite3.Database;

  beforeAll(async () => {
    ({ storage, config, drop } = await freshStorage());
    await migrateToLatest(storage);
    outside = new BetterSqlite3(storage.location, { readonly: true });
    // Test tables of their own: a trigger that rolls back the whole transaction for one poisoned name, and a
    // foreign key checked only at COMMIT.
    await sql`create table fault_names (name text not null)`.execute(storage.db);
    await sql`create trigger fault_poison before insert on fault_names when new.name like 'poison%' begin select raise(rollback, 'poisoned'); end`.execute(storage.db);
    await sql`create table fault_parents (id text primary key)`.execute(storage.db);
    await sql`create table fault_children (parent_id text not null references fault_parents(id) deferrable initially deferred)`.execute(storage.db);
  });
  afterAll(async () => {
    outside?.close();
    await storage?.close();
    await drop?.();
  });

  const committed = (table: 'fault_names' | 'fault_children', column: 'name' | 'parent_id') =>
    (outside.prepare(`select ${column} as value from ${table}`).all() as Array<{ value: string }>).map((row) => row.value).sort();
  const insertName = (name: string) => storage.transaction((trx) => sql`insert into fault_names (name) values (${name})`.execute(trx));
  const stats = () => ({ ...storage.groupCommits! });

  it('a member whose statement rolls the whole transaction back (RAISE(ROLLBACK)) fails alone; the innocent members of its group commit', async () => {
    const names = Array.from({ length: 9 }, (_, index) => `innocent ${index} ${crypto.randomUUID()}`);
    const results = await Promise.allSettled([...names.slice(0, 4).map(insertName), insertName('poison one'), ...names.slice(4).map(insertName)]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((results[4] as PromiseRejectedResult).reason.message).toMatch(/poisoned/);
    expect(committed('fault_names', 'name')).toEqual(expect.arrayContaining(names));
    expect(committed('fault_names', 'name').filter((name) => name.startsWith('poison'))).toEqual([]);
  });

  it('single writes of a group another member rolled back are written again, alone', async () => {
    const names = Array.from({ length: 5 }, (_, index) => `single ${index} ${crypto.randomUUID()}`);
    const singles = names.map((name) => sql`insert into fault_names (name) values (${name})`.execute(storage.db));
    const results = await Promise.allSettled([...singles, insertName('poison two')]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect(committed('fault_names', 'name')).toEqual(expect.arrayContaining(names));
  });

  it('a deferred foreign key that fails the group’s COMMIT fails its own transaction only: the others are committed alone', async () => {
    const parents = Array.from({ length: 6 }, () => crypto.randomUUID());
    const commitsBefore = stats().commits;
    const withParent = (parent: string) =>
      storage.transaction(async (trx) => {
        await sql`insert into fault_parents (id) values (${parent})`.execute(trx);
        await sql`insert into fault_children (parent_id) values (${parent})`.execute(trx);
      });
    const orphan = crypto.randomUUID();
    const results = await Promise.allSettled([
      ...parents.slice(0, 3).map(withParent),
      storage.transaction((trx) => sql`insert into fault_children (parent_id) values (${orphan})`.execute(trx)),
      ...parents.slice(3).map(withParent),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect((results[3] as PromiseRejectedResult).reason.message).toMatch(/FOREIGN KEY/i);
    expect(committed('fault_children', 'parent_id')).toEqual(expect.arrayContaining(parents));
    expect(committed('fault_children', 'parent_id')).not.toContain(orphan);
    expect(stats().commits).toBeGreaterThan(commitsBefore);
  });

  it('a COMMIT that fails for the only member fails it with the real error and commits nothing', async () => {
    const orphan = crypto.randomUUID();
    await expect(storage.transaction((trx) => sql`insert into fault_children (parent_id) values (${orphan})`.execute(trx))).rejects.toThrow(/FOREIGN KEY/i);
    expect(committed('fault_children', 'parent_id')).not.toContain(orphan);
    // The writer is usable afterwards.
    const name = `after ${crypto.randomUUID()}`;
    await insertName(name);
    expect(committed('fault_names', 'name')).toContain(name);
  });

  it('fails a write through storage.db inside a transaction callback with a clear error instead of waiting for ever', async () => {
    // Another storage on the same file, whose writer waits are short: the wait is what ends the deadlock.
    const impatient = await openStorage(config, { sqliteWriterWaitMs: 200 });
    try {
      const attempt = impatient.transaction(async () => {
        await sql`insert into fault_names (name) values ('re-entrant')`.execute(impatient.db);
      });
      await expect(attempt).rejects.toThrow(/inside a transaction callback .*write through the callback’s trx instead/);
      expect(committed('fault_names', 'name')).not.toContain('re-entrant');
      // Reads through storage.db are fine there (they see committed data only), and the writer is free again.
      await impatient.transaction(async () => {
        await sql`select count(*) from fault_names`.execute(impatient.db);
      });
      await sql`insert into fault_names (name) values ('after the timeout')`.execute(impatient.db);
      expect(committed('fault_names', 'name')).toContain('after the timeout');
    } finally {
      await impatient.close();
    }
  });

  it('counts the time the writer is held', async () => {
    const before = stats().writerHeldSeconds;
    await Promise.all(Array.from({ length: 20 }, (_, index) => insertName(`timed ${index}`)));
    expect(stats().writerHeldSeconds).toBeGreaterThan(before);
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
    // How long the writer was held, each time, as a histogram.
    expect(counter(after, 'sqlite_writer_hold_seconds_count')).toBeGreaterThan(counter(before, 'sqlite_writer_hold_seconds_count'));
    expect(counter(after, 'sqlite_writer_hold_seconds_sum')).toBeGreaterThan(0);
  });
});
