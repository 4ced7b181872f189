import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { createPayee, deposit } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { subscribe } from '../helpers/webhooks.js';

const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';
const receiverUrl = 'http://127.0.0.1:9/hooks';

interface FeedEvent {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

/**
 * An event is readable only with the read scope of its resource (docs/webhooks.md "Scopes"): the feed, the types a
 * subscription lists and what a replay sends never show a key what the resource's own GET would refuse it.
 */
describe('events and subscriptions follow the key’s scopes', () => {
  let t: TestApp;
  let alice: TestCustomer;
  const all: FeedEvent[] = [];
  let testEvent: FeedEvent;

  const keyWith = async (...scopes: string[]) => (await t.createKey(alice.id, { scopes })).key;
  const feed = async (key: string, query = '') => {
    const response = await t.request({ url: `/events?limit=100${query}`, key });
    expect(response.statusCode).toBe(200);
    return response.json<{ data: FeedEvent[]; meta: { pagination: { total: number } } }>();
  };
  const typesOf = (events: readonly FeedEvent[]) => [...new Set(events.map((event) => event.type))].sort();

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    // Events of every kind the finding names: an end user's personal data, a payee's bank details, a balance.
    await createIndividual(t, alice);
    await createPayee(t, alice);
    const account = await createFiatAccount(t, alice, { accountName: 'Main', currency: 'EUR' });
    await deposit(t, alice, account.id, 100);
    const hook = await subscribe(t, alice, { url: receiverUrl, eventTypes: ['payee.created'] });
    const tested = await t.request({ method: 'POST', url: `/webhooks/${hook.id}/test`, key: alice.key, csrf: true });
    expect(tested.statusCode).toBe(202);
    testEvent = tested.json().data.event;
    all.push(...(await feed(alice.key)).data);
  });
  afterAll(async () => t.close());

  it('shows a webhooks:read key only the events it may read, in the list, its total and by id', async () => {
    expect(typesOf(all)).toEqual(
      expect.arrayContaining(['end_user.created', 'payee.created', 'fiat_account.created', 'fiat_account.balance_updated', 'webhook.test']),
    );
    const reader = await keyWith('webhooks:read');
    expect((await t.request({ url: '/end-users', key: reader })).statusCode).toBe(403);
    const seen = await feed(reader);
    expect(seen.data.map((event) => event.id)).toEqual([testEvent.id]);
    expect(seen.meta.pagination.total).toBe(1);
    expect(JSON.stringify(seen)).not.toContain('first_name');

    const unknown = await t.request({ url: `/events/${unknownId}`, key: reader });
    expect(unknown.statusCode).toBe(404);
    for (const type of ['end_user.created', 'payee.created', 'fiat_account.balance_updated']) {
      const hidden = all.find((event) => event.type === type)!;
      const response = await t.request({ url: `/events/${hidden.id}`, key: reader });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(unknown.json());
      // Asking for the type by name finds nothing either.
      expect((await feed(reader, `&type=${type}`)).meta.pagination.total).toBe(0);
    }
    expect((await t.request({ url: `/events/${testEvent.id}`, key: reader })).json().data).toEqual({ ...testEvent, deliveries: [expect.objectContaining({ event_id: testEvent.id })] });
  });

  it('shows end_user events to a key with end-users:read, and every event to a full key', async () => {
    const endUsers = await keyWith('end-users:read', 'webhooks:read');
    const seen = await feed(endUsers);
    expect(typesOf(seen.data)).toEqual(['end_user.created', 'webhook.test']);
    expect(seen.meta.pagination.total).toBe(all.filter((event) => event.type.startsWith('end_user.') || event.type === 'webhook.test').length);
    const endUserEvent = all.find((event) => event.type === 'end_user.created')!;
    expect((await t.request({ url: `/events/${endUserEvent.id}`, key: endUsers })).json().data).toEqual({ ...endUserEvent, deliveries: [] });
    // A write scope implies its read scope.
    expect(typesOf((await feed(await keyWith('payees:write', 'webhooks:read'))).data)).toEqual(['payee.created', 'webhook.test']);
    expect((await feed(alice.key)).meta.pagination.total).toBe(all.length);
  });

