import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, exitWithin, processTestTimeoutMs, run, runCli, startApiServer, type Spawned } from './support.js';

/**
 * Idempotency-Key across processes (docs/idempotency.md): two `node dist/server.js` on one database — the SQLite file
 * shared by both, and PostgreSQL when TEST_DATABASE_URL is set — take 50 concurrent requests with one key and run
 * the operation once; a server killed with SIGKILL between the reservation and the commit leaves a key that is
 * retryable once its lease has run out, and books that `customer-api ledger verify` finds consistent.
 */

const leaseSeconds = 2;

interface Deployment {
  env: NodeJS.ProcessEnv;
  /** Makes every journal insert take seconds, so a server can be killed in the middle of a money transaction. */
  slowDownJournal(): Promise<void>;
  restoreJournal(): Promise<void>;
  /** The reservation of the key, as another process sees it. */
  reservation(key: string): Promise<string | undefined>;
  /** Before the first server starts. */
  prepare(): Promise<void>;
  cleanUp(): Promise<void>;
}

function sqliteDeployment(): Deployment {
  const dataDir = temporaryDirectory('customer-api-e2e-idem-');
  const file = path.join(dataDir, 'customer-api.sqlite');
  const open = () => new BetterSqlite3(file, { timeout: 10_000 });
  return {
    env: childEnv({ DATA_DIR: dataDir }),
    async slowDownJournal() {
      const database = open();
      // Seconds of work inside the writing transaction, on the server's one thread (SQLite has no sleep).
      database.exec(`create trigger slow_journal before insert on ledger_journal begin
        select count(*) from (with recursive c(x) as (select 1 union all select x + 1 from c where x < 40000000) select x from c);
        end`);
      database.close();
    },
    async restoreJournal() {
      const database = open();
      database.exec('drop trigger if exists slow_journal');
      database.close();
    },
    async reservation(key) {
      const database = open();
      try {
        return (database.prepare('select status from idempotency_keys where key = ?').get(key) as { status: string } | undefined)?.status;
      } finally {
        database.close();
      }
    },
    async prepare() {},
    async cleanUp() {
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

function postgresDeployment(databaseUrl: string): Deployment {
  const schema = `e2e_${randomBytes(6).toString('hex')}`;
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const dataDir = temporaryDirectory('customer-api-e2e-idem-pg-');
  const query = async (text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  };
  return {
    env: childEnv({ DATA_DIR: dataDir, DATABASE_URL: url.toString() }),
    async slowDownJournal() {
      await query(`create or replace function slow_journal() returns trigger language plpgsql as $$ begin perform pg_sleep(20); return new; end $$`);
      await query('create trigger slow_journal before insert on ledger_journal for each row execute function slow_journal()');
    },
    async restoreJournal() {
      // The statement a killed server left behind still sleeps inside the database: end it, then drop the trigger.
      await query("select pg_terminate_backend(pid) from pg_stat_activity where query like '%apply_money_plan%' and pid <> pg_backend_pid()");
      await query('drop trigger if exists slow_journal on ledger_journal');
    },
    async reservation(key) {
      return (await query('select status from idempotency_keys where key = $1', [key])).rows[0]?.status;
    },
    async cleanUp() {
      const admin = new pg.Client({ connectionString: databaseUrl });
      await admin.connect();
      await admin.query(`drop schema if exists ${schema} cascade`);
      await admin.end();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
    // The schema must exist before the first server migrates into it.
    async prepare() {
      await query(`create schema ${schema}`);
    },
  };
}

const deployments: Array<[string, () => Deployment]> = [['SQLite, one file shared by both', sqliteDeployment]];
if (process.env.TEST_DATABASE_URL) deployments.push(['PostgreSQL', () => postgresDeployment(process.env.TEST_DATABASE_URL!)]);

describe.each(deployments)('Idempotency-Key across two server processes on %s', (_label, makeDeployment) => {
  const servers: Spawned[] = [];
  let deployment: Deployment;
  let env: NodeJS.ProcessEnv;

  const startServer = () => startApiServer(env, servers);
  const cli = <T>(...args: string[]) => runCli<T>(env, ...args);

  /** A new customer with a key, two fresh servers, and a POST through either with the key's CSRF token for it. */
  const customerOnTwoServers = async (name: string) => {
    const customer = await cli<{ id: string }>('customers', 'create', '--name', name);
    const { key } = await cli<{ key: string }>('keys', 'create', '--customer', customer.id);
    const servers = [await startServer(), await startServer()];
    const headers = await Promise.all(
      servers.map(async ({ baseUrl }) => {
        const token = ((await (await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } })).json()) as { data: { csrf_token: string } }).data.csrf_token;
        return { 'x-api-key': key, 'x-csrf-token': token, 'content-type': 'application/json' };
      }),
    );
    const post = async (server: number, url: string, body: unknown, extra: Record<string, string> = {}) => {
      const response = await fetch(`${servers[server]!.baseUrl}${url}`, { method: 'POST', headers: { ...headers[server], ...extra }, body: JSON.stringify(body) });
      return { response, status: response.status, json: (await response.clone().json()) as { data: Record<string, string> } };
    };
    return { key, servers, post };
  };

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
    env = {
      ...deployment.env,
      HOST: '127.0.0.1',
      SANDBOX_AUTO_SETTLE_MS: 'off',
      RATE_LIMIT_PER_SECOND: 'off',
      LOG_LEVEL: 'warn',
      IDEMPOTENCY_LEASE_SECONDS: String(leaseSeconds),
    };
  }, processTestTimeoutMs);

  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => exitWithin(server, 10_000)));
    for (const server of servers) server.kill();
    await deployment?.restoreJournal().catch(() => undefined);
    await deployment?.cleanUp();
  });

  it('runs 50 concurrent requests with one key, split across two servers, exactly once; a SIGKILL between reservation and commit leaves a retryable key and consistent books', { timeout: processTestTimeoutMs }, async () => {
    const customer = await cli<{ id: string }>('customers', 'create', '--name', 'Idempotent Ltd');
    const { key } = await cli<{ key: string }>('keys', 'create', '--customer', customer.id);
    const [one, two] = [await startServer(), await startServer()];
    const headersFor = async (baseUrl: string) => {
      const token = ((await (await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } })).json()) as { data: { csrf_token: string } }).data.csrf_token;
      return { 'x-api-key': key, 'x-csrf-token': token, 'content-type': 'application/json' };
    };
    const headers = [await headersFor(one.baseUrl), await headersFor(two.baseUrl)];
    const account = (await (await fetch(`${one.baseUrl}/fiat-accounts`, { method: 'POST', headers: headers[0], body: JSON.stringify({ accountName: 'Idem', currency: 'EUR' }) })).json()) as {
      data: { id: string };
    };
    const deposit = (server: number, idempotencyKey: string, amount = 10) =>
      fetch(`${[one, two][server]!.baseUrl}/sandbox/fiat-accounts/${account.data.id}/deposits`, {
        method: 'POST',
        headers: { ...headers[server], 'idempotency-key': idempotencyKey },
        body: JSON.stringify({ amount }),
      });
    const balance = async () =>
      ((await (await fetch(`${one.baseUrl}/fiat-accounts/${account.data.id}`, { headers: { 'x-api-key': key } })).json()) as { data: { balance: number } }).data.balance;

    // 50 at once, one key, both servers.
    const shared = randomUUID();
    const answers = await Promise.all(Array.from({ length: 50 }, async (_, index) => {
      const response = await deposit(index % 2, shared);
      return { status: response.status, body: await response.text() };
    }));
    expect(answers.every((answer) => answer.status === 201 || answer.status === 409), JSON.stringify(answers.map((answer) => answer.status))).toBe(true);
    expect(await balance()).toBe(10);
    const created = answers.filter((answer) => answer.status === 201);
    for (const answer of created) expect(answer.body).toBe(created[0]!.body);

    // Killed between the reservation and the commit.
    await deployment.slowDownJournal();
    const interrupted = randomUUID();
    const inFlight = deposit(0, interrupted, 25).catch(() => undefined);
    for (let waited = 0; (await deployment.reservation(interrupted)) !== 'in_progress'; waited += 20) {
      if (waited > 30_000) throw new Error('the reservation never appeared');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    one.server.child.kill('SIGKILL');
    await one.server.exited;
    await inFlight;
    await deployment.restoreJournal();
    expect(await deployment.reservation(interrupted)).toBe('in_progress');

    const survivor = two;
    const retryAtOnce = await fetch(`${survivor.baseUrl}/sandbox/fiat-accounts/${account.data.id}/deposits`, {
      method: 'POST',
      headers: { ...headers[1], 'idempotency-key': interrupted },
      body: JSON.stringify({ amount: 25 }),
    });
    // Within the lease the key is still the dead request's.
    expect([409, 201]).toContain(retryAtOnce.status);
    if (retryAtOnce.status === 409) {
      await new Promise((resolve) => setTimeout(resolve, leaseSeconds * 1000 + 200));
      const retried = await fetch(`${survivor.baseUrl}/sandbox/fiat-accounts/${account.data.id}/deposits`, {
        method: 'POST',
        headers: { ...headers[1], 'idempotency-key': interrupted },
        body: JSON.stringify({ amount: 25 }),
      });
      expect(retried.status).toBe(201);
    }
    const balanceAfter = ((await (await fetch(`${survivor.baseUrl}/fiat-accounts/${account.data.id}`, { headers: { 'x-api-key': key } })).json()) as { data: { balance: number } }).data.balance;
    expect(balanceAfter).toBe(35);

    const verify = await run(process.execPath, ['bin/customer-api.js', 'ledger', 'verify'], { env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect((JSON.parse(verify.stdout) as { ok: boolean }).ok).toBe(true);
  });

  it('reserves a wallet balance once across two servers: concurrent transfers never exceed it, one key sends once, a transfer settles once', { timeout: processTestTimeoutMs }, async () => {
    const { key, servers, post: send } = await customerOnTwoServers('Wallets Ltd');
    const post = async (server: number, url: string, body: unknown, extra: Record<string, string> = {}) => (await send(server, url, body, extra)).response;
    const wallet = ((await (await post(0, '/wallets', {})).json()) as { data: { local_id: string } }).data.local_id;
    expect((await post(1, `/sandbox/wallets/${wallet}/deposits`, { asset: 'USDC', network: 'ETH', amount: '10' })).status).toBe(201);
    const transfer = { asset: 'USDC', network: 'ETH', amount: '1', destination: '0x52908400098527886e0f7030069857d2e4169ee7' };

    // 30 transfers of 1 USDC from a balance of 10, split across both servers, each with its own key.
    const statuses = await Promise.all(
      Array.from({ length: 30 }, async (_, index) => (await post(index % 2, `/wallets/${wallet}/transfers`, transfer, { 'idempotency-key': randomUUID() })).status),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(10);
    expect(statuses.filter((status) => status === 422)).toHaveLength(20);

    // 20 requests with one key on a freshly funded balance: one transfer.
    expect((await post(0, `/sandbox/wallets/${wallet}/deposits`, { asset: 'USDC', network: 'ETH', amount: '5' })).status).toBe(201);
    const shared = randomUUID();
    const answers = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => {
        const response = await post(index % 2, `/wallets/${wallet}/transfers`, transfer, { 'idempotency-key': shared });
        return { status: response.status, body: await response.text() };
      }),
    );
    expect(answers.every((answer) => answer.status === 201 || answer.status === 409)).toBe(true);
    const created = answers.filter((answer) => answer.status === 201);
    for (const answer of created) expect(answer.body).toBe(created[0]!.body);
    const live = async () =>
      ((await (await fetch(`${servers[1]!.baseUrl}/otc-exchanges/wallets/${wallet}/balance`, { headers: { 'x-api-key': key } })).json()) as { data: { balance: string; available: string } }).data;
    expect(await live()).toEqual({ walletId: wallet, asset: 'USDC', balance: '15.000000', available: '4.000000' });

    // One transfer settled from both servers at once: one wins.
    const transferId = (JSON.parse(created[0]!.body) as { data: { local_id: string } }).data.local_id;
    const settled = await Promise.all([0, 1].map((server) => post(server, `/sandbox/wallet-transfers/${transferId}/settle`, { outcome: 'completed' })));
    expect(settled.map((response) => response.status).sort()).toEqual([200, 422]);
    expect(await live()).toEqual({ walletId: wallet, asset: 'USDC', balance: '14.000000', available: '4.000000' });

    const verify = await run(process.execPath, ['bin/customer-api.js', 'ledger', 'verify'], { env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
    expect((JSON.parse(verify.stdout) as { ok: boolean }).ok).toBe(true);
  });

  it('confirms one OTC quote once across two servers: 20 confirmations with 20 keys make one order and debit once', { timeout: processTestTimeoutMs }, async () => {
    const { key, servers, post } = await customerOnTwoServers('Exchange Ltd');
    const account = (await post(0, '/fiat-accounts', { accountName: 'EUR', currency: 'EUR' })).json.data.id!;
    expect((await post(1, `/sandbox/fiat-accounts/${account}/deposits`, { amount: 500 })).status).toBe(201);
    const wallet = (await post(0, '/wallets', {})).json.data.local_id!;
    const quote = await post(1, '/otc-exchanges/quote', { sourceFrAccountId: account, destinationProviderWalletId: wallet, sourceAmountEur: '100' });
    expect(quote.status).toBe(200);
    const statuses = await Promise.all(
      Array.from({ length: 20 }, async (_, index) => (await post(index % 2, '/otc-exchanges', { quoteId: quote.json.data.quoteId }, { 'idempotency-key': randomUUID() })).status),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(1);
    expect(statuses.filter((status) => status === 422)).toHaveLength(19);
    const balance = ((await (await fetch(`${servers[0]!.baseUrl}/fiat-accounts/${account}`, { headers: { 'x-api-key': key } })).json()) as { data: { balance: number } }).data.balance;
    expect(balance).toBe(400);
    const verify = await run(process.execPath, ['bin/customer-api.js', 'ledger', 'verify'], { env });
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
