import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/storage/database.js';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, exitWithin, freePort, processTestTimeoutMs, run, spawnServer, waitForHealth, type Spawned } from './support.js';

/**
 * Issue 4: "200 parallel payments of 10.00 against a balance of 1,000.00 (fee 0): exactly 100 succeed, 100 get
 * 422, the final balance is 0.00 and `ledger verify` passes — on SQLite with two server processes sharing the
 * file". Two `node dist/server.js` on one DATA_DIR; the customer and key from the CLI; funding through the sandbox
 * deposit endpoint; the payments split across both servers and fired at once; then `customer-api ledger verify`.
 */

const servers: Spawned[] = [];
let dataDir: string;
let env: NodeJS.ProcessEnv;

async function cliJson<T>(args: string[]): Promise<{ code: number | null; json: T; stderr: string }> {
  const result = await run(process.execPath, ['bin/customer-api.js', ...args], { env });
  return { code: result.code, json: JSON.parse(result.stdout) as T, stderr: result.stderr };
}

async function startServer(): Promise<string> {
  const port = await freePort();
  const server = spawnServer(process.execPath, ['dist/server.js'], { ...env, PORT: String(port) });
  servers.push(server);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, server);
  return baseUrl;
}

interface Caller {
  baseUrl: string;
  headers: Record<string, string>;
}

async function caller(baseUrl: string, key: string): Promise<Caller> {
  const response = await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } });
  expect(response.status).toBe(200);
  const token = ((await response.json()) as { data: { csrf_token: string } }).data.csrf_token;
  return { baseUrl, headers: { 'x-api-key': key, 'x-csrf-token': token, 'content-type': 'application/json' } };
}

async function post(via: Caller, path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${via.baseUrl}${path}`, { method: 'POST', headers: via.headers, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

async function get(via: Caller, path: string): Promise<any> {
  const response = await fetch(`${via.baseUrl}${path}`, { headers: { 'x-api-key': via.headers['x-api-key']! } });
  expect(response.status).toBe(200);
  return response.json();
}

beforeAll(async () => {
  await ensureBuilt();
  dataDir = temporaryDirectory('customer-api-e2e-pay-');
  env = childEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', SANDBOX_AUTO_SETTLE_MS: 'off', RATE_LIMIT_PER_SECOND: 'off', LOG_LEVEL: 'warn' });
}, processTestTimeoutMs);

afterAll(async () => {
  // SIGTERM first, so each server closes the database cleanly; SIGKILL whatever is left.
  for (const server of servers) server.child.kill('SIGTERM');
  await Promise.all(servers.map((server) => exitWithin(server, 10_000)));
  for (const server of servers) server.kill();
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

describe('payments on SQLite with two server processes sharing the file', { timeout: processTestTimeoutMs }, () => {
  it('200 parallel payments of 10.00 against 1,000.00 across both servers: exactly 100 succeed, 100 get 422, balance 0.00, ledger verify passes', async () => {
    // The CLI migrates the new database before either server opens it.
    const customer = await cliJson<{ id: string }>(['customers', 'create', '--name', 'Two Process Ltd']);
    expect(customer.code, customer.stderr).toBe(0);
    const key = await cliJson<{ key: string }>(['keys', 'create', '--customer', customer.json.id]);
    expect(key.code, key.stderr).toBe(0);

    const [first, second] = await Promise.all([startServer(), startServer()]);
    const one = await caller(first, key.json.key);
    const two = await caller(second, key.json.key);

    const from = await post(one, '/fiat-accounts', { accountName: 'Source', currency: 'EUR' });
    const to = await post(two, '/fiat-accounts', { accountName: 'Target', currency: 'EUR' });
    expect(from.status).toBe(201);
    expect(to.status).toBe(201);
    const funded = await post(two, `/sandbox/fiat-accounts/${from.body.data.id}/deposits`, { amount: 1000, reference: 'Funding' });
    expect(funded.status, JSON.stringify(funded.body)).toBe(201);
    expect(funded.body.data.balance_after).toBe(1000);

    // Fee 0: an INTERNAL transfer between two own accounts (default INTERNAL EUR schedule, docs/fees.md).
    const preview = await post(one, '/fees/preview', { amount: 10, currency: 'EUR', transactionType: 'payment', paymentScheme: 'INTERNAL' });
    expect(preview.body.data.fee_amount).toBe(0);

    const results = await Promise.all(
      Array.from({ length: 200 }, async (_, index) => {
        const via = index % 2 === 0 ? one : two;
        const response = await post(via, '/payments', { fromAccountId: from.body.data.id, toAccountId: to.body.data.id, amount: 10, currency: 'EUR', reference: `Two processes ${index}` });
        return { server: index % 2, ...response };
      }),
    );
    const unexpected = results.filter((result) => result.status !== 201 && result.status !== 422);
    expect(unexpected).toEqual([]);
    expect(results.filter((result) => result.status === 201)).toHaveLength(100);
    expect(results.filter((result) => result.status === 422)).toHaveLength(100);
    for (const result of results.filter((candidate) => candidate.status === 422)) expect(result.body.error.code).toBe('INSUFFICIENT_FUNDS');

    for (const via of [one, two]) {
      const accounts = (await get(via, '/fiat-accounts')).data as { id: string; balance: number }[];
      expect(accounts.find((account) => account.id === from.body.data.id)!.balance).toBe(0);
      const history = await get(via, '/transactions?limit=100');
      expect(history.meta.pagination).toEqual({ page: 1, limit: 100, total: 101 });
      const afters = (history.data as { direction: string; balance_after: number }[])
        .filter((record) => record.direction === 'outgoing')
        .map((record) => record.balance_after)
        .sort((a, b) => a - b);
      expect(afters).toEqual(Array.from({ length: 100 }, (_, index) => index * 10));
    }

    const verify = await run(process.execPath, ['bin/customer-api.js', 'ledger', 'verify'], { env });
    expect(verify.code, verify.stderr).toBe(0);
    const report = JSON.parse(verify.stdout) as { ok: boolean; checked: { journals: number }; system_balances_minor: Record<string, string>; problems: unknown[] };
    expect(report.ok).toBe(true);
    expect(report.problems).toEqual([]);
    // One deposit and 100 reservations.
    expect(report.checked.journals).toBe(101);
    expect(report.system_balances_minor['suspense:EUR']).toBe('100000');
    expect(report.system_balances_minor['clearing:EUR']).toBe('-100000');

    // A balance changed behind the ledger's back: verify names it and exits 1.
    const database = openSqliteDatabase(dataDir);
    try {
      database.prepare('update fiat_accounts set balance_minor = balance_minor + 1 where id = ?').run(to.body.data.id);
    } finally {
      database.close();
    }
    const tampered = await run(process.execPath, ['bin/customer-api.js', 'ledger', 'verify'], { env });
    expect(tampered.code).toBe(1);
    const problems = JSON.parse(tampered.stdout) as { ok: boolean; problems: unknown[] };
    expect(problems.ok).toBe(false);
    expect(problems.problems).toEqual([{ kind: 'fiat_balance_mismatch', id: to.body.data.id, expected: '0', actual: '1' }]);
  });
});
