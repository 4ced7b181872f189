import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPayee } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, resetWebhooks, subscribe } from '../helpers/webhooks.js';

/** docs/webhooks.md "Attempts", "Retrying one delivery", "Replay", "Health": what a developer needs to debug a receiver. */
describe('debugging webhook deliveries', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let receiver: WebhookReceiver;
  const hourMs = 60 * 60 * 1000;
  const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';

  beforeAll(async () => {
    // Two retries an hour apart, then failed; unset WEBHOOK_DISABLE_AFTER: disabled after 3 failures over 5 days.
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_RETRY_DELAYS: '1h,1h', WEBHOOK_TIMEOUT_MS: '500' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    receiver = await new WebhookReceiver().listen();
  });
  afterEach(async () => {
    await resetWebhooks(t, receiver);
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const post = (customer: TestCustomer, url: string, body?: unknown) => t.request({ method: 'POST', url, key: customer.key, csrf: true, ...(body === undefined ? {} : { body }) });
  const get = (customer: TestCustomer, url: string) => t.request({ url, key: customer.key });
  const deliveriesOf = async (customer: TestCustomer, hookId: string, status = '') =>
    (await get(customer, `/webhooks/${hookId}/deliveries${status === '' ? '' : `?status=${status}`}`)).json().data as Array<Record<string, any>>;
  /** The newest delivery of the subscription as its own read answers it: with its attempts. */
  const newestDelivery = async (customer: TestCustomer, hookId: string) => {
    const [listed] = await deliveriesOf(customer, hookId);
    const response = await get(customer, `/webhooks/${hookId}/deliveries/${listed!.id}`);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data as Record<string, any>;
  };

  it('keeps with each attempt the headers sent, and the status, headers and first 4 KiB of the answer', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    receiver.answer = () => ({ status: 500, headers: { 'x-request-id': 'req-42', 'set-cookie': 'session=s3cret' }, body: 'a' + 'é'.repeat(3000) });
    await createPayee(t, alice);
    await deliverDue(t);
    const delivery = await newestDelivery(alice, hook.id);
    const [attempt] = delivery.attempts;
    const sent = receiver.received[0]!.headers;
    expect(attempt.request_headers).toEqual({
      'content-type': 'application/json',
      'user-agent': sent['user-agent'],
      'webhook-id': delivery.id,
      'webhook-timestamp': sent['webhook-timestamp'],
      'webhook-signature': sent['webhook-signature'],
    });
    expect(attempt.status_code).toBe(500);
    expect(attempt.response_headers).toMatchObject({ 'x-request-id': 'req-42', 'set-cookie': '(not kept)' });
    // 4096 bytes: the "a" and 2047 two-byte characters; the character cut at the bound is left out, not garbled.
    expect(attempt.response_body).toBe('a' + 'é'.repeat(2047));
    expect(attempt.response_body_truncated).toBe(true);
    // The signing secret is nowhere in what is kept, nor the receiver's cookie.
    const listed = JSON.stringify(delivery);
    expect(listed).not.toContain(hook.signing_secret);
    expect(listed).not.toContain(hook.signing_secret.slice('whsec_'.length));
    expect(listed).not.toContain('s3cret');
  });

  it('lists deliveries without their attempts’ exchanges, which one delivery’s own read answers', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const other = await subscribe(t, alice, { url: receiver.url('/other'), eventTypes: ['payee.created'] });
    const answerBody = 'x'.repeat(4096);
    receiver.answer = () => ({ status: 500, headers: { 'x-trace': 'trace-7' }, body: answerBody });
    for (let index = 0; index < 3; index += 1) await createPayee(t, alice);
    await deliverDue(t);
    t.clock.advance(hourMs);
    await deliverDue(t);

    const list = await get(alice, `/webhooks/${hook.id}/deliveries?limit=100`);
    expect(list.statusCode).toBe(200);
    const listed = list.json().data as Array<Record<string, any>>;
    expect(listed).toHaveLength(3);
    // The summary: status, attempts made, the last outcome and the times; nothing of what was exchanged.
    expect(Object.keys(listed[0]!).sort()).toEqual(
      ['attempt_count', 'created_at', 'event_id', 'event_type', 'id', 'last_attempt_at', 'last_error', 'last_status_code', 'next_attempt_at', 'status', 'subscription_id', 'updated_at'],
    );
    expect(listed[0]).toMatchObject({ status: 'pending', attempt_count: 2, last_status_code: 500, last_attempt_at: t.clock.now().toISOString() });
    expect(list.body).not.toContain(answerBody);
    expect(list.body).not.toContain('trace-7');
    expect(list.body.length).toBeLessThan(3 * 1024);

    const read = await get(alice, `/webhooks/${hook.id}/deliveries/${listed[0]!.id}`);
    expect(read.statusCode).toBe(200);
    const { attempts, ...summary } = read.json().data;
    expect(summary).toEqual(listed[0]);
    expect(attempts.map((attempt: Record<string, any>) => [attempt.attempt_number, attempt.status_code, attempt.response_body, attempt.response_headers['x-trace']])).toEqual([
      [2, 500, answerBody, 'trace-7'],
      [1, 500, answerBody, 'trace-7'],
    ]);

    // Another subscription's, another customer's and an unknown delivery all answer 404 alike.
    const notFound = [
      await get(alice, `/webhooks/${other.id}/deliveries/${listed[0]!.id}`),
      await get(bob, `/webhooks/${hook.id}/deliveries/${listed[0]!.id}`),
      await get(alice, `/webhooks/${hook.id}/deliveries/${unknownId}`),
    ];
    expect(notFound.map((response) => [response.statusCode, response.json().error.code])).toEqual([
      [404, 'NOT_FOUND'],
      [404, 'NOT_FOUND'],
      [404, 'NOT_FOUND'],
    ]);
    expect(notFound[0]!.json()).toEqual(notFound[2]!.json());
    expect((await get(alice, `/webhooks/${hook.id}/deliveries/not-a-uuid`)).statusCode).toBe(400);
    const writer = (await t.createKey(alice.id, { scopes: ['payees:read'] })).key;
    expect((await t.request({ url: `/webhooks/${hook.id}/deliveries/${listed[0]!.id}`, key: writer })).statusCode).toBe(403);
  });

  it('keeps an answer that is not UTF-8 text, NUL included, as text, and nothing of an answer that never came', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    receiver.answer = () => ({ status: 200, body: Buffer.from([0x6f, 0x00, 0xff, 0x6b]) });
    await createPayee(t, alice);
    await deliverDue(t);
    const [ok] = (await newestDelivery(alice, hook.id)).attempts;
    expect(ok).toMatchObject({ succeeded: true, status_code: 200, response_body: 'o\uFFFD\uFFFDk', response_body_truncated: false });

    receiver.answer = () => 'hang';
    await createPayee(t, alice);
    await deliverDue(t);
    const [hung] = (await newestDelivery(alice, hook.id)).attempts;
    expect(hung).toMatchObject({ succeeded: false, status_code: null, response_headers: null, response_body: null, response_body_truncated: false });
    expect(hung.request_headers['webhook-id']).toBe((await deliveriesOf(alice, hook.id))[0]!.id);
  });

  it('keeps the status of an answer whose body is cut short: longer than 64 KiB, or no longer coming within the timeout', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    receiver.answer = () => ({ status: 200, body: 'y'.repeat(256 * 1024) });
    await createPayee(t, alice);
    await deliverDue(t);
    const [long] = (await newestDelivery(alice, hook.id)).attempts;
    expect(long).toMatchObject({ succeeded: true, status_code: 200, response_body: 'y'.repeat(4096), response_body_truncated: true, error: null });

    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '7200' }, body: 'partial', stall: true });
    await createPayee(t, alice);
    await deliverDue(t);
    const stalled = await newestDelivery(alice, hook.id);
    expect(stalled.attempts[0]).toMatchObject({ succeeded: false, status_code: 503, response_body: 'partial', response_body_truncated: false, error: 'the receiver answered 503' });
    // The answer's Retry-After (2 h) is honoured over the 1 h retry delay, though its body never ended.
    expect(Date.parse(stalled.next_attempt_at) - t.clock.now().getTime()).toBe(2 * hourMs);
  });

  it('counts a delivery being retried as failing in the filter, beside the ones that failed for good', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const doomed = await createPayee(t, alice);
    receiver.answer = (request) => (request.body.includes(doomed.id) ? { status: 503 } : { status: 200 });
    await deliverDue(t);
    await createPayee(t, alice);
    await deliverDue(t);
    const retrying = await deliveriesOf(alice, hook.id, 'failing');
    expect(retrying.map((delivery) => [delivery.status, delivery.attempt_count])).toEqual([['pending', 1]]);
    expect(await deliveriesOf(alice, hook.id, 'failed')).toEqual([]);
    expect((await get(alice, `/webhooks/${hook.id}/deliveries?status=failing`)).json().meta.pagination.total).toBe(1);
    for (let retry = 0; retry < 2; retry += 1) {
      t.clock.advance(hourMs);
      await deliverDue(t);
    }
    const failed = await deliveriesOf(alice, hook.id, 'failing');
    expect(failed.map((delivery) => [delivery.status, delivery.attempt_count])).toEqual([['failed', 3]]);
    expect(await deliveriesOf(alice, hook.id, 'failed')).toEqual(failed);
    expect((await get(alice, `/webhooks/${hook.id}/deliveries?status=broken`)).statusCode).toBe(400);
  });

  it('retries one delivery now under the same webhook-id: a retry waiting for later, a succeeded one, and a failed one once more', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    receiver.answer = () => ({ status: 500 });
    await createPayee(t, alice);
    await deliverDue(t);
    const [waiting] = await deliveriesOf(alice, hook.id);
    expect(Date.parse(waiting!.next_attempt_at) - t.clock.now().getTime()).toBe(hourMs);

    // The receiver is fixed: the retry goes out now instead of in an hour.
    receiver.answer = () => ({ status: 200 });
    const retried = await post(alice, `/webhooks/${hook.id}/deliveries/${waiting!.id}/retry`);
    expect(retried.statusCode).toBe(202);
    expect(retried.json().data).toMatchObject({ id: waiting!.id, status: 'pending', attempt_count: 1, next_attempt_at: t.clock.now().toISOString(), last_status_code: 500 });
    // The delivery as the list shows it: its attempts are read on their own.
    expect(retried.json().data).not.toHaveProperty('attempts');
    expect((await newestDelivery(alice, hook.id)).attempts).toHaveLength(1);
    await deliverDue(t);
    expect(receiver.received.map((received) => received.headers['webhook-id'])).toEqual([waiting!.id, waiting!.id]);
    expect((await deliveriesOf(alice, hook.id))[0]).toMatchObject({ status: 'succeeded', attempt_count: 2, last_status_code: 200, last_error: null });

    // A succeeded delivery is sent again on request.
    expect((await post(alice, `/webhooks/${hook.id}/deliveries/${waiting!.id}/retry`)).statusCode).toBe(202);
    await deliverDue(t);
    expect(receiver.received).toHaveLength(3);
    expect((await deliveriesOf(alice, hook.id))[0]).toMatchObject({ status: 'succeeded', attempt_count: 3 });

    // A delivery whose schedule is exhausted gets one more attempt, and fails again when it fails.
    receiver.answer = () => ({ status: 500 });
    await createPayee(t, alice);
    await deliverDue(t);
    for (let retry = 0; retry < 2; retry += 1) {
      t.clock.advance(hourMs);
      await deliverDue(t);
    }
    const [failed] = await deliveriesOf(alice, hook.id, 'failed');
    expect(failed).toMatchObject({ attempt_count: 3 });
    const again = await post(alice, `/webhooks/${hook.id}/deliveries/${failed!.id}/retry`);
    expect(again.json().data).toMatchObject({ status: 'pending', attempt_count: 3 });
    await deliverDue(t);
    expect((await deliveriesOf(alice, hook.id, 'failed'))[0]).toMatchObject({ id: failed!.id, status: 'failed', attempt_count: 4, next_attempt_at: null });
    t.clock.advance(24 * hourMs);
    const before = receiver.received.length;
    await deliverDue(t);
    expect(receiver.received).toHaveLength(before);
  });

  it('leaves a delivery being attempted as it is: no second attempt beside it', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    receiver.answer = () => 'hang';
    await createPayee(t, alice);
    const fanOut = t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!;
    const worker = t.app.workers.find((worker) => worker.name === 'webhook-delivery')!;
    await fanOut.runOnce();
    expect(await worker.runOnce()).toBe(1);
    await receiver.waitFor(1);
    const [inFlight] = await deliveriesOf(alice, hook.id);
    const answer = await post(alice, `/webhooks/${hook.id}/deliveries/${inFlight!.id}/retry`);
    expect(answer.statusCode).toBe(202);
    expect(answer.json().data).toMatchObject({ status: 'pending', attempt_count: 0, next_attempt_at: inFlight!.next_attempt_at });
    expect(await worker.runOnce()).toBe(0);
    await t.app.webhookDeliveries.idle();
    expect(receiver.received).toHaveLength(1);
    expect((await deliveriesOf(alice, hook.id))[0]).toMatchObject({ attempt_count: 1, last_error: 'no answer within 500 ms' });
    // One whose lease ran out (the instance attempting it died) is nobody's: it is brought forward.
    const ranOut = new Date(t.clock.now().getTime() - 1).toISOString();
    await t.storage.db.updateTable('webhook_deliveries').set({ leased_until: ranOut }).where('id', '=', inFlight!.id).execute();
    const moved = await post(alice, `/webhooks/${hook.id}/deliveries/${inFlight!.id}/retry`);
    expect(moved.json().data).toMatchObject({ status: 'pending', attempt_count: 1, next_attempt_at: t.clock.now().toISOString() });
  });

  it('answers a retry of an unknown or another subscription’s delivery 404, of a disabled subscription 422, and checks the key', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const other = await subscribe(t, alice, { url: receiver.url('/other'), eventTypes: ['payee.created'] });
    const theirs = await subscribe(t, bob, { url: receiver.url('/bob'), eventTypes: ['payee.created'] });
    await createPayee(t, alice);
    await createPayee(t, bob);
    await deliverDue(t);
    const [mine] = await deliveriesOf(alice, hook.id);
    const [bobs] = await deliveriesOf(bob, theirs.id);
    const unknown = await post(alice, `/webhooks/${hook.id}/deliveries/${unknownId}/retry`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('NOT_FOUND');
    expect((await post(alice, `/webhooks/${other.id}/deliveries/${mine!.id}/retry`)).json()).toEqual(unknown.json());
    expect((await post(alice, `/webhooks/${hook.id}/deliveries/${bobs!.id}/retry`)).json()).toEqual(unknown.json());
    const foreignHook = await post(alice, `/webhooks/${theirs.id}/deliveries/${bobs!.id}/retry`);
    expect(foreignHook.statusCode).toBe(404);
    expect((await post(alice, `/webhooks/${hook.id}/deliveries/not-an-id/retry`)).statusCode).toBe(400);
    const reader = (await t.createKey(alice.id, { scopes: ['webhooks:read'] })).key;
    expect((await t.request({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${mine!.id}/retry`, key: reader, csrf: true })).statusCode).toBe(403);
    expect((await t.request({ method: 'POST', url: `/webhooks/${hook.id}/deliveries/${mine!.id}/retry` })).statusCode).toBe(401);

    await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: alice.key, csrf: true, body: { isActive: false } });
    const disabled = await post(alice, `/webhooks/${hook.id}/deliveries/${mine!.id}/retry`);
    expect(disabled.statusCode).toBe(422);
    expect(disabled.json().error.code).toBe('WEBHOOK_DISABLED');
    expect((await deliveriesOf(alice, hook.id))[0]).toMatchObject({ status: 'succeeded', attempt_count: 1 });
  });

  it('replays only the events whose delivery failed with onlyFailed: true', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    // After the events of the tests before.
    t.clock.advance(1);
    const since = t.clock.now().toISOString();
    const delivered = await createPayee(t, alice);
    const doomed = await createPayee(t, alice);
    receiver.answer = (request) => (request.body.includes(doomed.id) ? { status: 500 } : { status: 200 });
    await deliverDue(t);
    for (let retry = 0; retry < 2; retry += 1) {
      t.clock.advance(hourMs);
      await deliverDue(t);
    }
    expect((await deliveriesOf(alice, hook.id, 'failed')).map((delivery) => delivery.event_id)).toHaveLength(1);
    receiver.received.length = 0;
    receiver.answer = () => ({ status: 200 });

    const replay = await post(alice, `/webhooks/${hook.id}/replay`, { since, onlyFailed: true });
    expect(replay.statusCode).toBe(202);
    expect(replay.json().data).toEqual({ queued: 1, next_since: null });
    await deliverDue(t);
    expect(receiver.received.map((received) => (JSON.parse(received.body) as { data: { id: string } }).data.id)).toEqual([doomed.id]);
    expect(await deliveriesOf(alice, hook.id, 'failing')).toEqual([]);
    // Nothing has failed any more; without the flag, every event is sent again.
    expect((await post(alice, `/webhooks/${hook.id}/replay`, { since, onlyFailed: true })).json().data).toEqual({ queued: 0, next_since: null });
    expect((await post(alice, `/webhooks/${hook.id}/replay`, { since, onlyFailed: false })).json().data).toEqual({ queued: 2, next_since: null });
    await deliverDue(t);
    expect(receiver.received.slice(1).map((received) => (JSON.parse(received.body) as { data: { id: string } }).data.id).sort()).toEqual([delivered.id, doomed.id].sort());
    const refused = await post(alice, `/webhooks/${hook.id}/replay`, { since, onlyFailed: 'yes' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('VALIDATION_ERROR');
  });

  it('lists an event’s deliveries to the customer’s subscriptions in GET /events/{id}, as the deliveries list shows them', async () => {
    const first = await subscribe(t, alice, { url: receiver.url('/first'), eventTypes: ['payee.created'] });
    const second = await subscribe(t, alice, { url: receiver.url('/second'), eventTypes: ['payee.created'] });
    await subscribe(t, bob, { url: receiver.url('/bob'), eventTypes: ['payee.created'] });
    receiver.answer = (request) => (request.path === '/second' ? { status: 502, body: 'bad gateway' } : { status: 200 });
    const payee = await createPayee(t, alice);
    await createPayee(t, bob);
    await deliverDue(t);
    const [event] = (await get(alice, '/events?type=payee.created&limit=1')).json().data;
    expect(event.data.id).toBe(payee.id);
    const answer = (await get(alice, `/events/${event.id}`)).json().data;
    const { deliveries, ...body } = answer;
    expect(body).toEqual(event);
    expect(deliveries.map((delivery: Record<string, unknown>) => [delivery.subscription_id, delivery.status])).toEqual(
      expect.arrayContaining([
        [first.id, 'succeeded'],
        [second.id, 'pending'],
      ]),
    );
    expect(deliveries).toHaveLength(2);
    const failing = deliveries.find((delivery: Record<string, any>) => delivery.subscription_id === second.id);
    expect(failing).toEqual((await deliveriesOf(alice, second.id))[0]);
    expect(failing).toMatchObject({ last_status_code: 502 });
    expect(failing).not.toHaveProperty('attempts');
    expect((await newestDelivery(alice, second.id)).attempts[0]).toMatchObject({ status_code: 502, response_body: 'bad gateway' });
    // Bob sees neither the event nor its deliveries.
    expect((await get(bob, `/events/${event.id}`)).statusCode).toBe(404);
  });

  it('reports a subscription’s health: last success, failing since, the last 24 hours, and how close it is to being disabled', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const health = async () => {
      const response = await get(alice, `/webhooks/${hook.id}/health`);
      expect(response.statusCode).toBe(200);
      return response.json().data;
    };
    expect(await health()).toEqual({
      status: 'healthy',
      last_success_at: null,
      failing_since: null,
      consecutive_failures: 0,
      attempts_24h: 0,
      failed_attempts_24h: 0,
      error_rate_24h: null,
      auto_disable: null,
    });

    await createPayee(t, alice);
    await deliverDue(t);
    const succeededAt = t.clock.now().toISOString();
    t.clock.advance(60_000);
    receiver.answer = () => ({ status: 500 });
    await createPayee(t, alice);
    await deliverDue(t);
    const failingSince = t.clock.now().toISOString();
    expect(await health()).toEqual({
      status: 'failing',
      last_success_at: succeededAt,
      failing_since: failingSince,
      consecutive_failures: 1,
      attempts_24h: 2,
      failed_attempts_24h: 1,
      error_rate_24h: 0.5,
      // 3 failures in a row (the schedule) lasting 5 days.
      auto_disable: { failures_left: 2, not_before: new Date(Date.parse(failingSince) + 5 * 24 * hourMs).toISOString(), seconds_left: 5 * 24 * 3600 },
    });

    t.clock.advance(hourMs);
    await deliverDue(t);
    // A day and a minute after the second failure, the window holds no attempt.
    t.clock.advance(24 * hourMs + 60_000);
    const later = await health();
    expect(later).toMatchObject({ status: 'failing', last_success_at: succeededAt, consecutive_failures: 2, attempts_24h: 0, error_rate_24h: null });
    expect(later.auto_disable).toEqual({ failures_left: 1, not_before: new Date(Date.parse(failingSince) + 5 * 24 * hourMs).toISOString(), seconds_left: (5 * 24 - 25) * 3600 - 60 });

    await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: alice.key, csrf: true, body: { isActive: false } });
    expect(await health()).toMatchObject({ status: 'disabled', auto_disable: null });
    const foreign = await get(bob, `/webhooks/${hook.id}/health`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual((await get(bob, `/webhooks/${unknownId}/health`)).json());
  });
});
