import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FaultProxy } from '../helpers/tcp-faults.js';
import {
  databaseDeployments,
  ensureBuilt,
  exitWithin,
  freePort,
  processTestTimeoutMs,
  runCli,
  spawnServer,
  startApiServer,
  type Deployment,
  type Spawned,
} from './support.js';

/**
 * Real server processes and their database: two instances on PostgreSQL survive the database going away under load
 * (every connection dropped, new ones refused) and come back by themselves; and an instance started after a kill -9
 * of its predecessor under load answers /ready within 5 s, on both databases, even while another session holds the
 * migration lock (docs/operations.md "Faults" and "Start-up").
 */

const started: Spawned[] = [];

afterEach(async () => {
  for (const server of started) server.child.kill('SIGTERM');
  await Promise.all(started.map((server) => exitWithin(server, 10_000)));
  for (const server of started.splice(0)) server.kill();
});

interface Caller {
  baseUrl: string;
  headers: Record<string, string>;
}

async function callerOf(baseUrl: string, key: string): Promise<Caller> {
  const response = await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } });
  expect(response.status).toBe(200);
  const token = ((await response.json()) as { data: { csrf_token: string } }).data.csrf_token;
  return { baseUrl, headers: { 'x-api-key': key, 'x-csrf-token': token, 'content-type': 'application/json' } };
}

/** A keyed sandbox deposit of `amount`; status 0 when the connection failed. */
async function deposit(via: Caller, accountId: string, key: string, amount: number): Promise<{ status: number; retryAfter: string | null; code?: string }> {
  try {
    const response = await fetch(`${via.baseUrl}/sandbox/fiat-accounts/${accountId}/deposits`, {
      method: 'POST',
      headers: { ...via.headers, 'idempotency-key': key },
      body: JSON.stringify({ amount }),
      signal: AbortSignal.timeout(20_000),
    });
    const body = (await response.json()) as { error?: { code: string } };
    return { status: response.status, retryAfter: response.headers.get('retry-after'), ...(body.error ? { code: body.error.code } : {}) };
  } catch {
    return { status: 0, retryAfter: null };
  }
}

async function balanceOf(via: Caller, accountId: string): Promise<number> {
  const response = await fetch(`${via.baseUrl}/fiat-accounts/${accountId}`, { headers: { 'x-api-key': via.headers['x-api-key']! } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { data: { balance: number } }).data.balance;
}

async function statusOf(url: string): Promise<number> {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(5_000) })).status;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The customer's key and a fresh EUR account, made through the CLI and the first server. */
async function setUp(env: NodeJS.ProcessEnv, baseUrl: string): Promise<{ key: string; accountId: string }> {
  const customer = await runCli<{ id: string }>(env, 'customers', 'create', '--name', 'Faults Ltd');
  const { key } = await runCli<{ key: string }>(env, 'keys', 'create', '--customer', customer.id);
  const via = await callerOf(baseUrl, key);
  const response = await fetch(`${baseUrl}/fiat-accounts`, { method: 'POST', headers: via.headers, body: JSON.stringify({ accountName: 'Faults', currency: 'EUR' }) });
  expect(response.status).toBe(201);
  return { key, accountId: ((await response.json()) as { data: { id: string } }).data.id };
}

/** Keyed deposits of 1.00 in `loops` parallel loops until `stop()`; every key and each answer's status. */
function depositLoad(callers: Caller[], accountId: string, loops: number) {
  const answers = new Map<string, number[]>();
  const refusals: Array<{ status: number; retryAfter: string | null; code?: string }> = [];
  const watchers = new Set<(status: number) => void>();
  let stopping = false;
  const runs = Array.from({ length: loops }, async (_unused, loop) => {
    while (!stopping) {
      const key = randomUUID();
      const answer = await deposit(callers[loop % callers.length]!, accountId, key, 1);
      answers.set(key, [answer.status]);
      for (const watcher of watchers) watcher(answer.status);
      if (answer.status !== 201) {
        refusals.push(answer);
        // The pace of a client retrying a refusal, not a wait for anything.
        await sleep(50);
      }
    }
  });
  return {
    answers,
    refusals,
    /** Resolves once `count` more answers of `status` have come: the load's own progress, not a guess at its pace. */
    answered(status: number, count: number): Promise<void> {
      let seen = 0;
      return new Promise((resolve) => {
        const watcher = (answered: number) => {
          if (answered !== status || (seen += 1) < count) return;
          watchers.delete(watcher);
          resolve();
        };
        watchers.add(watcher);
      });
    },
    async stop() {
      stopping = true;
      await Promise.all(runs);
    },
  };
}