  it('refuses a subscription listing event types the key may not read (403 naming the scopes), writing nothing', async () => {
    const writer = await keyWith('webhooks:write', 'payees:read');
    const before = await t.storage.db.selectFrom('webhook_subscriptions').select('id').execute();
    const refused = await t.request({
      method: 'POST',
      url: '/webhooks',
      key: writer,
      csrf: true,
      body: { url: receiverUrl, eventTypes: ['payee.created', 'end_user.created', 'fiat_account.balance_updated', 'END_USER.status_updated'] },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({
      code: 'INSUFFICIENT_SCOPE',
      details: { required_scope: 'end-users:read and fiat-accounts:read', event_types: ['end_user.created', 'fiat_account.balance_updated', 'end_user.status_updated'] },
    });
    expect(await t.storage.db.selectFrom('webhook_subscriptions').select('id').execute()).toEqual(before);

    const allowed = await t.request({ method: 'POST', url: '/webhooks', key: writer, csrf: true, body: { url: receiverUrl, eventTypes: ['payee.created', 'payee.status_updated'] } });
    expect(allowed.statusCode).toBe(201);
    const hook = allowed.json().data;
    const widened = await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: writer, csrf: true, body: { eventTypes: ['payee.created', 'end_user.created'] } });
    expect(widened.statusCode).toBe(403);
    expect(widened.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'end-users:read', event_types: ['end_user.created'] } });
    const moved = await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: writer, csrf: true, body: { url: 'http://127.0.0.1:9/elsewhere' } });
    expect(moved.statusCode).toBe(200);
    expect((await t.request({ url: `/webhooks/${hook.id}`, key: alice.key })).json().data).toMatchObject({ url: 'http://127.0.0.1:9/elsewhere', event_types: ['payee.created', 'payee.status_updated'] });
  });

  it('refuses to send a subscription whose types the key may not read to another URL', async () => {
    const hook = await subscribe(t, alice, { url: receiverUrl, eventTypes: ['end_user.created', 'payee.created'], description: 'KYC sync' });
    const writer = await keyWith('webhooks:write');
    const redirected = await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: writer, csrf: true, body: { url: 'https://attacker.example/collect' } });
    expect(redirected.statusCode).toBe(403);
    expect(redirected.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'end-users:read and payees:read' } });
    expect((await t.request({ url: `/webhooks/${hook.id}`, key: alice.key })).json().data).toMatchObject({ url: receiverUrl, description: 'KYC sync' });
    // What does not redirect the events stays open to webhooks:write: the same URL, the description, turning it off.
    const same = await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: writer, csrf: true, body: { url: receiverUrl, description: 'renamed', isActive: false } });
    expect(same.statusCode).toBe(200);
    expect(same.json().data).toMatchObject({ url: receiverUrl, description: 'renamed', is_active: false });
    // An unknown id is still a 404, and replacing the types with readable ones is a choice the key may make.
    expect((await t.request({ method: 'PATCH', url: `/webhooks/${unknownId}`, key: writer, csrf: true, body: { url: receiverUrl } })).statusCode).toBe(404);
  });

  it('replays only the events the replaying key may read', async () => {
    const hook = await subscribe(t, alice, { url: receiverUrl, eventTypes: ['end_user.created', 'payee.created', 'fiat_account.balance_updated'] });
    const since = new Date(t.clock.now().getTime() - 60_000).toISOString();
    const replayer = await keyWith('webhooks:write', 'payees:read');
    const replay = await t.request({ method: 'POST', url: `/webhooks/${hook.id}/replay`, key: replayer, csrf: true, body: { since } });
    expect(replay.statusCode).toBe(202);
    const payeeEvents = all.filter((event) => event.type === 'payee.created');
    expect(replay.json().data).toEqual({ queued: payeeEvents.length, next_since: null });
    const deliveries = (await t.request({ url: `/webhooks/${hook.id}/deliveries`, key: alice.key })).json().data as Array<{ event_id: string; event_type: string }>;
    expect(deliveries.map((delivery) => delivery.event_id).sort()).toEqual(payeeEvents.map((event) => event.id).sort());

    // A key that may read none of them queues nothing; a full key queues them all.
    const none = await t.request({ method: 'POST', url: `/webhooks/${hook.id}/replay`, key: await keyWith('webhooks:write'), csrf: true, body: { since } });
    expect(none.json().data).toEqual({ queued: 0, next_since: null });
    const full = await t.request({ method: 'POST', url: `/webhooks/${hook.id}/replay`, key: alice.key, csrf: true, body: { since } });
    expect(full.json().data.queued).toBe(all.filter((event) => ['end_user.created', 'payee.created', 'fiat_account.balance_updated'].includes(event.type)).length);
  });
});
