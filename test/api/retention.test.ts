import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { otcQuoteKeptAfterExpiryMs } from '../../src/config/limits.js';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createPayee, deposit } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, subscribe } from '../helpers/webhooks.js';

const minute = 60_000;
const day = 24 * 60 * minute;

/**
 * The one reaper (docs/operations.md "Retention"): what expires is deleted by one claimed, batched worker, and what
 * is inside its retention is left as it was. Time moves on the app's clock; each check runs the worker once.
 */
describe('retention', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let receiver: WebhookReceiver;
  let reaper: PollingWorker;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    receiver = await new WebhookReceiver().listen();
    reaper = t.app.workers.find((worker) => worker.name === 'reaper')!;
  });
  afterEach(async () => {
    await t.storage.db.deleteFrom('webhook_subscriptions').execute();
    receiver.received.length = 0;
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const get = (url: string) => t.request({ url, key: alice.key });
  const post = (url: string, body: unknown) => t.request({ method: 'POST', url, key: alice.key, csrf: true, body });
  const attemptsOf = async (deliveryId: string) =>
    Number((await t.storage.db.selectFrom('webhook_attempts').select((eb) => eb.fn.countAll().as('count')).where('delivery_id', '=', deliveryId).executeTakeFirstOrThrow()).count);
  /** The event a new payee wrote (the customer's newest payee.created). */
  const newPayeeEvent = async () => {
    await createPayee(t, alice);
    return (await get('/events?type=payee.created&limit=1')).json().data[0] as { id: string; created_at: string };
  };

  describe('events, webhook deliveries and their attempts', () => {
    it('keeps them for 30 days, where a replay still sends them, and deletes them after', async () => {
      const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
      const old = await newPayeeEvent();
      await deliverDue(t);
      const [delivery] = (await get(`/webhooks/${hook.id}/deliveries`)).json().data;
      expect(delivery).toMatchObject({ event_id: old.id, status: 'succeeded' });

      t.clock.advance(30 * day - minute);
      const recent = await newPayeeEvent();
      await deliverDue(t);
      expect(await reaper.runOnce()).toBe(0);
      expect((await get(`/events/${old.id}`)).statusCode).toBe(200);
      // Inside the window a replay finds the event and sends it again, with the same webhook-id.
      const replay = await post(`/webhooks/${hook.id}/replay`, { since: old.created_at });
      expect(replay.json()).toEqual({ data: { queued: 2, next_since: null } });
      await deliverDue(t);
      expect(receiver.received).toHaveLength(4);
      expect(receiver.received.filter((received) => received.headers['webhook-id'] === delivery.id)).toHaveLength(2);
      expect(await attemptsOf(delivery.id)).toBe(2);

      t.clock.advance(2 * minute);
      expect(await reaper.runOnce()).toBeGreaterThanOrEqual(2);
      expect((await get(`/events/${old.id}`)).statusCode).toBe(404);
      const left = (await get(`/webhooks/${hook.id}/deliveries`)).json();
      expect(left.data.map((kept: { event_id: string }) => kept.event_id)).toEqual([recent.id]);
      expect(left.meta.pagination.total).toBe(1);
      expect(await attemptsOf(delivery.id)).toBe(0);
      // What is younger than the retention stays, and the worker finds nothing more to do.
      expect((await get(`/events/${recent.id}`)).statusCode).toBe(200);
      expect(await reaper.runOnce()).toBe(0);
    });

    it('keeps an event not yet turned into deliveries until it is, however old', async () => {
      const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
      const late = await newPayeeEvent();
      t.clock.advance(31 * day);
      await reaper.runOnce();
      expect((await get(`/events/${late.id}`)).statusCode).toBe(200);
      await deliverDue(t);
      expect(receiver.received.map((received) => JSON.parse(received.body).id)).toEqual([late.id]);
      expect((await get(`/webhooks/${hook.id}/deliveries`)).json().data).toHaveLength(1);
    });
  });

  describe('OTC quotes', () => {
    let eur: { id: string };
    let wallet: string;

    beforeAll(async () => {
      eur = await createFiatAccount(t, alice, { accountName: 'Treasury EUR', currency: 'EUR' });
      await deposit(t, alice, eur.id, 1000);
      wallet = (await post('/wallets', {})).json().data.local_id;
    });

    const quote = async () => {
      const response = await post('/otc-exchanges/quote', { sourceFrAccountId: eur.id, destinationProviderWalletId: wallet, sourceAmountEur: '100' });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data as { quoteId: string; ttlSeconds: number };
    };
    const confirm = (quoteId: string) =>
      t.request({ method: 'POST', url: '/otc-exchanges', key: alice.key, csrf: true, body: { quoteId }, headers: { 'idempotency-key': randomUUID() } });

    it('tells a late confirmation the quote expired for a day, then forgets a quote never confirmed', async () => {
      const unconfirmed = await quote();
      t.clock.advance(unconfirmed.ttlSeconds * 1000 + otcQuoteKeptAfterExpiryMs - minute);
      await reaper.runOnce();
      const late = await confirm(unconfirmed.quoteId);
      expect(late.statusCode).toBe(422);
      expect(late.json().error.code).toBe('QUOTE_EXPIRED');

      t.clock.advance(2 * minute);
      expect(await reaper.runOnce()).toBeGreaterThanOrEqual(1);
      const forgotten = await confirm(unconfirmed.quoteId);
      expect(forgotten.statusCode).toBe(404);
      expect(forgotten.json().error.code).toBe('NOT_FOUND');
    });

    it('keeps a confirmed quote with its order', async () => {
      const confirmed = await quote();
      const order = await confirm(confirmed.quoteId);
      expect(order.statusCode, order.body).toBe(201);
      t.clock.advance(confirmed.ttlSeconds * 1000 + otcQuoteKeptAfterExpiryMs + minute);
      await reaper.runOnce();
      expect((await get(`/otc-exchanges/orders/${order.json().data.orderId}`)).statusCode).toBe(200);
      expect((await confirm(confirmed.quoteId)).json().error.code).toBe('QUOTE_ALREADY_CONFIRMED');
    });
  });

  describe('provider operations', () => {
    it('deletes an operation 30 days after it finished, and not before', async () => {
      const since = t.clock.now().toISOString();
      const finishedSince = async () =>
        Number((await t.storage.db.selectFrom('provider_operations').select((eb) => eb.fn.countAll().as('count')).where('updated_at', '>=', since).where('status', '=', 'done').executeTakeFirstOrThrow()).count);
      await createFiatAccount(t, alice, { accountName: 'Operations', currency: 'EUR' });
      const finished = await finishedSince();
      expect(finished).toBeGreaterThan(0);
      t.clock.advance(30 * day - minute);
      await reaper.runOnce();
      expect(await finishedSince()).toBe(finished);
      t.clock.advance(2 * minute);
      await reaper.runOnce();
      expect(await finishedSince()).toBe(0);
    });
  });
});

describe('retention set by EVENT_RETENTION_DAYS', () => {
  it('deletes events older than the days configured, and keeps the younger ones', async () => {
    const t = await createTestApp({ env: { EVENT_RETENTION_DAYS: '2' } });
    try {
      const alice = await t.createCustomer('Alice Ltd');
      const events = async () => (await t.request({ url: '/events', key: alice.key })).json<{ data: Array<{ id: string }>; meta: { pagination: { total: number } } }>();
      await createPayee(t, alice);
      const old = (await events()).data.map((event) => event.id);
      t.clock.advance(day);
      await createPayee(t, alice);
      const all = (await events()).meta.pagination.total;
      await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
      t.clock.advance(day + minute);
      await t.app.workers.find((worker) => worker.name === 'reaper')!.runOnce();
      const kept = await events();
      expect(kept.meta.pagination.total).toBe(all - old.length);
      expect(kept.data.filter((event) => old.includes(event.id))).toEqual([]);
      expect((await t.request({ url: `/events/${old[0]}`, key: alice.key })).statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});
