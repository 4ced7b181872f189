import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseDeployments, ensureBuilt, freePort, processTestTimeoutMs, runCli, spawnServer, waitForHealth, type Deployment, type Spawned } from './support.js';

/**
 * Neither start-up nor a burst sizes the old generation for itself (docs/operations.md "Memory"). V8 sets the old
 * generation's next limit after each full collection at what it kept times a factor it derives from the recent rate
 * of promotion; start-up promotes fast (code, compiled schemas), and so does a burst of webhook deliveries (hundreds
 * of attempts in flight, each surviving scavenges), so V8 chose its largest factor, 4, and the heap grew up to that
 * limit before collecting. The server fixes the factor at 1.5 for its whole life; it used to restore V8's own 10 s
 * after listening, and a burst after that peaked far higher. V8's own trace (`--trace-gc-verbose`) prints each factor
 * it applies.
 */

const factorPattern = /\[HeapController\] factor ([0-9.]+) /g;
/** Past the 10 s after listening during which the factor used to be fixed. */
const formerFixedWindowMs = 11_000;
/** How long the burst may take to bring a full collection after that window. */
const burstMaxMs = 40_000;
const clients = 10;
/** One customer's webhook subscriptions at most (docs/spec.md §8): each payment is ten deliveries. */
const subscriptions = 10;

/** The growing factors V8 applied in `output`. */
function factorsIn(output: string): number[] {
  return [...output.matchAll(factorPattern)].map((match) => Number(match[1]));
}

async function call<T>(baseUrl: string, headers: Record<string, string>, path: string, body?: object): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, body ? { method: 'POST', headers, body: JSON.stringify(body) } : { headers });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { data: T }).data;
}

describe.each(databaseDeployments('SQLite', 'memory-startup'))('the heap limits on %s', (_label, makeDeployment) => {
  let deployment: Deployment;
  let server: Spawned;
  let baseUrl: string;
  let readyAtMs: number;
  let receiver: http.Server | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
    const port = await freePort();
    const env = { ...deployment.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info', RATE_LIMIT_PER_SECOND: 'off', SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' };
    server = spawnServer(process.execPath, ['--trace-gc-verbose', 'dist/server.js'], env);
    baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server);
    readyAtMs = Date.now();
  }, processTestTimeoutMs);
  afterAll(async () => {
    server?.kill();
    receiver?.closeAllConnections();
    receiver?.close();
    await deployment?.cleanUp();
  });

  it('lets the old generation grow by half of what each start-up collection kept, not four times', () => {
    const output = server.output();
    const ready = output.indexOf('customer-api ready');
    expect(ready).toBeGreaterThan(0);
    const factors = factorsIn(output.slice(0, ready));
    // Start-up makes full collections of its own (loading the app), each of which sets a limit.
    expect(factors.length).toBeGreaterThan(0);
    expect(factors.every((factor) => factor === 1.5), `factors ${factors.join(', ')}`).toBe(true);
  });

  it('keeps that factor through a burst of webhook deliveries long after start-up', { timeout: processTestTimeoutMs }, async () => {
    receiver = http.createServer((request, response) => request.resume().on('end', () => response.writeHead(204).end()));
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
    const customer = await runCli<{ id: string }>(deployment.env, 'customers', 'create', '--name', 'Burst Ltd');
    const { key } = await runCli<{ key: string }>(deployment.env, 'keys', 'create', '--customer', customer.id);
    const { csrf_token: csrfToken } = await call<{ csrf_token: string }>(baseUrl, { 'x-api-key': key }, '/csrf-token');
    const headers = { 'x-api-key': key, 'x-csrf-token': csrfToken, 'content-type': 'application/json' };
    const from = (await call<{ id: string }>(baseUrl, headers, '/fiat-accounts', { accountName: 'From', currency: 'EUR' })).id;
    const to = (await call<{ id: string }>(baseUrl, headers, '/fiat-accounts', { accountName: 'To', currency: 'EUR' })).id;
    await call(baseUrl, headers, `/sandbox/fiat-accounts/${from}/deposits`, { amount: 1_000_000 });
    for (let index = 0; index < subscriptions; index += 1) await call(baseUrl, headers, '/webhooks', { url: receiverUrl, eventTypes: ['payment.created'] });
    const payment = { fromAccountId: from, toAccountId: to, amount: 1, currency: 'EUR', reference: 'burst' };

    // Payments, each fanned out to ten deliveries, until a full collection came after the former window (or the bound).
    let afterWindow: number | undefined;
    const deadline = Date.now() + burstMaxMs;
    const collectedAfterWindow = () => afterWindow !== undefined && server.output().includes('[HeapController] factor', afterWindow);
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (Date.now() < deadline && !collectedAfterWindow()) {
          await call(baseUrl, headers, '/payments', payment);
          if (afterWindow === undefined && Date.now() - readyAtMs >= formerFixedWindowMs) afterWindow = server.output().length;
        }
      }),
    );
    const factors = afterWindow === undefined ? [] : factorsIn(server.output().slice(afterWindow));
    expect(factors.length, 'no full collection during the burst').toBeGreaterThan(0);
    expect(factors.every((factor) => factor === 1.5), `factors ${factors.join(', ')}`).toBe(true);
  });
});
