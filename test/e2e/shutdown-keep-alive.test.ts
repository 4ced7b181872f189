import http from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { databaseDeployments, ensureBuilt, exitWithin, processTestTimeoutMs, runCli, shutdownWindowMs, startApiServer, type Deployment, type Spawned } from './support.js';

/**
 * SIGTERM while clients send continuously on kept-alive connections (docs/operations.md "Stopping"): every request
 * a client sent is answered — the ones in flight as usual, the ones arriving after the signal 503 SHUTTING_DOWN with
 * `Connection: close` and Retry-After — and a new connection is refused before any byte of a request is sent. None is
 * reset (ECONNRESET, "socket hang up"): a reset request may or may not have run, and a client cannot tell which.
 */

const deployments = databaseDeployments('SQLite', 'drain');
/** Connections kept alive and clients sending on them, each one request after the other. */
const clients = 16;
/** Signals sent, each to a fresh server under the same load: the race a reset needs is narrow. */
const rounds = 3;

type Outcome = { status: number; code?: string; connection?: string; retryAfter?: string } | { error: string };

function get(agent: http.Agent, baseUrl: string, key: string): Promise<Outcome> {
  return new Promise((resolve) => {
    const request = http.get(`${baseUrl}/fiat-accounts?limit=1`, { agent, headers: { 'x-api-key': key } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const code = response.statusCode === 200 ? undefined : (JSON.parse(body) as { error: { code: string } }).error.code;
        resolve({ status: response.statusCode!, code, connection: response.headers.connection, retryAfter: response.headers['retry-after'] });
      });
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ error: error.code ?? error.message }));
  });
}

describe.each(deployments)('SIGTERM under keep-alive load on %s', (_label, makeDeployment) => {
  const servers: Spawned[] = [];
  let deployment: Deployment;
  let env: NodeJS.ProcessEnv;
  let key: string;

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
    env = { ...deployment.env, HOST: '127.0.0.1', SANDBOX_AUTO_SETTLE_MS: 'off', RATE_LIMIT_PER_SECOND: 'off', LOG_LEVEL: 'warn' };
    const customer = await runCli<{ id: string }>(env, 'customers', 'create', '--name', 'Keep Alive Ltd');
    key = (await runCli<{ key: string }>(env, 'keys', 'create', '--customer', customer.id)).key;
  }, processTestTimeoutMs);
  afterEach(() => {
    for (const server of servers.splice(0)) server.kill();
  });
  afterAll(async () => deployment?.cleanUp());

  it('answers every request sent on a kept-alive connection (503 SHUTTING_DOWN with Connection: close once stopping) and resets none', { timeout: processTestTimeoutMs }, async () => {
    let refused = 0;
    for (let round = 0; round < rounds; round += 1) {
      const { baseUrl, server } = await startApiServer(env, servers);
      const agent = new http.Agent({ keepAlive: true, maxSockets: clients });
      const outcomes: Outcome[] = [];
      const warmUpOutcomes = clients * 20;
      let warmedUp!: () => void;
      const warm = new Promise<void>((resolve) => (warmedUp = resolve));
      let signalled = false;
      // Each client sends until the server refuses a connection (it stopped listening), or the window closes.
      const deadline = Date.now() + 60_000;
      const client = async () => {
        for (;;) {
          const outcome = await get(agent, baseUrl, key);
          if (outcomes.push(outcome) === warmUpOutcomes) warmedUp();
          if ('error' in outcome && (outcome.error === 'ECONNREFUSED' || signalled)) return;
          if (Date.now() > deadline) return;
        }
      };
      const sending = Array.from({ length: clients }, client);
      await warm;
      signalled = true;
      process.kill(server.child.pid!, 'SIGTERM');
      await Promise.all(sending);
      agent.destroy();

      const failures = outcomes.filter((outcome): outcome is { error: string } => 'error' in outcome && outcome.error !== 'ECONNREFUSED');
      expect(failures, `round ${round}: requests reset instead of answered\n${server.output()}`).toEqual([]);
      const answered = outcomes.filter((outcome) => 'status' in outcome);
      for (const outcome of answered) {
        if ('error' in outcome || outcome.status === 200) continue;
        expect(outcome).toEqual({ status: 503, code: 'SHUTTING_DOWN', connection: 'close', retryAfter: '1' });
        refused += 1;
      }
      expect(await exitWithin(server, shutdownWindowMs), server.output()).toEqual({ code: 0, signal: null });
    }
    // Requests did arrive on idle connections after the signal: the refusal was exercised, not only the refused connects.
    expect(refused).toBeGreaterThan(0);
  });
});
