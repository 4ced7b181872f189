import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { webhookAttemptsInFlightPerSubscriptionMax, webhookDeliveriesWaitingPerSubscriptionMax, workerPollIntervalMs } from '../../src/config/limits.js';
import { additiveEventTypes, eventTypes } from '../../src/events/catalog.js';
import { createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { createPayee, createVirtualAccount, deposit, pay, settle } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver, type ReceivedWebhook, type ReceiverAnswer } from '../helpers/webhook-receiver.js';
import { deliverDue, resetWebhooks, subscribe } from '../helpers/webhooks.js';

const verify = (secret: string, received: ReceivedWebhook) =>
  new Webhook(secret).verify(received.body, {
    'webhook-id': received.headers['webhook-id']!,
    'webhook-timestamp': received.headers['webhook-timestamp']!,
    'webhook-signature': received.headers['webhook-signature']!,
  }) as { id: string; type: string; created_at: string; data: Record<string, unknown> };

describe('webhook delivery', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_RETRY_DELAYS: '1s,1s,1s', WEBHOOK_DISABLE_AFTER: '3', WEBHOOK_TIMEOUT_MS: '500' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    receiver = await new WebhookReceiver().listen();
  });
  afterEach(async () => {
    // Each test starts with no subscriptions, nothing due and an empty receiver.
    await resetWebhooks(t, receiver);
    // Signatures are checked against the real time (Standard Webhooks' five-minute tolerance).
    t.clock.set(new Date());
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const post = (customer: TestCustomer, url: string, body?: unknown) => t.request({ method: 'POST', url, key: customer.key, csrf: true, ...(body === undefined ? {} : { body }) });
  const get = (customer: TestCustomer, url: string) => t.request({ url, key: customer.key });

  it('delivers every spec §6 event type, signed per Standard Webhooks, with the record the API answered', async () => {
    const all = await subscribe(t, alice, { url: receiver.url(), eventTypes: [...eventTypes] });
    await deliverDue(t); // nothing before the subscription existed is sent
    expect(receiver.received).toHaveLength(0);

    const master = await createFiatAccount(t, alice, { accountName: 'Main', currency: 'EUR' });
    const virtual = await createVirtualAccount(t, alice, master.id);
    await deposit(t, alice, master.id, 1000);
    await deposit(t, alice, virtual.id, 50);
    const payee = await createPayee(t, alice);
    const completed = await pay(t, alice, { fromAccountId: master.id, payeeId: payee.id, amount: 10, currency: 'EUR', reference: 'Invoice 1' });
    await settle(t, alice, completed.id, 'completed');
    const failed = await pay(t, alice, { fromAccountId: master.id, payeeId: payee.id, amount: 20, currency: 'EUR', reference: 'Invoice 2' });
    await settle(t, alice, failed.id, 'failed');
    const person = await createIndividual(t, alice);
    expect((await post(alice, `/sandbox/end-users/${person.id}/verification`, { outcome: 'review_required' })).statusCode).toBe(200);
    expect((await post(alice, `/sandbox/fiat-accounts/${master.id}/status`, { status: 'frozen' })).statusCode).toBe(200);
    expect((await post(alice, `/sandbox/virtual-accounts/${virtual.id}/status`, { status: 'frozen' })).statusCode).toBe(200);
    expect((await post(alice, `/sandbox/payees/${payee.id}/status`, { status: 'inactive' })).statusCode).toBe(200);

    await deliverDue(t);
    const bodies = receiver.received.map((received) => verify(all.signing_secret, received));
    expect(new Set(bodies.map((body) => body.type))).toEqual(new Set(eventTypes));
    for (const [index, body] of bodies.entries()) {
      expect(Object.keys(body).sort()).toEqual(['created_at', 'data', 'id', 'type']);
      const headers = receiver.received[index]!.headers;
      expect(headers['content-type']).toBe('application/json');
      expect(Math.abs(Number(headers['webhook-timestamp']) - t.clock.now().getTime() / 1000)).toBeLessThan(2);
    }
    // `data` is the record the API answered at that moment.
    const payeeCreated = bodies.find((body) => body.type === 'payee.created')!;
    expect(payeeCreated.data).toEqual({ ...payee });
    const payeeStatus = bodies.find((body) => body.type === 'payee.status_updated')!;
    expect(payeeStatus.data).toEqual((await get(alice, `/payees/${payee.id}`)).json().data);
    // A payment's events carry the full record of GET /payments/{id}, of which the creation answer is a part.
    const paymentCreated = bodies.find((body) => body.type === 'payment.created' && body.data.id === completed.id)!;
    expect(paymentCreated.data).toMatchObject({ ...completed, status: 'pending' });
    const paymentCompleted = bodies.find((body) => body.type === 'payment.completed')!;
    expect(paymentCompleted.data).toEqual((await get(alice, `/payments/${completed.id}`)).json().data);
    // The event ids are those of GET /events, and each delivery has its own stable webhook-id.
    const event = await get(alice, `/events/${payeeCreated.id}`);
    expect(event.json().data).toEqual({ ...payeeCreated, deliveries: [expect.objectContaining({ subscription_id: all.id, status: 'succeeded' })] });
    expect(new Set(receiver.received.map((received) => received.headers['webhook-id'])).size).toBe(receiver.received.length);
    // Bob's events went nowhere near Alice's receiver.
    await createFiatAccount(t, bob);
    const before = receiver.received.length;
    await deliverDue(t);
    expect(receiver.received).toHaveLength(before);
  });

  it('sends only the types a subscription lists, to active subscriptions, additive types included', async () => {
    const payees = await subscribe(t, alice, { url: receiver.url('/payees'), eventTypes: ['payee.created'] });
    const wallets = await subscribe(t, alice, { url: receiver.url('/wallets'), eventTypes: [...additiveEventTypes] });
    const off = await subscribe(t, alice, { url: receiver.url('/off'), eventTypes: ['payee.created'], isActive: false });
    await createPayee(t, alice);
    await createFiatAccount(t, alice);
    await deliverDue(t);
    expect(receiver.received.map((received) => received.path)).toEqual(['/payees']);
    expect(verify(payees.signing_secret, receiver.received[0]!).type).toBe('payee.created');
    expect(wallets.id).not.toBe(off.id);
  });

  it('retries a failing receiver on the schedule, then disables the subscription; nothing is sent after', async () => {
    receiver.answer = () => ({ status: 500 });
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    await createPayee(t, alice);
    await deliverDue(t);
    expect(receiver.received).toHaveLength(1);
    // Not due before its delay.
    t.clock.advance(900);
    await deliverDue(t);
    expect(receiver.received).toHaveLength(1);
    t.clock.advance(100);
    await deliverDue(t);
    expect(receiver.received).toHaveLength(2);
    let record = (await get(alice, `/webhooks/${hook.id}`)).json().data;
    expect(record).toMatchObject({ is_active: true, consecutive_failures: 2 });
    t.clock.advance(1000);
    await deliverDue(t);
    expect(receiver.received).toHaveLength(3);
    record = (await get(alice, `/webhooks/${hook.id}`)).json().data;
    expect(record).toMatchObject({ is_active: false, consecutive_failures: 3, disabled_reason: '3 consecutive failed attempts', disabled_at: t.clock.now().toISOString() });
    // The same event each time, under one webhook-id.
    expect(new Set(receiver.received.map((received) => received.headers['webhook-id'])).size).toBe(1);

    // Disabled: neither the pending retry nor new events go out.
    await createPayee(t, alice);
    for (let step = 0; step < 3; step += 1) {
      t.clock.advance(5000);
      await deliverDue(t);
    }
    expect(receiver.received).toHaveLength(3);
    const deliveries = (await get(alice, `/webhooks/${hook.id}/deliveries`)).json();
    expect(deliveries.meta.pagination).toEqual({ page: 1, limit: 50, total: 1 });
    const [delivery] = deliveries.data;
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 3, last_status_code: 500, last_error: 'the receiver answered 500' });
    const { attempts } = (await get(alice, `/webhooks/${hook.id}/deliveries/${delivery.id}`)).json().data;
    expect(attempts.map((attempt: { attempt_number: number }) => attempt.attempt_number)).toEqual([3, 2, 1]);
    expect(attempts[0]).toMatchObject({ succeeded: false, status_code: 500 });
    expect(delivery.id).toBe(receiver.received[0]!.headers['webhook-id']);
    expect((await post(alice, `/webhooks/${hook.id}/test`)).json().error.code).toBe('WEBHOOK_DISABLED');

    // Turned on again: counters cleared, the pending retry goes out and succeeds.
    receiver.answer = () => ({ status: 204 });
    const on = await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: alice.key, csrf: true, body: { isActive: true } });
    expect(on.json().data).toMatchObject({ is_active: true, consecutive_failures: 0, disabled_at: null, disabled_reason: null });
    await deliverDue(t);
    expect(receiver.received).toHaveLength(4);
    const after = (await get(alice, `/webhooks/${hook.id}/deliveries?status=succeeded`)).json().data;
    expect(after).toHaveLength(1);
    expect(after[0]).toMatchObject({ status: 'succeeded', attempt_count: 4, next_attempt_at: null, last_status_code: 204, last_error: null });
  });

  it('fails a delivery for good when its schedule is exhausted, while successes in between keep the subscription on', async () => {
    const hook = await subscribe(t, bob, { url: receiver.url(), eventTypes: ['payee.created'] });
    const doomed = await createPayee(t, bob);
    receiver.answer = (request) => (request.body.includes(doomed.id) ? { status: 500 } : { status: 200 });
    await deliverDue(t);
    for (let round = 0; round < 3; round += 1) {
      await createPayee(t, bob);
      t.clock.advance(1000);
      await deliverDue(t);
    }
    // 1 + 3 retries of the doomed event, each followed or preceded by a success of another.
    expect(receiver.received.filter((received) => received.body.includes(doomed.id))).toHaveLength(4);
    const failed = (await get(bob, `/webhooks/${hook.id}/deliveries?status=failed`)).json().data;
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ status: 'failed', attempt_count: 4, next_attempt_at: null, last_status_code: 500 });
    expect((await get(bob, `/webhooks/${hook.id}`)).json().data.is_active).toBe(true);
    t.clock.advance(60_000);
    await deliverDue(t);
    expect(receiver.received.filter((received) => received.body.includes(doomed.id))).toHaveLength(4);
  });

  it('resets the run of failures on a success', async () => {
    const hook = await subscribe(t, bob, { url: receiver.url(), eventTypes: ['payee.created'] });
    let failuresLeft = 2;
    receiver.answer = () => (failuresLeft-- > 0 ? { status: 503 } : { status: 200 });
    await createPayee(t, bob);
    await deliverDue(t);
    t.clock.advance(1000);
    await deliverDue(t);
    expect((await get(bob, `/webhooks/${hook.id}`)).json().data.consecutive_failures).toBe(2);
    t.clock.advance(1000);
    await deliverDue(t);
    expect((await get(bob, `/webhooks/${hook.id}`)).json().data.consecutive_failures).toBe(0);
    expect(receiver.received).toHaveLength(3);
  });

  it('records attempts that end together in one go, counting the run of failures across them', async () => {
    receiver.answer = () => ({ status: 500 });
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    for (let index = 0; index < 5; index += 1) await createPayee(t, alice);
    await deliverDue(t);
    // Five attempts in flight at once: the third failure in a row disables, the two after it still count.
    expect(receiver.received).toHaveLength(5);
    const record = (await get(alice, `/webhooks/${hook.id}`)).json().data;
    expect(record).toMatchObject({ is_active: false, consecutive_failures: 5, disabled_reason: '3 consecutive failed attempts' });
    const deliveries = (await get(alice, `/webhooks/${hook.id}/deliveries`)).json().data;
    expect(deliveries).toHaveLength(5);
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({ status: 'pending', attempt_count: 1, last_status_code: 500 });
      expect((await get(alice, `/webhooks/${hook.id}/deliveries/${delivery.id}`)).json().data.attempts).toHaveLength(1);
    }
  });

  it('disables at once on 410 Gone, treats a redirect as a failure without following it, and honours Retry-After', async () => {
    const gone = await subscribe(t, alice, { url: receiver.url('/gone'), eventTypes: ['payee.created'] });
    const moved = await subscribe(t, alice, { url: receiver.url('/moved'), eventTypes: ['payee.created'] });
    const busy = await subscribe(t, alice, { url: receiver.url('/busy'), eventTypes: ['payee.created'] });
    receiver.answer = (request): ReceiverAnswer =>
      request.path === '/gone' ? { status: 410 }
      : request.path === '/moved' ? { status: 302, headers: { location: receiver.url('/elsewhere') } }
      : request.path === '/busy' ? { status: 429, headers: { 'retry-after': '120' } }
      : { status: 200 };
    await createPayee(t, alice);
    await deliverDue(t);
    expect(receiver.received.map((received) => received.path).sort()).toEqual(['/busy', '/gone', '/moved']);
    expect((await get(alice, `/webhooks/${gone.id}`)).json().data).toMatchObject({ is_active: false, consecutive_failures: 1, disabled_reason: 'the endpoint answered 410 Gone' });
    const redirected = (await get(alice, `/webhooks/${moved.id}/deliveries`)).json().data[0];
    expect(redirected).toMatchObject({ status: 'pending', last_status_code: 302 });
    const throttled = (await get(alice, `/webhooks/${busy.id}/deliveries`)).json().data[0];
    expect(Date.parse(throttled.next_attempt_at) - t.clock.now().getTime()).toBe(120_000);
    // After the 1 s of the schedule only the redirect is retried; the throttled one waits its 120 s.
    t.clock.advance(1000);
    await deliverDue(t);
    expect(receiver.received.map((received) => received.path).filter((path) => path === '/busy')).toHaveLength(1);
    expect(receiver.received.map((received) => received.path).filter((path) => path === '/moved')).toHaveLength(2);
    t.clock.advance(119_000);
    await deliverDue(t);
    expect(receiver.received.map((received) => received.path).filter((path) => path === '/busy')).toHaveLength(2);
  });

  it('records a receiver that does not answer in time as a failed attempt without a status', async () => {
    receiver.answer = () => 'hang';
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    await createPayee(t, alice);
    await deliverDue(t);
    const [listed] = (await get(alice, `/webhooks/${hook.id}/deliveries`)).json().data;
    const [attempt] = (await get(alice, `/webhooks/${hook.id}/deliveries/${listed.id}`)).json().data.attempts;
    expect(attempt).toMatchObject({ succeeded: false, status_code: null, error: 'no answer within 500 ms' });
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(400);
    await t.request({ method: 'DELETE', url: `/webhooks/${hook.id}`, key: alice.key, csrf: true });
  });

  it('signs with both secrets for a day after a rotation', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const rotated = await post(alice, `/webhooks/${hook.id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const fresh = rotated.json().data;
    expect(fresh.signing_secret).not.toBe(hook.signing_secret);
    expect(fresh.signing_secret.startsWith(fresh.signing_secret_prefix)).toBe(true);
    await createPayee(t, alice);
    await deliverDue(t);
    const [received] = receiver.received;
    expect(received!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(fresh.signing_secret, received!).type).toBe('payee.created');
    expect(verify(hook.signing_secret, received!).type).toBe('payee.created');
    t.clock.advance(24 * 60 * 60 * 1000 + 1000);
    await createPayee(t, alice);
    await deliverDue(t);
    expect(receiver.received[1]!.headers['webhook-signature']!.split(' ')).toHaveLength(1);
  });

  it('leaves each of two concurrent rotations with a secret that verifies', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const rotations = await Promise.all([post(alice, `/webhooks/${hook.id}/rotate-secret`), post(alice, `/webhooks/${hook.id}/rotate-secret`)]);
    await createPayee(t, alice);
    await deliverDue(t);
    for (const rotation of rotations) expect(verify(rotation.json().data.signing_secret, receiver.received[0]!).type).toBe('payee.created');
  });

  it('sends a signed test event to one subscription on request', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url('/test'), eventTypes: ['payee.created'] });
    await subscribe(t, alice, { url: receiver.url('/other'), eventTypes: ['payee.created'] });
    const response = await post(alice, `/webhooks/${hook.id}/test`);
    expect(response.statusCode).toBe(202);
    const { delivery_id: deliveryId, event } = response.json().data;
    expect(event.type).toBe('webhook.test');
    await deliverDue(t);
    expect(receiver.received.map((received) => received.path)).toEqual(['/test']);
    expect(verify(hook.signing_secret, receiver.received[0]!)).toEqual(event);
    expect(receiver.received[0]!.headers['webhook-id']).toBe(deliveryId);
    const [delivery] = (await get(alice, `/webhooks/${hook.id}/deliveries`)).json().data;
    expect(delivery).toMatchObject({ id: deliveryId, event_type: 'webhook.test', status: 'succeeded', last_status_code: 200 });
    const [attempt] = (await get(alice, `/webhooks/${hook.id}/deliveries/${deliveryId}`)).json().data.attempts;
    expect(attempt).toMatchObject({ attempt_number: 1, succeeded: true, status_code: 200, error: null });
  });

  it('lists events newest first with pagination and a type filter, and replays them to a subscription', async () => {
    const carol = await t.createCustomer('Carol SA');
    const first = await createPayee(t, carol);
    t.clock.advance(10);
    await createFiatAccount(t, carol);
    t.clock.advance(10);
    const second = await createPayee(t, carol);
    const events = (await get(carol, '/events?limit=2')).json();
    expect(events.meta.pagination).toEqual({ page: 1, limit: 2, total: 3 });
    expect(events.data.map((event: { type: string }) => event.type)).toEqual(['payee.created', 'fiat_account.created']);
    expect(events.data[0].data.id).toBe(second.id);
    const payeesOnly = (await get(carol, '/events?type=payee.created')).json();
    expect(payeesOnly.data.map((event: { data: { id: string } }) => event.data.id)).toEqual([second.id, first.id]);
    expect((await get(carol, `/events/${events.data[0].id}`)).json().data).toEqual({ ...events.data[0], deliveries: [] });
    const foreign = await get(alice, `/events/${events.data[0].id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual((await get(alice, '/events/0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f')).json());
    expect((await get(carol, '/events?limit=500')).json().meta.pagination.limit).toBe(100);

    // A subscription made afterwards gets nothing until a replay; a second replay keeps the webhook-ids.
    await deliverDue(t);
    const hook = await subscribe(t, carol, { url: receiver.url(), eventTypes: ['payee.created'] });
    await deliverDue(t);
    expect(receiver.received).toHaveLength(0);
    const since = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const replay = await post(carol, `/webhooks/${hook.id}/replay`, { since });
    expect(replay.statusCode).toBe(202);
    expect(replay.json().data).toEqual({ queued: 2, next_since: null });
    await deliverDue(t);
    expect(receiver.received.map((received) => verify(hook.signing_secret, received).data.id)).toEqual([first.id, second.id]);
    await post(carol, `/webhooks/${hook.id}/replay`, { since });
    await deliverDue(t);
    expect(receiver.received.slice(2).map((received) => received.headers['webhook-id'])).toEqual(receiver.received.slice(0, 2).map((received) => received.headers['webhook-id']));
    const tooOld = await post(carol, `/webhooks/${hook.id}/replay`, { since: new Date(t.clock.now().getTime() - 31 * 86_400_000).toISOString() });
    expect(tooOld.statusCode).toBe(400);
    expect((await post(carol, `/webhooks/${hook.id}/replay`, { since: 'yesterday' })).statusCode).toBe(400);
  });

  it('wakes the fan-out when a transaction commits, instead of leaving the event to its next poll', async () => {
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const fanOut = t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!;
    const wake = vi.spyOn(fanOut, 'wake');
    try {
      await createPayee(t, alice);
      expect(wake).toHaveBeenCalled();
    } finally {
      wake.mockRestore();
    }
  });

  it('keeps a dead receiver from delaying another customer’s deliveries', async () => {
    receiver.answer = (request) => (request.path === '/dead' ? 'hang' : { status: 200 });
    await subscribe(t, alice, { url: receiver.url('/dead'), eventTypes: ['payee.created'] });
    for (let index = 0; index < webhookAttemptsInFlightPerSubscriptionMax + 8; index += 1) await createPayee(t, alice);
    await subscribe(t, bob, { url: receiver.url('/alive'), eventTypes: ['payee.created'] });
    await createPayee(t, bob);
    const fanOut = t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!;
    const delivery = t.app.workers.find((worker) => worker.name === 'webhook-delivery')!;
    await fanOut.runOnce();
    // One pass claims every due delivery (the dead receiver's beyond its share wait in memory): its share of
    // attempts go out, and Bob's alongside them.
    expect(await delivery.runOnce()).toBe(webhookAttemptsInFlightPerSubscriptionMax + 8 + 1);
    const alive = await receiver.waitFor(webhookAttemptsInFlightPerSubscriptionMax + 1, 2000);
    expect(alive.filter((received) => received.path === '/alive')).toHaveLength(1);
    expect(alive.filter((received) => received.path === '/dead')).toHaveLength(webhookAttemptsInFlightPerSubscriptionMax);
    // A second pass takes nothing more, not even deliveries due since: a receiver holding every request slot gets
    // nothing claimed ahead (the 8 claimed first wait for its slots).
    await createPayee(t, alice);
    await fanOut.runOnce();
    expect(await delivery.runOnce()).toBe(0);
    expect(receiver.received.filter((received) => received.path === '/dead')).toHaveLength(webhookAttemptsInFlightPerSubscriptionMax);
    await t.app.webhookDeliveries.idle();
    await t.storage.db.deleteFrom('webhook_subscriptions').execute();
  });

  it('claims again for a receiver being sent to whose last claim took its whole share without listing the due subscriptions, and lists them when deliveries are queued, a poll interval on, or after a short claim', async () => {
    // An app of its own whose attempts time out only after 30 s: the receiver below holds requests open while the test
    // decides how many deliveries wait in memory at each pass.
    const app = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_TIMEOUT_MS: '30000' } });
    const carol = await app.createCustomer('Carol SARL');
    const dave = await app.createCustomer('Dave AB');
    const inFlight = webhookAttemptsInFlightPerSubscriptionMax;
    const waitingMax = webhookDeliveriesWaitingPerSubscriptionMax;
    const share = inFlight + waitingMax;
    // The receiver answers /busy's requests while its budget lasts and holds the others open until answerHanging().
    let budget = waitingMax - inFlight;
    receiver.answer = (request) => (request.path === '/busy' && !(budget-- > 0) ? 'hang' : { status: 200 });
    let arrivals = 0;
    /** Answers the requests held open and `answers` more, and waits for the requests that then start. */
    const catchUp = async (answers: number) => {
      budget = answers;
      receiver.answerHanging();
      arrivals += inFlight + answers;
      await receiver.waitFor(arrivals);
    };
    const fanOut = app.app.workers.find((worker) => worker.name === 'webhook-fan-out')!;
    const delivery = app.app.workers.find((worker) => worker.name === 'webhook-delivery')!;
    const executed = vi.spyOn(app.storage.db.getExecutor(), 'executeQuery');
    const listings = () => executed.mock.calls.filter(([query]) => query.sql.includes('min(d.next_attempt_at)')).length;
    const payees = share * 3;
    try {
      await subscribe(app, carol, { url: receiver.url('/busy'), eventTypes: ['payee.created'] });
      for (let batch = 0; batch < 6; batch += 1) await Promise.all(Array.from({ length: payees / 6 }, () => createPayee(app, carol)));
      await fanOut.runOnce();
      const before = listings();
      // New deliveries: the pass lists the due subscriptions and claims the receiver's whole share. The receiver
      // answers some, then holds its slots: fewer than half the waiting allowance still wait, so it wants more.
      expect(await delivery.runOnce()).toBe(share);
      expect(listings() - before).toBe(1);
      arrivals = waitingMax;
      await receiver.waitFor(arrivals);
      // Claimed for straight away, without a listing: its whole share again (less those held open and still waiting).
      expect(await delivery.runOnce()).toBe(waitingMax - inFlight);
      expect(listings() - before).toBe(1);
      // Another customer's new delivery: the fan-out says deliveries were queued, and the next pass lists again, so
      // it is claimed beside the busy receiver's.
      const caughtUp = waitingMax / 2 + 1;
      await catchUp(caughtUp);
      await subscribe(app, dave, { url: receiver.url('/other'), eventTypes: ['payee.created'] });
      await createPayee(app, dave);
      await fanOut.runOnce();
      expect(await delivery.runOnce()).toBe(share - inFlight - (waitingMax - inFlight - caughtUp) + 1);
      expect(listings() - before).toBe(2);
      arrivals += 1;
      await receiver.waitFor(arrivals);
      expect(receiver.received.filter((received) => received.path === '/other')).toHaveLength(1);
      // A poll interval later on the worker's clock, the due subscriptions are listed again.
      await catchUp(caughtUp);
      app.clock.set(new Date(app.clock.now().getTime() + workerPollIntervalMs));
      await delivery.runOnce();
      expect(listings() - before).toBe(3);
      // A claim without a listing that comes back short (the receiver's deliveries ran out): the next pass lists.
      await catchUp(caughtUp);
      const left = payees - share - (waitingMax - inFlight) - 2 * (share - inFlight - (waitingMax - inFlight - caughtUp));
      expect(await delivery.runOnce()).toBe(left);
      expect(listings() - before).toBe(3);
      await catchUp(0);
      expect(await delivery.runOnce()).toBe(0);
      expect(listings() - before).toBe(4);
      budget = Number.POSITIVE_INFINITY;
      receiver.answerHanging();
      await deliverDue(app);
      expect(new Set(receiver.received.filter((received) => received.path === '/busy').map((received) => received.headers['webhook-id'])).size).toBe(payees);
    } finally {
      executed.mockRestore();
      budget = Number.POSITIVE_INFINITY;
      receiver.answerHanging();
      await app.close();
    }
  });

  /** A subscription whose one delivery this instance is attempting, the receiver holding the request open. */
  const attemptHanging = async (path: string) => {
    receiver.answer = () => 'hang';
    const hook = await subscribe(t, alice, { url: receiver.url(path), eventTypes: ['payee.created'] });
    await createPayee(t, alice);
    await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
    expect(await t.app.workers.find((worker) => worker.name === 'webhook-delivery')!.runOnce()).toBe(1);
    await receiver.waitFor(1, 2000);
    return hook;
  };

  /** The subscription's delivery once the hanging attempt timed out (500 ms) and its record was written, fenced. */
  const deliveryAfterTimeout = async (hookId: string) => {
    await t.app.webhookDeliveries.idle();
    return (await get(alice, `/webhooks/${hookId}/deliveries`)).json<{ data: Record<string, unknown>[] }>().data[0];
  };

  it('records nothing of an attempt whose delivery another instance took over meanwhile (its lease ran out)', async () => {
    const hook = await attemptHanging('/taken');
    // Another instance's claim: the delivery's lease is now its own.
    const otherLease = new Date(t.clock.now().getTime() + 60_000).toISOString();
    await t.storage.db.updateTable('webhook_deliveries').set({ leased_until: otherLease }).where('subscription_id', '=', hook.id).execute();
    const delivery = await deliveryAfterTimeout(hook.id);
    // Still due since it was made, the other instance's lease on it untouched.
    expect(delivery).toMatchObject({ status: 'pending', attempt_count: 0, next_attempt_at: delivery!.created_at, last_attempt_at: null, last_error: null });
    const row = await t.storage.db.selectFrom('webhook_deliveries').select('leased_until').where('id', '=', String(delivery!.id)).executeTakeFirstOrThrow();
    expect(row.leased_until).toBe(otherLease);
    expect((await get(alice, `/webhooks/${hook.id}/deliveries/${String(delivery!.id)}`)).json().data.attempts).toEqual([]);
    expect((await get(alice, `/webhooks/${hook.id}`)).json().data).toMatchObject({ consecutive_failures: 0, is_active: true });
  });

  it('records nothing of an attempt whose delivery was finished meanwhile (it holds no lease any more)', async () => {
    const hook = await attemptHanging('/finished');
    // Another instance's attempt succeeded after this one's lease ran out: the delivery is done, with no next attempt
    // and no lease.
    const finishedAt = t.clock.now().toISOString();
    await t.storage.db
      .updateTable('webhook_deliveries')
      .set({ status: 'succeeded', attempt_count: 1, next_attempt_at: null, leased_until: null, last_attempt_at: finishedAt, last_status_code: 204 })
      .where('subscription_id', '=', hook.id)
      .execute();
    const delivery = await deliveryAfterTimeout(hook.id);
    expect(delivery).toMatchObject({ status: 'succeeded', attempt_count: 1, next_attempt_at: null, last_attempt_at: finishedAt, last_status_code: 204, last_error: null });
    expect((await get(alice, `/webhooks/${hook.id}/deliveries/${String(delivery!.id)}`)).json().data.attempts).toEqual([]);
    expect((await get(alice, `/webhooks/${hook.id}`)).json().data).toMatchObject({ consecutive_failures: 0, is_active: true });
  });

  it('cuts an attempt in progress short on shutdown: its delivery is due again at once, nothing recorded', async () => {
    // An app of its own: stopping the delivery worker is for good. A timeout far beyond the test's, so only the
    // shutdown can end the attempt.
    const stopping = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_TIMEOUT_MS: '60000' } });
    try {
      const carol = await stopping.createCustomer('Carol SA');
      receiver.answer = () => 'hang';
      const hook = await subscribe(stopping, carol, { url: receiver.url('/stopping'), eventTypes: ['payee.created'] });
      await createPayee(stopping, carol);
      await stopping.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce();
      expect(await stopping.app.workers.find((worker) => worker.name === 'webhook-delivery')!.runOnce()).toBe(1);
      await receiver.waitFor(1, 2000);
      const startedAt = performance.now();
      await stopping.app.webhookDeliveries.stop();
      expect(performance.now() - startedAt).toBeLessThan(5000);
      const deliveries = await stopping.storage.db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', hook.id).execute();
      expect(deliveries.map((row) => ({ status: row.status, attempts: Number(row.attempt_count), nextAttemptAt: row.next_attempt_at, leasedUntil: row.leased_until }))).toEqual([
        { status: 'pending', attempts: 0, nextAttemptAt: stopping.clock.now().toISOString(), leasedUntil: null },
      ]);
      expect(await stopping.storage.db.selectFrom('webhook_attempts').selectAll().where('subscription_id', '=', hook.id).execute()).toEqual([]);
    } finally {
      await stopping.close();
    }
  });

  it('releases a delivery claimed ahead that waited past half the timeout, instead of attempting it late in its lease', async () => {
    receiver.answer = () => 'hang';
    const hook = await subscribe(t, alice, { url: receiver.url('/hanging'), eventTypes: ['payee.created'] });
    for (let index = 0; index < webhookAttemptsInFlightPerSubscriptionMax + 2; index += 1) await createPayee(t, alice);
    const fanOut = t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!;
    const delivery = t.app.workers.find((worker) => worker.name === 'webhook-delivery')!;
    await fanOut.runOnce();
    expect(await delivery.runOnce()).toBe(webhookAttemptsInFlightPerSubscriptionMax + 2);
    await receiver.waitFor(webhookAttemptsInFlightPerSubscriptionMax, 2000);
    // Past half the timeout (500 ms here) since the claim: when the hanging attempts time out and free their slots,
    // the two waiting are released (their lease gone), due again at once for any instance, not sent.
    t.clock.advance(251);
    await t.app.webhookDeliveries.idle();
    expect(receiver.received).toHaveLength(webhookAttemptsInFlightPerSubscriptionMax);
    const released = await t.storage.db.selectFrom('webhook_deliveries').selectAll().where('subscription_id', '=', hook.id).where('attempt_count', '=', 0).execute();
    expect(released.map((row) => ({ status: row.status, nextAttemptAt: row.next_attempt_at, leasedUntil: row.leased_until }))).toEqual(
      Array.from({ length: 2 }, () => ({ status: 'pending', nextAttemptAt: t.clock.now().toISOString(), leasedUntil: null })),
    );
    await t.storage.db.deleteFrom('webhook_subscriptions').execute();
  });
});
