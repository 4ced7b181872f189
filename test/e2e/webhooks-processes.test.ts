import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { databaseDeployments, ensureBuilt, exitWithin, processTestTimeoutMs, runCli, startApiServer, type Deployment, type Spawned } from './support.js';

/**
 * Webhook delivery by real server processes (docs/webhooks.md "Several instances"): a server killed with SIGKILL in
 * the middle of an attempt loses no event — another process sends it again, under the same webhook-id, once the
 * attempt's lease has run out — and two servers on one database send each attempt exactly once.
 */

const deployments = databaseDeployments('SQLite, one file shared by both', 'hooks');
/**
 * How long a test watches for one more delivery once it has every one it expects: a duplicate would come within a
 * worker pass or two, and no event reports an absence (docs/conventions.md "Tests").
 */
const quietWindowMs = 2_000;

describe.each(deployments)('webhook delivery by server processes on %s', (_label, makeDeployment) => {
  const servers: Spawned[] = [];
  let deployment: Deployment;
  let env: NodeJS.ProcessEnv;
  let receiver: WebhookReceiver;

  const startServer = () => startApiServer(env, servers);
  const cli = <T>(...args: string[]) => runCli<T>(env, ...args);
  const client = async (baseUrl: string, name: string) => {
    const customer = await cli<{ id: string }>('customers', 'create', '--name', name);
    const { key } = await cli<{ key: string }>('keys', 'create', '--customer', customer.id);
    return client.on(baseUrl, key);
  };
  client.on = async (baseUrl: string, key: string) => {
    const token = ((await (await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } })).json()) as { data: { csrf_token: string } }).data.csrf_token;
    const headers = { 'x-api-key': key, 'x-csrf-token': token, 'content-type': 'application/json' };
    return {
      key,
      async post(url: string, body: unknown) {
        const response = await fetch(`${baseUrl}${url}`, { method: 'POST', headers, body: JSON.stringify(body) });
        const json = (await response.json()) as { data: Record<string, string> };
        if (response.status >= 300) throw new Error(`POST ${url} answered ${response.status}: ${JSON.stringify(json)}`);
        return json.data;
      },
      async get(url: string) {
        return ((await (await fetch(`${baseUrl}${url}`, { headers: { 'x-api-key': key } })).json()) as { data: any }).data;
      },
    };
  };

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
    receiver = await new WebhookReceiver().listen();
    env = {
      ...deployment.env,
      HOST: '127.0.0.1',
      SANDBOX_AUTO_SETTLE_MS: 'off',
      RATE_LIMIT_PER_SECOND: 'off',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      // An attempt's lease is twice the timeout plus 5 s: 7 s here.
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_RETRY_DELAYS: '1s',
      WEBHOOK_DISABLE_AFTER: '1000',
    };
  }, processTestTimeoutMs);

  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => exitWithin(server, 10_000)));
    for (const server of servers) server.kill();
    await receiver?.close();
    await deployment?.cleanUp();
  });

  it('loses no event to a SIGKILL in the middle of an attempt: another process sends it with the same webhook-id', { timeout: processTestTimeoutMs }, async () => {
    receiver.received.length = 0;
    const first = await startServer();
    const alice = await client(first.baseUrl, 'Killed mid-delivery');
    await alice.post('/webhooks', { url: receiver.url('/kill'), eventTypes: ['fiat_account.created'] });
    receiver.answer = () => 'hang';
    const account = await alice.post('/fiat-accounts', { accountName: 'Main', currency: 'EUR' });
    const [hung] = await receiver.waitFor(1, 20_000);
    first.server.child.kill('SIGKILL');
    await first.server.exited;

    receiver.answer = () => ({ status: 200 });
    const second = await startServer();
    const [, again] = await receiver.waitFor(2, 30_000);
    expect(again!.headers['webhook-id']).toBe(hung!.headers['webhook-id']);
    expect(JSON.parse(again!.body)).toEqual(JSON.parse(hung!.body));
    expect(JSON.parse(again!.body).data.id).toBe(account.id);
    // Recorded as delivered; nothing more is sent.
    const bob = await client.on(second.baseUrl, alice.key);
    const [hook] = await bob.get('/webhooks');
    for (let poll = 0; poll < 50; poll += 1) {
      const [delivery] = await bob.get(`/webhooks/${hook.id}/deliveries`);
      if (delivery.status === 'succeeded') break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const [delivery] = await bob.get(`/webhooks/${hook.id}/deliveries`);
    expect(delivery).toMatchObject({ id: hung!.headers['webhook-id'], status: 'succeeded', attempt_count: 1 });
    await new Promise((resolve) => setTimeout(resolve, quietWindowMs));
    expect(receiver.received).toHaveLength(2);
    second.server.child.kill('SIGTERM');
    expect(await exitWithin(second.server, 10_000)).toMatchObject({ code: 0 });
  });

  it('sends each attempt exactly once with two servers on one database', { timeout: processTestTimeoutMs }, async () => {
    receiver.received.length = 0;
    const servers = [await startServer(), await startServer()];
    const alice = await client(servers[0]!.baseUrl, 'Two deliverers');
    const onSecond = await client.on(servers[1]!.baseUrl, alice.key);
    await alice.post('/webhooks', { url: receiver.url('/two'), eventTypes: ['fiat_account.balance_updated'] });
    // Every delivery fails once, then succeeds: two attempts per webhook-id, each sent once.
    const seen = new Set<string>();
    receiver.answer = (request) => {
      const id = request.headers['webhook-id']!;
      if (seen.has(id)) return { status: 200 };
      seen.add(id);
      return { status: 500 };
    };
    const account = await alice.post('/fiat-accounts', { accountName: 'Main', currency: 'EUR' });
    const deposits = 40;
    await Promise.all(Array.from({ length: deposits }, (_, index) => (index % 2 === 0 ? alice : onSecond).post(`/sandbox/fiat-accounts/${account.id}/deposits`, { amount: 1 })));
    await receiver.waitFor(2 * deposits, 60_000);
    await new Promise((resolve) => setTimeout(resolve, quietWindowMs));
    expect(receiver.received).toHaveLength(2 * deposits);
    const perId = new Map<string, number>();
    for (const received of receiver.received) perId.set(received.headers['webhook-id']!, (perId.get(received.headers['webhook-id']!) ?? 0) + 1);
    expect(perId.size).toBe(deposits);
    expect([...perId.values()].every((count) => count === 2)).toBe(true);
    const eventIds = new Set(receiver.received.map((received) => JSON.parse(received.body).id as string));
    expect(eventIds.size).toBe(deposits);
  });
});
