import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkout, databaseDeployments, ensureBuilt, freePort, processTestTimeoutMs, runCli, spawnServer, waitForHealth, type Deployment, type Spawned } from './support.js';

/**
 * A request's objects die young (docs/operations.md "Memory"). V8 collects the young generation by scavenges and
 * moves what survived two of them to the old generation, which only a full collection frees: whatever is promoted
 * grows the heap towards the limit that sets the server's peak RSS. A payment lives a few milliseconds, scavenges
 * come every hundred payments or so, so almost nothing of a payment should be promoted. A Map from socket to
 * response, set and deleted on every request, made every request's objects survive until the next full collection
 * instead, once one of its tables had been promoted (a matter of chance, then lasting). V8's own GC trace of the
 * server, run with `npm start`'s heap flags, says how much of what the payments allocated was promoted.
 *
 * SQLite only: on PostgreSQL the first seconds of a load promote 5-10 % for a reason not found yet
 * (docs/operations.md "Memory"), which would hide what this test guards.
 */

/** The heap flags `npm start` gives node, as the benchmark reads them (bench/lib.mjs). */
const startFlags = (JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start
  .split(/\s+/)
  .filter((word) => /^--(max-semi-space-size=\d+|no-allocation-site-pretenuring)$/.test(word));
const clients = 10;
/** Payments sent before the measurement: time for the chain above to start, as it did within seconds. */
const warmUpMs = 10_000;
const paymentsPerClient = 300;
/** Share of the young generation's allocations promoted during the measurement: the chain made it 5-7 %. */
const promotedShareMax = 0.015;

/** POST `body` on a kept-alive connection of `agent`; resolves with the status once the answer has been read. */
function post(agent: http.Agent, url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: 'POST', agent, headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode!));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function call<T>(baseUrl: string, headers: Record<string, string>, path: string, body?: object): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, body ? { method: 'POST', headers, body: JSON.stringify(body) } : { headers });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { data: T }).data;
}

/** Bytes allocated and promoted by the scavenges `--trace-gc-nvp` reported in `trace`. */
function scavenges(trace: string): { allocated: number; promoted: number; count: number } {
  let allocated = 0;
  let promoted = 0;
  let count = 0;
  for (const line of trace.split('\n')) {
    if (!line.includes(' gc=s ')) continue;
    allocated += Number(/ allocated=(\d+)/.exec(line)?.[1] ?? 0);
    promoted += Number(/ promoted=(\d+)/.exec(line)?.[1] ?? 0);
    count += 1;
  }
  return { allocated, promoted, count };
}

describe.each(databaseDeployments('SQLite', 'memory-requests').slice(0, 1))('what payments leave in the old generation on %s', (_label, makeDeployment) => {
  let deployment: Deployment;
  let server: Spawned;
  let baseUrl: string;
  let headers: Record<string, string>;
  let paymentBody: string;

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
    const env = { ...deployment.env, HOST: '127.0.0.1', RATE_LIMIT_PER_SECOND: 'off', LOG_LEVEL: 'warn', SANDBOX_AUTO_SETTLE_MS: 'off' };
    const customer = await runCli<{ id: string }>(env, 'customers', 'create', '--name', 'Young Objects Ltd');
    const { key } = await runCli<{ key: string }>(env, 'keys', 'create', '--customer', customer.id);
    const port = await freePort();
    server = spawnServer(process.execPath, [...startFlags, '--trace-gc-nvp', 'dist/server.js'], { ...env, PORT: String(port) });
    baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server);
    const { csrf_token: csrfToken } = await call<{ csrf_token: string }>(baseUrl, { 'x-api-key': key }, '/csrf-token');
    headers = { 'x-api-key': key, 'x-csrf-token': csrfToken, 'content-type': 'application/json' };
    const from = (await call<{ id: string }>(baseUrl, headers, '/fiat-accounts', { accountName: 'From', currency: 'EUR' })).id;
    const to = (await call<{ id: string }>(baseUrl, headers, '/fiat-accounts', { accountName: 'To', currency: 'EUR' })).id;
    await call(baseUrl, headers, `/sandbox/fiat-accounts/${from}/deposits`, { amount: 1_000_000 });
    paymentBody = JSON.stringify({ fromAccountId: from, toAccountId: to, amount: 1, currency: 'EUR', reference: 'young' });
  }, processTestTimeoutMs);
  afterAll(async () => {
    server?.kill();
    await deployment?.cleanUp();
  });

  it('promotes almost nothing of the payments sent on kept-alive connections', { timeout: processTestTimeoutMs }, async () => {
    expect(startFlags).toContain('--no-allocation-site-pretenuring');
    const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
    const url = `${baseUrl}/payments`;
    const send = async (done: (sent: number) => boolean) => {
      const statuses = await Promise.all(
        Array.from({ length: clients }, async () => {
          const seen = new Set<number>();
          for (let sent = 0; !done(sent); sent += 1) seen.add(await post(agent, url, headers, paymentBody));
          return [...seen];
        }),
      );
      expect(new Set(statuses.flat())).toEqual(new Set([201]));
    };
    const warmUpUntil = Date.now() + warmUpMs;
    await send(() => Date.now() >= warmUpUntil);
    // Only what the trace says after the warm-up counts.
    const before = server.output().length;
    await send((sent) => sent >= paymentsPerClient);
    agent.destroy();
    const { allocated, promoted, count } = scavenges(server.output().slice(before));
    // Enough scavenges for an object to survive two of them many times over.
    expect(count).toBeGreaterThanOrEqual(5);
    expect(promoted / allocated, `${promoted} of ${allocated} bytes promoted in ${count} scavenges`).toBeLessThan(promotedShareMax);
  });
});
