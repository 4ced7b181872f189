import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { postgresConnectTimeoutMs, storageFaultRetryAfterSecondsMax, storageFaultRetryAfterSecondsMin } from '../../src/config/limits.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { signedInBrowser } from '../helpers/dashboard.js';
import { createIndividual } from '../helpers/fixtures.js';
import { FaultProxy } from '../helpers/tcp-faults.js';
import { createTestApp, postgresUrl, testDialect, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * A database or disk that fails under the server never ends the process and never answers a generic 500: 503 while
 * the database is away or the data cannot be written, 507 while the storage is full, each with Retry-After in the
 * error envelope; GET /ready says so while GET /health stays 200; and the server answers normally once the fault
 * passes, with every keyed effect exactly once (docs/operations.md "Faults").
 */

function expectFault(response: LightMyRequestResponse, status: number, code: string): void {
  expect(response.statusCode, response.body).toBe(status);
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(storageFaultRetryAfterSecondsMin);
  expect(retryAfter).toBeLessThanOrEqual(storageFaultRetryAfterSecondsMax);
  expect(response.json()).toEqual({ error: { code, message: expect.any(String), details: { retry_after_seconds: retryAfter } } });
}

async function expectNotReady(t: TestApp, reason: string): Promise<void> {
  const ready = await t.request({ url: '/ready' });
  expect(ready.statusCode, ready.body).toBe(503);
  expect(ready.json()).toEqual({ error: { code: 'NOT_READY', message: expect.any(String), details: { reason } } });
  expect((await t.request({ url: '/health' })).statusCode).toBe(200);
}

/** A customer with a EUR account holding 100.00, and keyed deposits into it. */
async function fundedAccount(t: TestApp, customer: TestCustomer) {
  const created = await t.request({ method: 'POST', url: '/fiat-accounts', key: customer.key, csrf: true, body: { accountName: 'Faults', currency: 'EUR' } });
  expect(created.statusCode, created.body).toBe(201);
  const accountId = created.json().data.id as string;
  const deposit = (key: string, amount: number) =>
    t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${accountId}/deposits`, key: customer.key, csrf: true, headers: { 'idempotency-key': key }, body: { amount } });
  expect((await deposit(randomUUID(), 100)).statusCode).toBe(201);
  const balance = async () => {
    const response = await t.request({ url: `/fiat-accounts/${accountId}`, key: customer.key });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.balance as number;
  };
  return { accountId, deposit, balance };
}

describe.skipIf(testDialect !== 'postgres')('PostgreSQL away', () => {
  let proxy: FaultProxy;
  let t: TestApp;
  let alice: TestCustomer;
  const applicationName = `customer-api-test-${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    proxy = await FaultProxy.startFor(postgresUrl(), 5432);
    const url = new URL(proxy.urlFor(postgresUrl()));
    url.searchParams.set('application_name', applicationName);
    t = await createTestApp({ databaseUrl: url.toString(), poolSize: 4 });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterEach(async () => proxy.restore());
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  it('answers 503 DATABASE_UNAVAILABLE with Retry-After while every connection is dropped and new ones refused, /ready 503, /health 200; once it is back the same key deposits exactly once', async () => {
    const { deposit, balance } = await fundedAccount(t, alice);
    const key = randomUUID();

    proxy.dropAll();
    proxy.refuse();
    expectFault(await t.request({ url: '/fiat-accounts', key: alice.key }), 503, 'DATABASE_UNAVAILABLE');
    expectFault(await deposit(key, 25), 503, 'DATABASE_UNAVAILABLE');
    await expectNotReady(t, 'database_unavailable');

    await proxy.restore();
    const retried = await deposit(key, 25);
    expect(retried.statusCode, retried.body).toBe(201);
    expect((await deposit(key, 25)).statusCode).toBe(201);
    expect(await balance()).toBe(125);
    expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
    expect((await verifyLedger(t.storage)).ok).toBe(true);
  });

  it('survives a connection dropped while a transaction holds it, running that transaction again: nothing of it was committed', async () => {
    let attempts = 0;
    const name = `fault-probe-${randomUUID()}`;
    await t.storage.transaction(async (trx) => {
      attempts += 1;
      await trx.insertInto('deployment_settings').values({ name, value: String(attempts), updated_at: new Date().toISOString() }).execute();
      if (attempts === 1) proxy.dropAll();
      await sql`select 1`.execute(trx);
    });
    expect(attempts).toBe(2);
    const rows = await t.storage.db.selectFrom('deployment_settings').select('value').where('name', '=', name).execute();
    expect(rows).toEqual([{ value: '2' }]);
  });

  it('survives pg_terminate_backend of its own connections, idle and busy (57P01): the busy transaction runs again, and requests answer normally', async () => {
    expect((await t.request({ url: '/fiat-accounts', key: alice.key })).statusCode).toBe(200);
    let attempts = 0;
    const busy = t.storage.transaction(async (trx) => {
      attempts += 1;
      await sql`select pg_sleep(${attempts === 1 ? 30 : 0})`.execute(trx);
      return attempts;
    });
    const admin = new pg.Client({ connectionString: postgresUrl() });
    await admin.connect();
    try {
      // Once the sleeping query runs (PostgreSQL's activity view: polled, with a deadline), end every connection of
      // this app, as a restart would.
      await vi.waitFor(
        async () => {
          const { rows } = await admin.query(`select count(*)::int as n from pg_stat_activity where application_name = $1 and query like 'select pg_sleep%' and state = 'active'`, [applicationName]);
          expect(rows[0].n).toBeGreaterThan(0);
        },
        { timeout: 10_000, interval: 25 },
      );
      const { rows } = await admin.query('select count(*)::int as n from (select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1) ended', [applicationName]);
      expect(rows[0].n).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    expect(await busy).toBe(2);
    expect((await t.request({ url: '/fiat-accounts', key: alice.key })).statusCode).toBe(200);
    expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
  });

  it('answers 503 within the connect timeout when new connections are never answered (a black hole), not after the pool’s wait, reads and writes alike', async () => {
    const { accountId } = await fundedAccount(t, alice);
    const csrf = await t.csrfToken(alice.key);
    proxy.dropAll();
    proxy.freeze();
    // The first request may meet a pooled connection not yet known to be closed (a quick 503); this one must connect.
    await t.request({ url: '/fiat-accounts', key: alice.key });
    const accepted = proxy.accepted;
    let started = performance.now();
    expectFault(await t.request({ url: '/fiat-accounts', key: alice.key }), 503, 'DATABASE_UNAVAILABLE');
    expect(proxy.accepted).toBeGreaterThan(accepted);
    expect(performance.now() - started).toBeLessThan(postgresConnectTimeoutMs + 5_000);
    // A write's transaction never began: it is not run again (which would wait out the connect timeout each time).
    started = performance.now();
    const write = await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${accountId}/deposits`, key: alice.key, csrf, headers: { 'idempotency-key': randomUUID() }, body: { amount: 1 } });
    expectFault(write, 503, 'DATABASE_UNAVAILABLE');
    expect(performance.now() - started).toBeLessThan(postgresConnectTimeoutMs + 5_000);
    await proxy.restore();
    expect((await t.request({ url: '/fiat-accounts', key: alice.key })).statusCode).toBe(200);
  }, 30_000);
});

describe.skipIf(testDialect !== 'sqlite')('SQLite faults', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  const pragma = (text: string) => t.storage.sqliteWriterPragma!(text);
  const integrity = async () => (await sql<{ integrity_check: string }>`pragma integrity_check`.execute(t.storage.db)).rows;

  it('answers 507 STORAGE_FULL with Retry-After when the file cannot grow, rolls the write back, /ready says storage_full; the same key deposits exactly once when space returns', async () => {
    const { deposit, balance } = await fundedAccount(t, alice);
    const [{ page_count: pages }] = pragma('page_count') as [{ page_count: bigint }];
    pragma(`max_page_count = ${pages}`);
    // Deposits fill the last free pages; the first that needs a new page is refused.
    let refused: LightMyRequestResponse | undefined;
    let refusedKey = '';
    let accepted = 0;
    for (let attempt = 0; attempt < 200 && refused === undefined; attempt += 1) {
      const key = randomUUID();
      const response = await deposit(key, 1);
      if (response.statusCode === 201) accepted += 1;
      else {
        refused = response;
        refusedKey = key;
      }
    }
    expect(refused, 'no deposit was refused').toBeDefined();
    expectFault(refused!, 507, 'STORAGE_FULL');
    await expectNotReady(t, 'storage_full');
    expect(await balance()).toBe(100 + accepted);
    expect(await t.metrics()).toContain('storage_fault{fault="full"} 1');

    pragma('max_page_count = 1073741823');
    expect((await deposit(refusedKey, 1)).statusCode).toBe(201);
    expect((await deposit(refusedKey, 1)).statusCode).toBe(201);
    expect(await balance()).toBe(100 + accepted + 1);
    expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
    expect(await t.metrics()).toContain('storage_fault{fault="full"} 0');
    expect(await integrity()).toEqual([{ integrity_check: 'ok' }]);
    expect((await verifyLedger(t.storage)).ok).toBe(true);
  });

  it('answers 503 STORAGE_UNAVAILABLE while the database cannot be written, /ready says storage_unwritable, and writes again once it can', async () => {
    const { deposit, balance } = await fundedAccount(t, alice);
    const key = randomUUID();
    pragma('query_only = ON');
    try {
      expectFault(await deposit(key, 5), 503, 'STORAGE_UNAVAILABLE');
      await expectNotReady(t, 'storage_unwritable');
    } finally {
      pragma('query_only = OFF');
    }
    expect((await deposit(key, 5)).statusCode).toBe(201);
    expect(await balance()).toBe(105);
    expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
  });

  it('shows a dashboard form sent while the database cannot be written a 503 page with Retry-After, not a generic failure', async () => {
    const { accountId, balance } = await fundedAccount(t, alice);
    const browser = await signedInBrowser(t, alice.id);
    await browser.get(`/dashboard/accounts/fiat/${accountId}`);
    pragma('query_only = ON');
    try {
      const response = await browser.post(`/dashboard/accounts/${accountId}/deposits`, { amount: '5.00', reference: 'Top-up', counterparty_name: 'Ada Lovelace' });
      expect(response.statusCode).toBe(503);
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
      expect(response.body).toContain('Temporarily unavailable');
    } finally {
      pragma('query_only = OFF');
    }
    expect(await balance()).toBe(100);
  });

  it('answers 503 DATABASE_UNAVAILABLE when another process holds the write lock past the busy timeout (SQLITE_BUSY), and writes once it lets go', async () => {
    const { deposit, balance } = await fundedAccount(t, alice);
    const other = new BetterSqlite3(t.storage.location);
    other.exec('begin immediate');
    const key = randomUUID();
    try {
      expectFault(await deposit(key, 7), 503, 'DATABASE_UNAVAILABLE');
    } finally {
      other.exec('rollback');
      other.close();
    }
    expect((await deposit(key, 7)).statusCode).toBe(201);
    expect(await balance()).toBe(107);
  }, 20_000);
});

/** chattr +i makes a directory unwritable even for root (who ignores permission bits); not every file system has it. */
function immutableDirectoriesWork(): boolean {
  const probe = fs.mkdtempSync(path.join(fs.realpathSync(process.env.TMPDIR ?? '/tmp'), 'chattr-probe-'));
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    fs.rmSync(probe, { recursive: true, force: true });
  }
}

describe.skipIf(testDialect !== 'sqlite' || !immutableDirectoriesWork())('SQLite: an unwritable data directory', () => {
  let t: TestApp;
  let documentsDir: string;

  beforeAll(async () => {
    t = await createTestApp();
    documentsDir = path.join(t.config.dataDir, 'documents');
  });
  afterAll(async () => {
    execFileSync('chattr', ['-i', documentsDir]);
    execFileSync('chattr', ['-i', t.config.dataDir]);
    await t.close();
  });

  it('answers /ready 503 storage_unwritable while the data directory cannot be written, and 200 again once it can', async () => {
    expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
    execFileSync('chattr', ['+i', t.config.dataDir]);
    try {
      await expectNotReady(t, 'storage_unwritable');
    } finally {
      execFileSync('chattr', ['-i', t.config.dataDir]);
    }
    expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
  });

  it('answers a document upload 503 STORAGE_UNAVAILABLE, not a generic 500, and stores it once the directory is writable again', async () => {
    const alice = await t.createCustomer('Alice Ltd');
    const user = await createIndividual(t, alice);
    fs.mkdirSync(documentsDir, { recursive: true });
    execFileSync('chattr', ['+i', documentsDir]);
    const body = { endUserId: user.id, documentType: 'identity', fileName: 'passport.pdf', fileData: Buffer.from('%PDF-1.7\nbody').toString('base64'), mimeType: 'application/pdf' };
    const upload = () => t.request({ method: 'POST', url: '/documents', key: alice.key, csrf: true, body });
    expectFault(await upload(), 503, 'STORAGE_UNAVAILABLE');
    execFileSync('chattr', ['-i', documentsDir]);
    const stored = await upload();
    expect(stored.statusCode, stored.body).toBe(201);
  });
});
