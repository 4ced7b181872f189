import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CapturedLog } from '../helpers/captured-log.js';
import { createPayee } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, resetWebhooks, subscribe } from '../helpers/webhooks.js';

/** One sample of a Prometheus text scrape: the series `name` with exactly these labels. */
function sample(scrape: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  for (const line of scrape.split('\n')) {
    const match = /^([A-Za-z_:][\w:]*)(?:\{([^}]*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const have = match[2] === undefined || match[2] === '' ? [] : match[2].split(',');
    if (have.length === wanted.length && wanted.every((pair) => have.includes(pair))) return Number(match[3]);
  }
  throw new Error(`no sample ${name}${JSON.stringify(labels)} in the scrape`);
}

/** A loopback URL where nothing listens: connections are refused. */
async function deadUrl(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hooks`;
}

/** docs/operations.md "Metrics": the delivery series, scraped from the real metrics listener. */
describe('webhook delivery metrics', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let receiver: WebhookReceiver;
  const log = new CapturedLog();

  beforeAll(async () => {
    t = await createTestApp({
      env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_RETRY_DELAYS: '1s,1s', WEBHOOK_DISABLE_AFTER: '3', WEBHOOK_TIMEOUT_MS: '500', LOG_LEVEL: 'warn' },
      logStream: log.stream,
    });
    alice = await t.createCustomer('Alice Ltd');
    receiver = await new WebhookReceiver().listen();
  });
  afterEach(async () => {
    await resetWebhooks(t, receiver);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const post = (url: string, body: unknown) => t.request({ method: 'POST', url, key: alice.key, csrf: true, body });
  const patch = (url: string, body: unknown) => t.request({ method: 'PATCH', url, key: alice.key, csrf: true, body });

  /** The scrape's figures minus those of `before` (counters and histograms only grow). */
  async function since(before: string) {
    const now = await t.metrics();
    return (name: string, labels: Record<string, string> = {}) => sample(now, name, labels) - sample(before, name, labels);
  }

  it('counts attempts by outcome, deliveries given up and subscriptions disabled automatically', async () => {
    receiver.answer = (request) => ({ status: request.path === '/fail' ? 500 : request.path === '/gone' ? 410 : 200 });
    const before = await t.metrics();
    expect(sample(before, 'webhook_attempts_total', { outcome: 'no_answer' })).toBe(0);
    expect(sample(before, 'webhook_subscriptions_auto_disabled_total', { reason: 'gone' })).toBe(0);
    await subscribe(t, alice, { url: receiver.url('/ok'), eventTypes: ['payee.created'] });
    await subscribe(t, alice, { url: receiver.url('/fail'), eventTypes: ['payee.created'] });
    await subscribe(t, alice, { url: receiver.url('/gone'), eventTypes: ['payee.created'] });
    await subscribe(t, alice, { url: await deadUrl(), eventTypes: ['payee.created'] });
    await createPayee(t, alice);
    await deliverDue(t);
    let delta = await since(before);
    expect(delta('webhook_attempts_total', { outcome: 'succeeded' })).toBe(1);
    expect(delta('webhook_attempts_total', { outcome: 'error_status' })).toBe(2);
    expect(delta('webhook_attempts_total', { outcome: 'no_answer' })).toBe(1);
    expect(delta('webhook_subscriptions_auto_disabled_total', { reason: 'gone' })).toBe(1);
    expect(delta('webhook_subscriptions_auto_disabled_total', { reason: 'failures' })).toBe(0);

    // The health of every subscription, read from the database when scraped: two failing once, one disabled.
    t.clock.advance(1000);
    let scrape = await t.metrics();
    expect(sample(scrape, 'webhook_subscriptions', { state: 'healthy' })).toBe(1);
    expect(sample(scrape, 'webhook_subscriptions', { state: 'failing' })).toBe(2);
    expect(sample(scrape, 'webhook_subscriptions', { state: 'disabled' })).toBe(1);
    expect(sample(scrape, 'webhook_subscriptions_failing', { at_least: '1' })).toBe(2);
    expect(sample(scrape, 'webhook_subscriptions_failing', { at_least: '10' })).toBe(0);
    expect(sample(scrape, 'webhook_subscription_failing_longest_seconds')).toBe(1);

    // Two more rounds: the schedule (1 s, 1 s) is exhausted, and three failures in a row disable both.
    await deliverDue(t);
    t.clock.advance(1000);
    await deliverDue(t);
    delta = await since(before);
    expect(delta('webhook_attempts_total', { outcome: 'succeeded' })).toBe(1);
    expect(delta('webhook_attempts_total', { outcome: 'error_status' })).toBe(4);
    expect(delta('webhook_attempts_total', { outcome: 'no_answer' })).toBe(3);
    expect(delta('webhook_deliveries_failed_total')).toBe(2);
    expect(delta('webhook_subscriptions_auto_disabled_total', { reason: 'failures' })).toBe(2);
    scrape = await t.metrics();
    expect(sample(scrape, 'webhook_subscriptions', { state: 'failing' })).toBe(0);
    expect(sample(scrape, 'webhook_subscriptions', { state: 'disabled' })).toBe(3);
    expect(sample(scrape, 'webhook_subscription_failing_longest_seconds')).toBe(0);
  });

  it('measures the lag from an event’s commit to its first attempt, and from each attempt’s due time to its start', async () => {
    let answers = 0;
    receiver.answer = () => ({ status: (answers += 1) === 1 ? 500 : 200 });
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const before = await t.metrics();
    const createdAt = t.clock.now();
    await createPayee(t, alice);
    // Fanned out and attempted 2 s after the event's commit: due at once, so no wait after its due time.
    t.clock.advance(2000);
    await deliverDue(t);
    let delta = await since(before);
    expect(delta('webhook_first_attempt_lag_seconds_count')).toBe(1);
    expect(delta('webhook_first_attempt_lag_seconds_sum')).toBe(2);
    expect(delta('webhook_first_attempt_lag_seconds_bucket', { le: '1' })).toBe(0);
    expect(delta('webhook_first_attempt_lag_seconds_bucket', { le: '2.5' })).toBe(1);
    expect(delta('webhook_attempt_due_lag_seconds_count')).toBe(1);
    expect(delta('webhook_attempt_due_lag_seconds_bucket', { le: '0.01' })).toBe(1);

    // The retry was due 1 s after the failure and starts 3 s late: a due lag, not a first attempt.
    t.clock.advance(4000);
    await deliverDue(t);
    delta = await since(before);
    expect(delta('webhook_first_attempt_lag_seconds_count')).toBe(1);
    expect(delta('webhook_attempt_due_lag_seconds_count')).toBe(2);
    expect(delta('webhook_attempt_due_lag_seconds_sum')).toBe(3);
    expect(delta('webhook_attempt_due_lag_seconds_bucket', { le: '2.5' })).toBe(1);
    expect(delta('webhook_attempt_due_lag_seconds_bucket', { le: '5' })).toBe(2);

    // A replay's deliveries, restarted or new, carry old events: they are no first attempts of the fan-out.
    const later = await subscribe(t, alice, { url: receiver.url('/later'), eventTypes: ['payee.created'] });
    for (const id of [hook.id, later.id]) expect((await post(`/webhooks/${id}/replay`, { since: createdAt.toISOString() })).statusCode).toBe(202);
    await deliverDue(t);
    delta = await since(before);
    expect(delta('webhook_attempts_total', { outcome: 'succeeded' })).toBe(3);
    expect(delta('webhook_first_attempt_lag_seconds_count')).toBe(1);
    expect(delta('webhook_attempt_due_lag_seconds_count')).toBe(4);

    // Fanned out, then taken over after another instance's lease on them ran out (it died mid-attempt): that
    // instance counted their first attempts, so these are not.
    await createPayee(t, alice);
    await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
    const ranOut = new Date(t.clock.now().getTime() - 1).toISOString();
    const takenOver = await t.storage.db.updateTable('webhook_deliveries').set({ leased_until: ranOut }).where('status', '=', 'pending').where('subscription_id', 'in', [hook.id, later.id]).executeTakeFirst();
    expect(Number(takenOver.numUpdatedRows)).toBe(2);
    await deliverDue(t);
    delta = await since(before);
    expect(delta('webhook_attempts_total', { outcome: 'succeeded' })).toBe(5);
    expect(delta('webhook_first_attempt_lag_seconds_count')).toBe(1);
    expect(delta('webhook_attempt_due_lag_seconds_count')).toBe(6);
  });

  it('reports the backlog of due deliveries and how long the oldest has waited, as the database holds them', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    for (let count = 0; count < 3; count += 1) await createPayee(t, alice);
    await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
    let scrape = await t.metrics();
    expect(sample(scrape, 'webhook_deliveries_due')).toBe(3);
    expect(sample(scrape, 'webhook_deliveries_oldest_due_seconds')).toBe(0);
    t.clock.advance(5000);
    expect(sample(await t.metrics(), 'webhook_deliveries_oldest_due_seconds')).toBe(5);
    // A disabled subscription's deliveries wait for nothing: they are no backlog until it is on again.
    expect((await patch(`/webhooks/${hook.id}`, { isActive: false })).statusCode).toBe(200);
    scrape = await t.metrics();
    expect(sample(scrape, 'webhook_deliveries_due')).toBe(0);
    expect(sample(scrape, 'webhook_deliveries_oldest_due_seconds')).toBe(0);
    expect((await patch(`/webhooks/${hook.id}`, { isActive: true })).statusCode).toBe(200);
    expect(sample(await t.metrics(), 'webhook_deliveries_due')).toBe(3);
    await deliverDue(t);
    scrape = await t.metrics();
    expect(sample(scrape, 'webhook_deliveries_due')).toBe(0);
    expect(sample(scrape, 'webhook_deliveries_oldest_due_seconds')).toBe(0);
    expect(receiver.received).toHaveLength(3);

    // A delivery being attempted holds a lease: it is pending, but waits for nothing.
    receiver.answer = () => 'hang';
    await createPayee(t, alice);
    await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
    expect(sample(await t.metrics(), 'webhook_deliveries_due')).toBe(1);
    expect(await t.app.workers.find((worker) => worker.name === 'webhook-delivery')!.runOnce()).toBe(1);
    expect(sample(await t.metrics(), 'webhook_deliveries_due')).toBe(0);
    await t.app.webhookDeliveries.idle();
  });

  it('still answers a scrape when the figures cannot be read from the database, with their last values, and logs why', async () => {
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    await createPayee(t, alice);
    await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
    expect(sample(await t.metrics(), 'webhook_deliveries_due')).toBe(1);
    const from = log.lines.length;
    // The reads fail for real: the table they read is not there.
    await sql`alter table webhook_deliveries rename to webhook_deliveries_away`.execute(t.storage.db);
    try {
      const scrape = await t.metrics();
      expect(sample(scrape, 'webhook_deliveries_due')).toBe(1);
      expect(sample(scrape, 'webhook_subscriptions', { state: 'healthy' })).toBe(1);
      expect(await log.waitFor('webhook delivery metrics could not be read', 1, { from })).toHaveLength(1);
    } finally {
      await sql`alter table webhook_deliveries_away rename to webhook_deliveries`.execute(t.storage.db);
    }
  });
});
