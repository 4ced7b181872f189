import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';

/** The whole key shown once on the page after creation. */
function shownKey(html: string): string {
  const match = /id="new-key-value" readonly value="(sk_test_[A-Za-z0-9_-]+)"/.exec(html);
  if (!match) throw new Error('no new key on the page');
  return match[1]!;
}

describe('dashboard API keys', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  const keyCount = async (customerId: string) =>
    Number((await t.storage.db.selectFrom('api_keys').select((eb) => eb.fn.countAll().as('count')).where('customer_id', '=', customerId).executeTakeFirstOrThrow()).count);

  it('lists the keys with prefix, scopes, allow-list, expiry, last use and status, never the keys', async () => {
    await t.request({ url: '/fiat-accounts', key: alice.key });
    const page = await browser.get('/dashboard/api-keys');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<code>${alice.key.slice(0, 12)}…</code>`);
    expect(page.body).not.toContain(alice.key);
    expect(page.body).toContain('any address');
    expect(page.body).toMatch(/<td data-label="Last used"><time datetime="\d{4}-\d{2}-\d{2}T[0-9:.]+Z"[^>]*>\d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC<\/time><\/td>\s*<td data-label="Status">Active<\/td>/);
    expect(page.body).not.toContain(bob.key.slice(0, 12));
  });

  it('creates a key with scopes, allow-list and expiry, shows it once, and the key works against the API', async () => {
    await browser.get('/dashboard/api-keys');
    const created = await browser.post('/dashboard/api-keys', {
      access: 'scopes',
      scopes: ['fiat-accounts:read', 'webhooks:write'],
      allowed_ips: '127.0.0.1\n10.0.0.0/8',
      expires_at: '2099-01-31T12:00',
    });
    expect(created.statusCode).toBe(201);
    const key = shownKey(created.body);
    expect(created.body).toContain('fiat-accounts:read, webhooks:write');
    expect(created.body).toContain('127.0.0.1/32, 10.0.0.0/8');
    expect(created.body).toContain('2099-01-31T12:00:00.000Z');

    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(200);
    expect((await t.request({ url: '/end-users', key })).statusCode).toBe(403);
    expect((await t.request({ url: '/fiat-accounts', key, remoteAddress: '192.0.2.1' })).statusCode).toBe(403);
    // Shown only once: the list does not show it again.
    expect((await browser.get('/dashboard/api-keys')).body).not.toContain(key);
  });

  it('creates a key with every scope by default', async () => {
    await browser.get('/dashboard/api-keys');
    const key = shownKey((await browser.post('/dashboard/api-keys', { access: 'all' })).body);
    expect((await t.request({ url: '/end-users', key })).statusCode).toBe(200);
  });

  it('refuses a bad allow-list, a past-the-year-9999 expiry, or no scope ticked, and creates nothing', async () => {
    const before = await keyCount(alice.id);
    await browser.get('/dashboard/api-keys');
    const badRange = await browser.post('/dashboard/api-keys', { access: 'all', allowed_ips: '10.0.0.0/33' });
    expect(badRange.statusCode).toBe(400);
    expect(badRange.body).toContain('10.0.0.0/33');
    const noScope = await browser.post('/dashboard/api-keys', { access: 'scopes' });
    expect(noScope.statusCode).toBe(400);
    expect(noScope.body).toContain('tick at least one scope');
    const unknownScope = await browser.post('/dashboard/api-keys', { access: 'scopes', scopes: 'money:print' });
    expect(unknownScope.statusCode).toBe(400);
    const both = await browser.post('/dashboard/api-keys', { access: 'all', scopes: 'payments:read' });
    expect(both.statusCode).toBe(400);
    expect(both.body).toContain('choose &quot;Only the scopes ticked below&quot;');
    const past = await browser.post('/dashboard/api-keys', { access: 'all', expires_at: '2020-01-01T00:00' });
    expect(past.statusCode).toBe(400);
    expect(past.body).toContain('must be in the future');
    const badDate = await browser.post('/dashboard/api-keys', { access: 'all', expires_at: 'tomorrow' });
    expect(badDate.statusCode).toBe(400);
    // An impossible day is not rolled over into the next month; a long value is not echoed whole.
    expect((await browser.post('/dashboard/api-keys', { access: 'all', expires_at: '2030-02-30T10:00' })).statusCode).toBe(400);
    const long = await browser.post('/dashboard/api-keys', { access: 'all', expires_at: '9'.repeat(5000) });
    expect(long.statusCode).toBe(400);
    expect(long.body).not.toContain('9'.repeat(100));
    expect(await keyCount(alice.id)).toBe(before);
  });

  it('revokes a key: the API refuses it at once', async () => {
    await browser.get('/dashboard/api-keys');
    const key = shownKey((await browser.post('/dashboard/api-keys', { access: 'all' })).body);
    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(200);
    const id = (await t.storage.db.selectFrom('api_keys').select('id').where('prefix', '=', key.slice(0, 12)).executeTakeFirstOrThrow()).id;
    const redirect = await browser.post(`/dashboard/api-keys/${id}/revoke`);
    expect(redirect.statusCode).toBe(303);
    expect(redirect.headers.location).toBe(`/dashboard/api-keys?revoked=${id}`);
    const revoked = await browser.get(String(redirect.headers.location));
    expect(revoked.body).toContain(`Key ${key.slice(0, 12)}… is revoked`);
    expect(revoked.body).toMatch(/Revoked <time datetime="\d{4}-/);
    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(401);
  });

  it("answers 404 for another customer's key id, and leaves that key working", async () => {
    await browser.get('/dashboard/api-keys');
    const response = await browser.post(`/dashboard/api-keys/${bob.keyId}/revoke`);
    expect(response.statusCode).toBe(404);
    const unknown = await browser.post('/dashboard/api-keys/0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f/revoke');
    expect(unknown.statusCode).toBe(404);
    expect(response.body.replace(/value="[0-9a-f]{64}"/g, '')).toBe(unknown.body.replace(/value="[0-9a-f]{64}"/g, ''));
    expect((await t.request({ url: '/fiat-accounts', key: bob.key })).statusCode).toBe(200);
  });

  it('counts on the overview only the keys that work: not revoked, not expired', async () => {
    const other = await t.createCustomer('Carol SA');
    const carol = await signedInBrowser(t, other.id, 'carol@example.com');
    const active = async () => Number(/<strong>(\d+)<\/strong> active API keys/.exec((await carol.get('/dashboard')).body)?.[1]);
    expect(await active()).toBe(1);
    await t.createKey(other.id, { expiresAt: new Date(t.clock.now().getTime() + 60_000).toISOString() });
    expect(await active()).toBe(2);
    t.clock.advance(60_000);
    expect(await active()).toBe(1);
  });

  it('refuses every API key form without the form token', async () => {
    const before = await keyCount(alice.id);
    expect((await browser.post('/dashboard/api-keys', { _csrf: '', access: 'all' })).statusCode).toBe(403);
    expect((await browser.post(`/dashboard/api-keys/${alice.keyId}/revoke`, { _csrf: 'f'.repeat(64) })).statusCode).toBe(403);
    expect(await keyCount(alice.id)).toBe(before);
    expect((await t.request({ url: '/fiat-accounts', key: alice.key })).statusCode).toBe(200);
  });
});
