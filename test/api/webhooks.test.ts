import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventTypes } from '../../src/events/catalog.js';
import { failingPaths, timestampPattern, uuidPattern } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { subscribe } from '../helpers/webhooks.js';

const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';
const recordFields = [
  'id', 'url', 'description', 'event_types', 'is_active', 'signing_secret_prefix', 'consecutive_failures', 'disabled_at', 'disabled_reason', 'created_at', 'updated_at',
].sort();

describe('webhook subscriptions', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const create = (customer: TestCustomer, body: unknown) => t.request({ method: 'POST', url: '/webhooks', key: customer.key, csrf: true, body });
  const patch = (customer: TestCustomer, id: string, body: unknown) => t.request({ method: 'PATCH', url: `/webhooks/${id}`, key: customer.key, csrf: true, body });
  const remove = (customer: TestCustomer, id: string) => t.request({ method: 'DELETE', url: `/webhooks/${id}`, key: customer.key, csrf: true });

  it('creates a subscription answering the spec record and the whole secret once', async () => {
    const response = await create(alice, { url: receiver.url(), eventTypes: ['payment.created', 'PAYMENT.Completed', 'payment.created'], description: 'Ledger sync' });
    expect(response.statusCode).toBe(201);
    const record = response.json().data;
    expect(Object.keys(record).sort()).toEqual([...recordFields, 'signing_secret'].sort());
    expect(record).toMatchObject({
      url: receiver.url(),
      description: 'Ledger sync',
      event_types: ['payment.created', 'payment.completed'],
      is_active: true,
      consecutive_failures: 0,
      disabled_at: null,
      disabled_reason: null,
    });
    expect(record.id).toMatch(uuidPattern);
    expect(record.created_at).toMatch(timestampPattern);
    expect(record.signing_secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const keyBytes = Buffer.from(record.signing_secret.slice('whsec_'.length), 'base64').length;
    expect(keyBytes).toBeGreaterThanOrEqual(24);
    expect(keyBytes).toBeLessThanOrEqual(64);
    expect(record.signing_secret.startsWith(record.signing_secret_prefix)).toBe(true);
    expect(record.signing_secret_prefix.length).toBeLessThan(record.signing_secret.length);

    // Never again: not in GET, not in the list, not in clear in the database.
    const fetched = await t.request({ url: `/webhooks/${record.id}`, key: alice.key });
    expect(fetched.statusCode).toBe(200);
    expect(Object.keys(fetched.json().data).sort()).toEqual(recordFields);
    expect(fetched.body).not.toContain(record.signing_secret);
    const list = await t.request({ url: '/webhooks', key: alice.key });
    expect(list.json().data.map((item: { id: string }) => item.id)).toContain(record.id);
    expect(list.body).not.toContain(record.signing_secret.slice(6));
    const row = await t.storage.db.selectFrom('webhook_subscriptions').selectAll().where('id', '=', record.id).executeTakeFirstOrThrow();
    expect(Object.values(row).map(String).join(' ')).not.toContain(record.signing_secret.slice(6));
    await remove(alice, record.id);
  });

  it('defaults: description empty, active; isActive false creates it disabled', async () => {
    const plain = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    expect(plain).toMatchObject({ description: '', is_active: true });
    const off = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'], isActive: false, description: null });
    expect(off).toMatchObject({ is_active: false, disabled_reason: 'disabled by request', description: '' });
    expect(off.disabled_at).toMatch(timestampPattern);
    await remove(alice, plain.id);
    await remove(alice, off.id);
  });

  it('refuses every constraint of spec §4 with a 400 naming the field, writing nothing', async () => {
    const before = await t.storage.db.selectFrom('webhook_subscriptions').select('id').execute();
    const cases: Array<[unknown, string]> = [
      [{ eventTypes: ['payment.created'] }, '/url'],
      [{ url: receiver.url(), eventTypes: [] }, '/eventTypes'],
      [{ url: receiver.url() }, '/eventTypes'],
      [{ url: receiver.url(), eventTypes: Array.from({ length: 51 }, () => 'payment.created') }, '/eventTypes'],
      [{ url: receiver.url(), eventTypes: ['payment.refunded'] }, '/eventTypes/0'],
      [{ url: receiver.url(), eventTypes: ['payment.created'], description: 'x'.repeat(501) }, '/description'],
      [{ url: `${receiver.url()}?${'a'.repeat(2048)}`, eventTypes: ['payment.created'] }, '/url'],
      [{ url: 'not a url', eventTypes: ['payment.created'] }, '/url'],
      [{ url: 'ftp://example.com/hook', eventTypes: ['payment.created'] }, '/url'],
      [{ url: 'https://user:pass@example.com/hook', eventTypes: ['payment.created'] }, '/url'],
      [{ url: receiver.url(), eventTypes: ['payment.created'], isActive: 'yes' }, '/isActive'],
      [{ url: receiver.url(), eventTypes: ['payment.created'], secret: 'mine' }, ''],
    ];
    for (const [body, path] of cases) {
      const response = await create(alice, body);
      expect(response.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      if (path) expect(failingPaths(response)).toContain(path);
    }
    // 50 types (duplicates included) is the most; 2048 characters is the longest URL.
    const longest = `${receiver.url()}?${'a'.repeat(2048 - receiver.url().length - 1)}`;
    const fifty = await create(alice, { url: longest, description: 'd'.repeat(500), eventTypes: Array.from({ length: 50 }, (_, index) => eventTypes[index % eventTypes.length]) });
    expect(fifty.statusCode).toBe(201);
    expect(fifty.json().data.description).toHaveLength(500);
    expect(fifty.json().data.url).toHaveLength(2048);
    expect(fifty.json().data.event_types).toEqual([...eventTypes]);
    await remove(alice, fifty.json().data.id);
    expect(await t.storage.db.selectFrom('webhook_subscriptions').select('id').execute()).toEqual(before);
  });

  it('allows at most 10 subscriptions per customer, also under concurrent creation', async () => {
    const attempts = await Promise.all(Array.from({ length: 14 }, () => create(bob, { url: receiver.url(), eventTypes: ['payment.created'] })));
    expect(attempts.filter((response) => response.statusCode === 201)).toHaveLength(10);
    const refused = attempts.filter((response) => response.statusCode !== 201);
    expect(refused).toHaveLength(4);
    for (const response of refused) {
      expect(response.statusCode).toBe(422);
      expect(response.json().error.code).toBe('LIMIT_EXCEEDED');
    }
    const list = await t.request({ url: '/webhooks', key: bob.key });
    expect(list.json().data).toHaveLength(10);
    // Deleting one frees a place.
    expect((await remove(bob, list.json().data[0].id)).statusCode).toBe(204);
    expect((await create(bob, { url: receiver.url(), eventTypes: ['payment.created'] })).statusCode).toBe(201);
    for (const item of (await t.request({ url: '/webhooks', key: bob.key })).json().data) await remove(bob, item.id);
  });

  it('updates each field of spec §4, and re-activation clears the failures', async () => {
    const created = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const updated = await patch(alice, created.id, { url: receiver.url('/other'), description: 'New', eventTypes: ['end_user.created', 'END_USER.created'] });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().data).toMatchObject({ url: receiver.url('/other'), description: 'New', event_types: ['end_user.created'], is_active: true });
    expect(Object.keys(updated.json().data).sort()).toEqual(recordFields);

    const off = await patch(alice, created.id, { isActive: false });
    expect(off.json().data).toMatchObject({ is_active: false, disabled_reason: 'disabled by request' });
    // As after failures: a run of failures and a reason, cleared by turning it on.
    await t.storage.db.updateTable('webhook_subscriptions').set({ consecutive_failures: 7, disabled_reason: '7 consecutive failed attempts' }).where('id', '=', created.id).execute();
    const on = await patch(alice, created.id, { isActive: true });
    expect(on.json().data).toMatchObject({ is_active: true, consecutive_failures: 0, disabled_at: null, disabled_reason: null });

    for (const body of [{ url: 'http://' }, { description: 'x'.repeat(501) }, { eventTypes: [] }, { eventTypes: ['nope'] }, { isActive: 1 }, { url: 'x'.repeat(2049) }, { extra: true }]) {
      const refused = await patch(alice, created.id, body);
      expect(refused.statusCode, JSON.stringify(body).slice(0, 60)).toBe(400);
    }
    expect((await t.request({ url: `/webhooks/${created.id}`, key: alice.key })).json().data.url).toBe(receiver.url('/other'));
    await remove(alice, created.id);
  });

  it.each([
    ['{}', {}],
    ['the values it has', { description: 'Same', eventTypes: ['PAYEE.created'], isActive: true }],
  ])('answers a PATCH with %s with 200 and the record unchanged, updated_at included', async (_label, body) => {
    const created = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'], description: 'Same' });
    t.clock.advance(60_000);
    const response = await patch(alice, created.id, { ...body, ...('eventTypes' in body ? { url: created.url } : {}) });
    expect(response.statusCode, response.body).toBe(200);
    const { signing_secret: _secret, ...record } = created;
    expect(response.json().data).toEqual(record);
    // A change still moves updated_at.
    const changed = await patch(alice, created.id, { description: 'Other' });
    expect(changed.json().data.updated_at).toBe(t.clock.now().toISOString());
    await remove(alice, created.id);
  });

  it('answers another customer’s subscription exactly like an unknown one, on every operation', async () => {
    const mine = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const operations = (id: string) => [
      t.request({ url: `/webhooks/${id}`, key: bob.key }),
      patch(bob, id, { description: 'x' }),
      remove(bob, id),
      t.request({ method: 'POST', url: `/webhooks/${id}/rotate-secret`, key: bob.key, csrf: true }),
      t.request({ method: 'POST', url: `/webhooks/${id}/test`, key: bob.key, csrf: true }),
      t.request({ method: 'POST', url: `/webhooks/${id}/replay`, key: bob.key, csrf: true, body: { since: new Date(t.clock.now().getTime() - 60_000).toISOString() } }),
      t.request({ url: `/webhooks/${id}/deliveries`, key: bob.key }),
    ];
    const foreign = await Promise.all(operations(mine.id));
    const unknown = await Promise.all(operations(unknownId));
    for (const [index, response] of foreign.entries()) {
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(unknown[index]!.json());
    }
    expect((await t.request({ url: `/webhooks/${mine.id}`, key: alice.key })).json().data.description).toBe('');
    expect((await remove(alice, mine.id)).statusCode).toBe(204);
    expect((await remove(alice, mine.id)).statusCode).toBe(404);
  });

  it('requires the webhooks scopes and a CSRF token', async () => {
    const reader = await t.createKey(alice.id, { scopes: ['webhooks:read'] });
    const other = await t.createKey(alice.id, { scopes: ['payments:write'] });
    expect((await t.request({ url: '/webhooks', key: reader.key })).statusCode).toBe(200);
    expect((await t.request({ url: '/events', key: reader.key })).statusCode).toBe(200);
    const write = await t.request({ method: 'POST', url: '/webhooks', key: reader.key, csrf: true, body: { url: receiver.url(), eventTypes: ['payee.created'] } });
    expect(write.statusCode).toBe(403);
    expect(write.json().error.code).toBe('INSUFFICIENT_SCOPE');
    expect((await t.request({ url: '/webhooks', key: other.key })).statusCode).toBe(403);
    expect((await t.request({ url: '/events', key: other.key })).statusCode).toBe(403);
    const noCsrf = await t.request({ method: 'POST', url: '/webhooks', key: alice.key, body: { url: receiver.url(), eventTypes: ['payee.created'] } });
    expect(noCsrf.statusCode).toBe(403);
    expect(noCsrf.json().error.code).toBe('CSRF_TOKEN_INVALID');
    expect((await t.request({ url: '/webhooks' })).statusCode).toBe(401);
  });
});
