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

  /** Posts the create form; it redirects (303) to the single-use reveal page, which shows the key. */
  async function createThroughForm(fields: Record<string, string | string[]>) {
    await browser.get('/dashboard/api-keys');
    const posted = await browser.post('/dashboard/api-keys', fields);
    expect(posted.statusCode, posted.body.slice(0, 2000)).toBe(303);
    const location = String(posted.headers.location);
    expect(location).toMatch(/^\/dashboard\/reveal\/[A-Za-z0-9_-]{43}$/);
    const revealed = await browser.get(location);
    expect(revealed.statusCode).toBe(200);
    return { key: shownKey(revealed.body), location, page: revealed.body };
  }

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
    const { key } = await createThroughForm({
      access: 'scopes',
      scopes: ['fiat-accounts:read', 'webhooks:write'],
      allowed_ips: '127.0.0.1\n10.0.0.0/8',
      expires_at: '2099-01-31T12:00',
    });
    const listed = (await browser.get('/dashboard/api-keys')).body;
    expect(listed).toContain('fiat-accounts:read, webhooks:write');
    expect(listed).toContain('127.0.0.1/32, 10.0.0.0/8');
    expect(listed).toContain('2099-01-31T12:00:00.000Z');

    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(200);
    expect((await t.request({ url: '/end-users', key })).statusCode).toBe(403);
    expect((await t.request({ url: '/fiat-accounts', key, remoteAddress: '192.0.2.1' })).statusCode).toBe(403);
    // Shown only once: the list does not show it again.
    expect((await browser.get('/dashboard/api-keys')).body).not.toContain(key);
  });

  it('creates a key with every scope by default', async () => {
    const { key } = await createThroughForm({ access: 'all' });
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
    // An impossible day is not rolled over into the next month; a long value is not echoed whole in the problem
    // (the field keeps it as typed).
    expect((await browser.post('/dashboard/api-keys', { access: 'all', expires_at: '2030-02-30T10:00' })).statusCode).toBe(400);
    const long = await browser.post('/dashboard/api-keys', { access: 'all', expires_at: '9'.repeat(5000) });
    expect(long.statusCode).toBe(400);
    expect(/<p class="field-problem" id="expires_at-problem">([^<]*)<\/p>/.exec(long.body)?.[1]).not.toContain('9'.repeat(100));
    expect(/<div class="problems"[\s\S]*?<\/div>/.exec(long.body)?.[0]).not.toContain('9'.repeat(100));
    expect(await keyCount(alice.id)).toBe(before);
  });

  it('revokes a key: the API refuses it at once', async () => {
    const { key } = await createThroughForm({ access: 'all' });
    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(200);
    const id = (await t.storage.db.selectFrom('api_keys').select('id').where('prefix', '=', key.slice(0, 12)).executeTakeFirstOrThrow()).id;
    const redirect = await browser.post(`/dashboard/api-keys/${id}/revoke`);
    expect(redirect.statusCode).toBe(303);
    expect(redirect.headers.location).toBe('/dashboard/api-keys');
    const revoked = await browser.get(String(redirect.headers.location));
    expect(revoked.body).toContain(`Key ${key.slice(0, 12)}… is revoked`);
    expect(revoked.body).toMatch(/Revoked <time datetime="\d{4}-/);
    // The notice is shown once: a reload shows the list without it, and revokes nothing more.
    const reloaded = await browser.get('/dashboard/api-keys');
    expect(reloaded.body).not.toContain('is revoked;');
    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(401);
  });

  it('shows a new key once: reloading its reveal page says it was shown and creates nothing', async () => {
    const { key, location } = await createThroughForm({ access: 'all', name: 'CI deploys' });
    const count = await keyCount(alice.id);
    const reload = await browser.get(location);
    expect(reload.statusCode).toBe(410);
    expect(reload.body).toContain('already been shown');
    expect(reload.body).not.toContain(key);
    // Reloading the list (the page the browser was on) creates nothing either.
    expect((await browser.get('/dashboard/api-keys')).body).not.toContain(key);
    expect(await keyCount(alice.id)).toBe(count);
    // The secret is stored sealed, never in clear, and is gone once shown.
    expect(await t.storage.db.selectFrom('dashboard_reveals').selectAll().execute()).toEqual([]);
  });

  it("does not show a reveal to another session, nor one past its time", async () => {
    await browser.get('/dashboard/api-keys');
    const posted = await browser.post('/dashboard/api-keys', { access: 'all' });
    const location = String(posted.headers.location);
    const stored = await t.storage.db.selectFrom('dashboard_reveals').selectAll().executeTakeFirstOrThrow();
    expect(stored.sealed_secret).not.toContain('sk_test_');
    const other = await signedInBrowser(t, alice.id, 'second@example.com');
    const elsewhere = await other.get(location);
    expect(elsewhere.statusCode).toBe(410);
    expect(elsewhere.body).not.toContain('sk_test_');
    t.clock.advance(11 * 60_000);
    const late = await browser.get(location);
    expect(late.statusCode).toBe(410);
    expect(late.body).not.toMatch(/value="sk_test_/);
  });

  it('names a key: the name is shown in the list and in the notice', async () => {
    const { page } = await createThroughForm({ access: 'all', name: '  CI deploys  ' });
    expect(page).toMatch(/Key sk_test_\S+… \(CI deploys\) created\./);
    const listed = (await browser.get('/dashboard/api-keys')).body;
    expect(listed).toContain('<td data-label="Name">CI deploys</td>');
    expect((await t.storage.db.selectFrom('api_keys').select('name').where('name', '=', 'CI deploys').execute()).length).toBeGreaterThan(0);
  });

  it('takes a name of 100 characters, the longest, and shows it whole in the notice and the list', async () => {
    const name = `${'n'.repeat(99)}Z`;
    await browser.get('/dashboard/api-keys');
    const created = await browser.submit('/dashboard/api-keys', { name, access: 'all' });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.body).toContain(`(${name}) created.`);
    const listed = (await browser.get('/dashboard/api-keys')).body;
    expect(listed).toContain(`<td data-label="Name">${name}</td>`);
    expect((await t.storage.db.selectFrom('api_keys').select('name').where('name', '=', name).execute()).length).toBe(1);
  });

  it('refuses a form with every problem at once, each by its field, and keeps what was typed', async () => {
    const before = await keyCount(alice.id);
    await browser.get('/dashboard/api-keys');
    const refused = await browser.post('/dashboard/api-keys', {
      name: 'x'.repeat(101),
      access: 'scopes',
      scopes: ['payments:read'],
      allowed_ips: '10.0.0.0/33',
      expires_at: 'soon',
    });
    expect(refused.statusCode).toBe(400);
    const html = refused.body;
    // Every problem in the list at the top, in words with the field's label, linked to the field.
    expect(html).toContain('<a href="#name">Name: must be at most 100 characters</a>');
    expect(html).toMatch(/<a href="#allowed_ips">IP allow-list: &quot;10.0.0.0\/33&quot; is not/);
    expect(html).toMatch(/<a href="#expires_at">Expires at: &quot;soon/);
    // And each next to its field, which points at it.
    expect(html).toMatch(/<input id="name"[^>]* aria-invalid="true" aria-describedby="name-problem">/);
    expect(html).toContain('<p class="field-problem" id="name-problem">must be at most 100 characters</p>');
    expect(html).toMatch(/<textarea id="allowed_ips"[^>]* aria-invalid="true" aria-describedby="allowed_ips-problem">10.0.0.0\/33<\/textarea>/);
    expect(html).toMatch(/<input id="expires_at"[^>]*value="soon" aria-invalid="true"/);
    // What was typed and chosen stays.
    expect(html).toContain(`value="${'x'.repeat(101)}"`);
    expect(html).toMatch(/value="scopes" checked/);
    expect(html).toMatch(/value="payments:read" checked/);
    expect(html).not.toMatch(/value="payments:write" checked/);
    expect(html).not.toMatch(/#\/|\/allowedIps/);
    expect(await keyCount(alice.id)).toBe(before);
  });

  it('refuses a name of more than one line', async () => {
    await browser.get('/dashboard/api-keys');
    const refused = await browser.post('/dashboard/api-keys', { access: 'all', name: 'two\nlines' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Name: must be one line of text');
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
