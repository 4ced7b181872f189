import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cryptoAssets, fiatCurrencies } from '../../src/ledger/assets.js';
import { networkRegistry } from '../../src/ledger/networks.js';
import { ConfigError } from '../../src/config/config.js';
import { checkSqliteDriverRuntime, openSqliteDatabase, openStorage, type Storage } from '../../src/storage/database.js';
import { migrateToLatest, pendingMigrations } from '../../src/storage/migrate.js';
import { insertCustomerRow, insertFiatAccountRow } from '../helpers/rows.js';
import { freshStorage, temporaryDirectory, testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';
import { sqliteBusyTimeoutMs } from '../../src/config/limits.js';

/** The database layer on the dialect of this vitest project (SQLite, and PostgreSQL when TEST_DB=postgres). */

async function balanceOf(storage: Storage, accountId: string): Promise<bigint> {
  const row = await storage.db.selectFrom('fiat_accounts').select('balance_minor').where('id', '=', accountId).executeTakeFirstOrThrow();
  return row.balance_minor;
}

describe(`storage on ${testDialect}`, () => {
  let storage: Storage;
  let customerId: string;

  useFreshStorage((fresh) => (storage = fresh));

  it('applies the migrations to an empty database, then has none pending and applies nothing the second time', async () => {
    expect(await pendingMigrations(storage)).toContain('0001-foundation');
    const first = await migrateToLatest(storage);
    expect(first).toContain('0001-foundation');
    expect(await pendingMigrations(storage)).toEqual([]);
    expect(await migrateToLatest(storage)).toEqual([]);
    expect(await pendingMigrations(storage)).toEqual([]);
    customerId = await insertCustomerRow(storage);
  });

  it('refuses a negative fiat account balance by a CHECK constraint, whatever the application does', async () => {
    const accountId = await insertFiatAccountRow(storage, customerId, 0n);
    await expect(storage.db.updateTable('fiat_accounts').set({ balance_minor: -1n }).where('id', '=', accountId).execute()).rejects.toThrow(/check/i);
    expect(await balanceOf(storage, accountId)).toBe(0n);
    await expect(insertFiatAccountRow(storage, customerId, -5n)).rejects.toThrow(/check/i);
  });

  /** The code lists of every `<column> in (…)` CHECK of the schema. Migrations are history and keep their literal lists. */
  async function checkListsOf(column: string): Promise<string[][]> {
    const definitions =
      storage.dialect === 'postgres'
        ? (
            await sql<{ definition: string }>`select pg_get_constraintdef(c.oid) as definition from pg_constraint c
              join pg_class t on t.oid = c.conrelid where c.contype = 'c' and t.relnamespace = current_schema()::regnamespace`.execute(storage.db)
          ).rows.map((row) => row.definition)
        : (await sql<{ definition: string }>`select sql as definition from sqlite_master where type = 'table'`.execute(storage.db)).rows.flatMap((row) =>
            [...row.definition.matchAll(new RegExp(`check\\s*\\(${column} in \\([^)]*\\)\\)`, 'gi'))].map((match) => match[0]),
          );
    return definitions
      .filter((definition) => new RegExp(`\\(+${column}\\b`, 'i').test(definition))
      .map((check) => [...check.matchAll(/'([A-Z]+)'/g)].map((match) => match[1]!).sort());
  }

  it('lists in every currency CHECK exactly the fiat currencies of the asset registry', async () => {
    // This is what says the registry and the database agree.
    const lists = await checkListsOf('currency');
    expect(lists).toHaveLength(4); // fiat accounts, virtual accounts, payees, fee schedules
    for (const list of lists) expect(list).toEqual([...fiatCurrencies].sort());
  });

  it('lists in the wallet CHECKs exactly the crypto assets and networks of the registries', async () => {
    const assetLists = await checkListsOf('asset');
    expect(assetLists).toHaveLength(3); // wallet addresses, balances and transfers
    for (const list of assetLists) expect(list).toEqual([...cryptoAssets].sort());
    const networkLists = await checkListsOf('network');
    expect(networkLists).toHaveLength(2); // wallet addresses and transfers
    for (const list of networkLists) expect(list).toEqual((Object.keys(networkRegistry)).sort());
  });

  it('keeps bigint minor units exact beyond 2^53', async () => {
    const large = 9007199254740993n; // 2^53 + 1: a JS number would read it back as ...992
    const accountId = await insertFiatAccountRow(storage, customerId, large);
    const read = await balanceOf(storage, accountId);
    expect(typeof read).toBe('bigint');
    expect(read).toBe(large);
    await storage.db.updateTable('fiat_accounts').set({ balance_minor: sql<bigint>`balance_minor + 2` }).where('id', '=', accountId).execute();
    expect(await balanceOf(storage, accountId)).toBe(9007199254740995n);
    const max = 9223372036854775807n;
    const maxId = await insertFiatAccountRow(storage, customerId, max);
    expect(await balanceOf(storage, maxId)).toBe(max);
  });

  it('enforces foreign keys: an API key of an unknown customer is refused', async () => {
    const insert = storage.db
      .insertInto('api_keys')
      .values({
        id: randomUUID(),
        customer_id: randomUUID(),
        key_hash: randomUUID(),
        prefix: 'sk_test_abcd',
        environment: 'sandbox',
        scopes: '["*"]',
        allowed_ips: '[]',
        expires_at: null,
        revoked_at: null,
        last_used_at: null,
        created_at: new Date().toISOString(),
      })
      .execute();
    await expect(insert).rejects.toThrow(/foreign key/i);
    const count = await storage.db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(0);
  });

  it('rolls a failed transaction back completely', async () => {
    const accountId = await insertFiatAccountRow(storage, customerId, 100n);
    await expect(
      storage.db.transaction().execute(async (trx) => {
        await trx.updateTable('fiat_accounts').set({ balance_minor: 60n }).where('id', '=', accountId).execute();
        await trx.updateTable('fiat_accounts').set({ balance_minor: -1n }).where('id', '=', accountId).execute();
      }),
    ).rejects.toThrow(/check/i);
    expect(await balanceOf(storage, accountId)).toBe(100n);
  });
});

describe.skipIf(testDialect !== 'sqlite')('the embedded SQLite database', () => {
  let storage: Storage;
  let drop: () => Promise<void>;
  const directories: string[] = [];

  beforeAll(async () => {
    ({ storage, drop } = await freshStorage());
    await migrateToLatest(storage);
  });
  afterAll(async () => {
    await storage?.close();
    await drop?.();
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  });

  it('runs with WAL, synchronous=FULL, foreign_keys=ON, busy_timeout >= 5000 ms and a page cache of 2 MB, not the driver build\'s 16 MB', () => {
    const directory = temporaryDirectory();
    directories.push(directory);
    const database = openSqliteDatabase(directory);
    try {
      expect(String(database.pragma('journal_mode', { simple: true })).toLowerCase()).toBe('wal');
      expect(Number(database.pragma('synchronous', { simple: true }))).toBe(2);
      expect(Number(database.pragma('foreign_keys', { simple: true }))).toBe(1);
      expect(Number(database.pragma('busy_timeout', { simple: true }))).toBeGreaterThanOrEqual(5000);
      // Negative: a size in KiB, whatever the page size.
      expect(Number(database.pragma('cache_size', { simple: true }))).toBe(-2000);
      expect(sqliteBusyTimeoutMs).toBeGreaterThanOrEqual(5000);
    } finally {
      database.close();
    }
  });

  it('refuses with a sentence a Node older than the driver\'s Node-API 10, where opening a database would crash the process', () => {
    expect(() => checkSqliteDriverRuntime({ node: '20.20.2', napi: '9' })).toThrow(ConfigError);
    expect(() => checkSqliteDriverRuntime({ node: '22.13.1', napi: '9' })).toThrow(/needs Node\.js 24 \(Node-API 10\), this is Node\.js 22\.13\.1/);
    expect(() => checkSqliteDriverRuntime({ node: '22.14.0', napi: '10' })).not.toThrow();
    expect(() => checkSqliteDriverRuntime()).not.toThrow();
  });

  it('runs the storage connection itself with foreign keys on', async () => {
    const result = await sql<{ foreign_keys: number | bigint }>`pragma foreign_keys`.execute(storage.db);
    expect(Number(result.rows[0]?.foreign_keys)).toBe(1);
  });

  it('opens every transaction with BEGIN IMMEDIATE: the write lock is held from the start, even before a write', async () => {
    // A second connection that fails at once instead of waiting for the lock.
    const other = new BetterSqlite3(storage.location, { timeout: 0 });
    try {
      let refusedWhileOpen: unknown;
      await storage.db.transaction().execute(async (trx) => {
        // Only a read so far: a deferred BEGIN would hold no write lock yet and let `other` begin a write.
        await trx.selectFrom('customers').select('id').execute();
        try {
          other.exec('BEGIN IMMEDIATE');
          other.exec('ROLLBACK');
        } catch (error) {
          refusedWhileOpen = error;
        }
      });
      expect(refusedWhileOpen).toBeInstanceOf(Error);
      expect((refusedWhileOpen as { code?: string }).code).toBe('SQLITE_BUSY');
      // Control: once the transaction has ended, the same statement succeeds.
      other.exec('BEGIN IMMEDIATE');
      other.exec('ROLLBACK');
    } finally {
      other.close();
    }
  });
});

describe.skipIf(testDialect !== 'sqlite')('the embedded database files are private to the server’s user', () => {
  it('creates the data directory 0700 and the database, WAL and shared-memory files 0600', async () => {
    const parent = temporaryDirectory();
    const dataDir = `${parent}/data`;
    try {
      const storage = await openStorage({ dataDir, databaseUrl: undefined, databasePoolSize: 1 });
      await migrateToLatest(storage);
      await insertCustomerRow(storage);
      expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
      for (const suffix of ['', '-wal', '-shm']) expect(fs.statSync(`${storage.location}${suffix}`).mode & 0o777, suffix).toBe(0o600);
      await storage.close();
    } finally {
      fs.rmSync(parent, { recursive: true, force: true });
    }
  });

  it('tightens a database file an earlier version left readable by others', async () => {
    const dataDir = temporaryDirectory();
    try {
      const first = await openStorage({ dataDir, databaseUrl: undefined, databasePoolSize: 1 });
      await migrateToLatest(first);
      await first.close();
      fs.chmodSync(first.location, 0o644);
      const second = await openStorage({ dataDir, databaseUrl: undefined, databasePoolSize: 1 });
      expect(fs.statSync(second.location).mode & 0o777).toBe(0o600);
      await second.close();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