const postgresUrl = process.env.TEST_DATABASE_URL;
const postgresDeployment = databaseDeployments('SQLite', 'db-faults').find(([label]) => label === 'PostgreSQL');

describe.skipIf(postgresUrl === undefined || postgresDeployment === undefined)('two instances on PostgreSQL while the database goes away', { timeout: processTestTimeoutMs }, () => {
  let deployment: Deployment;
  let proxy: FaultProxy;

  beforeAll(async () => {
    await ensureBuilt();
    deployment = postgresDeployment![1]();
    await deployment.prepare();
    proxy = await FaultProxy.startFor(postgresUrl!, 5432);
  }, processTestTimeoutMs);
  afterAll(async () => {
    await proxy?.close();
    await deployment?.cleanUp();
  });

  it('answer 503 DATABASE_UNAVAILABLE with Retry-After (never a 500), /ready 503 and /health 200 while every connection is dropped and refused; neither exits; workers pause once and resume; every keyed deposit lands exactly once and the ledger verifies', async () => {
    const env: NodeJS.ProcessEnv = {
      ...deployment.env,
      DATABASE_URL: proxy.urlFor(deployment.env.DATABASE_URL!),
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_SECOND: 'off',
      IDEMPOTENCY_LEASE_SECONDS: '2',
      LOG_LEVEL: 'info',
    };
    // The CLI migrates the schema directly, before either server opens it.
    await runCli(deployment.env, 'migrate');
    const one = await startApiServer(env, started);
    const two = await startApiServer(env, started);
    const { key, accountId } = await setUp(deployment.env, one.baseUrl);
    const callers = [await callerOf(one.baseUrl, key), await callerOf(two.baseUrl, key)];

    const load = depositLoad(callers, accountId, 6);
    await load.answered(201, 10);
    const refused = load.answered(503, 6);
    proxy.dropAll();
    proxy.refuse();
    // The database stays away until both servers answer 503 and each has paused its workers.
    await refused;
    for (const { baseUrl } of [one, two]) {
      expect(await statusOf(`${baseUrl}/ready`)).toBe(503);
      expect(await statusOf(`${baseUrl}/health`)).toBe(200);
    }
    await Promise.all([one, two].map(({ server }) => server.logged('worker paused by a storage fault')));
    const landing = load.answered(201, 10);
    await proxy.restore();
    await landing;
    await load.stop();

    expect(one.server.child.exitCode).toBeNull();
    expect(two.server.child.exitCode).toBeNull();
    const unavailable = load.refusals.filter((refusal) => refusal.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const refusal of unavailable) {
      expect(refusal.code).toBe('DATABASE_UNAVAILABLE');
      expect(Number(refusal.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // Only the documented refusals: 503 while the database was away, 409 for a key whose first attempt is in flight.
    expect(load.refusals.filter((refusal) => refusal.status !== 503 && refusal.status !== 409)).toEqual([]);

    // Every key that got no 201 is retried until it does: each deposit lands once, whatever its first answer was.
    for (const [depositKey, statuses] of load.answers) {
      for (let tries = 0; statuses.at(-1) !== 201 && tries < 40; tries += 1) {
        const answer = await deposit(callers[tries % 2]!, accountId, depositKey, 1);
        statuses.push(answer.status);
        if (answer.status !== 201) await sleep(250);
      }
      expect(statuses.at(-1), `key ${depositKey}: ${statuses.join(', ')}`).toBe(201);
    }
    expect(await balanceOf(callers[0]!, accountId)).toBe(load.answers.size);
    expect((await runCli<{ ok: boolean }>(deployment.env, 'ledger', 'verify')).ok).toBe(true);
    for (const { baseUrl } of [one, two]) expect(await statusOf(`${baseUrl}/ready`)).toBe(200);

    // Each worker logs once when it pauses and once when it resumes, not once per pass.
    const workersLogged = (server: Spawned, message: string) =>
      server
        .output()
        .split('\n')
        .filter((line) => line.includes(message))
        .map((line) => (JSON.parse(line) as { worker: string }).worker);
    for (const { server } of [one, two]) {
      const paused = workersLogged(server, 'worker paused by a storage fault');
      expect(paused.length).toBeGreaterThan(0);
      expect(new Set(paused).size).toBe(paused.length);
      expect(server.output()).not.toContain('worker pass failed');
      await server.logged('worker resumed', paused.length);
      expect(workersLogged(server, 'worker resumed').sort()).toEqual([...paused].sort());
    }
  });
});

/** Spawns `node dist/server.js` on a free port and polls /ready until 200; the time from spawn to that answer. */
async function startAndTimeReady(env: NodeJS.ProcessEnv): Promise<{ baseUrl: string; server: Spawned; readyMs: number }> {
  const port = await freePort();
  const spawnedAt = performance.now();
  const server = spawnServer(process.execPath, ['dist/server.js'], { ...env, PORT: String(port) });
  started.push(server);
  const baseUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    if (server.child.exitCode !== null) throw new Error(`the server exited before it was ready:\n${server.output()}`);
    if ((await statusOf(`${baseUrl}/ready`)) === 200) return { baseUrl, server, readyMs: performance.now() - spawnedAt };
    if (performance.now() - spawnedAt > 60_000) throw new Error(`not ready within 60 s:\n${server.output()}`);
    await sleep(25);
  }
}

/**
 * A restart answers /ready within 5 s of its start (docs/operations.md "Start-up"), which the fault harness measures
 * under its own load (`npm run chaos`, "time to ready"). Here the suite's other files share the two cores, so the
 * bound is twice that: what it catches is a start-up that waits on a dead instance's lock or lease (a minute or
 * more), not a slow machine.
 */
const readyAfterRestartMs = 10_000;

describe.each(databaseDeployments('SQLite', 'restart'))('a restart after kill -9 under load on %s', (label, makeDeployment) => {
  let deployment: Deployment;

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
  }, processTestTimeoutMs);
  afterAll(async () => deployment?.cleanUp());

  it(
    `answers /ready within 5 s of its start${label === 'PostgreSQL' ? ', though another session holds the migration lock' : ''}, and the ledger verifies`,
    async () => {
      const env: NodeJS.ProcessEnv = { ...deployment.env, HOST: '127.0.0.1', RATE_LIMIT_PER_SECOND: 'off', LOG_LEVEL: 'info' };
      const first = await startApiServer(env, started);
      const { key, accountId } = await setUp(env, first.baseUrl);
      const load = depositLoad([await callerOf(first.baseUrl, key)], accountId, 4);
      await load.answered(201, 10);

      let lockHolder: pg.Client | undefined;
      if (label === 'PostgreSQL') {
        // The lock a migrating instance holds (src/storage/database.ts): held by a session that never lets go.
        const schema = new URL(env.DATABASE_URL!).searchParams.get('options')!.replace('-c search_path=', '');
        lockHolder = new pg.Client({ connectionString: postgresUrl });
        await lockHolder.connect();
        await lockHolder.query(`select pg_advisory_lock(${0x43415049}, hashtext($1))`, [schema]);
      }
      try {
        first.server.child.kill('SIGKILL');
        await first.server.exited;
        const next = await startAndTimeReady(env);
        await load.stop();
        const line = next.server
          .output()
          .split('\n')
          .find((candidate) => candidate.includes('customer-api ready'));
        expect(next.readyMs, `start-up phases (ms since start): ${line}`).toBeLessThan(readyAfterRestartMs);
        expect(JSON.parse(line!).startupMs).toEqual(expect.objectContaining({ storage: expect.any(Number), migrations: expect.any(Number), listen: expect.any(Number) }));
      } finally {
        await lockHolder?.end();
      }
      expect((await runCli<{ ok: boolean }>(env, 'ledger', 'verify')).ok).toBe(true);
    },
    processTestTimeoutMs,
  );
});
