import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/modules/dashboard-users/passwords.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { DashboardBrowser, cookiesSet, csrfOf, dashboardUsers, signedInBrowser, testPassword } from '../helpers/dashboard.js';

const minute = 60_000;

/** The Set-Cookie line of one cookie, for its attributes. */
function setCookieLine(response: { headers: Record<string, unknown> }, name: string): string {
  const header = response.headers['set-cookie'];
  const lines = (Array.isArray(header) ? header : [header]).filter((line): line is string => typeof line === 'string');
  const line = lines.find((candidate) => candidate.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie set`);
  return line;
}

describe('dashboard sign-in and sessions', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  /** A user with a password, and a browser on the sign-in page. */
  async function userWithPassword(email: string): Promise<DashboardBrowser> {
    const created = await dashboardUsers(t).create(alice.id, email);
    const browser = new DashboardBrowser(t);
    const path = new URL(created.sign_in_url).pathname;
    await browser.get(path);
    expect((await browser.post(path, { password: testPassword, password_confirmation: testPassword })).statusCode).toBe(303);
    const fresh = new DashboardBrowser(t);
    await fresh.get('/dashboard/sign-in');
    return fresh;
  }

  it('sends a browser without a session to the sign-in page from every page, saying which page to return to', async () => {
    for (const url of ['/dashboard', '/dashboard/api-keys', '/dashboard/accounts', '/dashboard/transactions', '/dashboard/end-users', '/dashboard/webhooks', '/dashboard/events']) {
      const response = await t.app.inject({ url });
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location).toBe(url === '/dashboard' ? '/dashboard/sign-in' : `/dashboard/sign-in?next=${encodeURIComponent(url)}`);
    }
  });

  it('returns after sign-in to the page first asked for, its query kept', async () => {
    await dashboardUsers(t).create(alice.id, 'return@example.com').then(async (created) => {
      const setup = new DashboardBrowser(t);
      const path = new URL(created.sign_in_url).pathname;
      await setup.get(path);
      await setup.post(path, { password: testPassword, password_confirmation: testPassword });
    });
    const browser = new DashboardBrowser(t);
    const asked = await browser.get('/dashboard/transactions?status=pending&limit=5');
    expect(asked.headers.location).toBe('/dashboard/sign-in?next=%2Fdashboard%2Ftransactions%3Fstatus%3Dpending%26limit%3D5');
    const form = await browser.get(String(asked.headers.location));
    expect(form.body).toContain('<input type="hidden" name="next" value="/dashboard/transactions?status=pending&amp;limit=5">');
    // From addresses of their own: the sign-in limit counts per address, and other tests sign in from the default one.
    const wrong = await browser.post('/dashboard/sign-in', { email: 'return@example.com', password: 'not the password at all', next: '/dashboard/transactions?status=pending&limit=5' }, {}, { remoteAddress: '192.0.2.201' });
    expect(wrong.body).toContain('name="next" value="/dashboard/transactions?status=pending&amp;limit=5"');
    const signedIn = await browser.post('/dashboard/sign-in', { email: 'return@example.com', password: testPassword, next: '/dashboard/transactions?status=pending&limit=5' }, {}, { remoteAddress: '192.0.2.202' });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/dashboard/transactions?status=pending&limit=5');

    // Another site named as `next` in the posted form is dropped: the overview instead.
    const elsewhere = new DashboardBrowser(t);
    await elsewhere.get('/dashboard/sign-in');
    const redirected = await elsewhere.post('/dashboard/sign-in', { email: 'return@example.com', password: testPassword, next: '//evil.example/dashboard' }, {}, { remoteAddress: '192.0.2.203' });
    expect(redirected.statusCode).toBe(303);
    expect(redirected.headers.location).toBe('/dashboard');
  });

  it.each([
    'https://evil.example/dashboard',
    '//evil.example/dashboard',
    '/\\evil.example/dashboard',
    '/dashboard/../evil',
    '/dashboard/%2e%2e/evil',
    'javascript:alert(1)',
    '/dashboardevil',
    '/dashboard/sign-in',
    '/dashboard/link/abc',
    '/docs',
    '/dashboard\r\nLocation: https://evil.example',
    `/dashboard/${'x'.repeat(2001)}`,
  ])('never offers to return after sign-in to %s (no open redirect)', async (next) => {
    const form = await new DashboardBrowser(t).get(`/dashboard/sign-in?${new URLSearchParams({ next }).toString()}`);
    expect(form.statusCode).toBe(200);
    expect(form.body).not.toContain('name="next"');
  });

  it('offers to return after sign-in to an address of this site of 2000 characters, the longest', async () => {
    const start = '/dashboard/transactions?q=';
    const longest = `${start}${'x'.repeat(2000 - start.length)}`;
    expect(longest).toHaveLength(2000);
    const form = await new DashboardBrowser(t).get(`/dashboard/sign-in?${new URLSearchParams({ next: longest }).toString()}`);
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain(`<input type="hidden" name="next" value="${longest}">`);
  });

  it('never opens the dashboard with an API key, and never answers the JSON API for a session cookie', async () => {
    const withKey = await t.app.inject({ url: '/dashboard', headers: { 'x-api-key': alice.key } });
    expect(withKey.statusCode).toBe(303);
    const bearer = await t.app.inject({ url: '/dashboard/api-keys', headers: { authorization: `Bearer ${alice.key}` } });
    expect(bearer.statusCode).toBe(303);

    const browser = await signedInBrowser(t, alice.id, 'both-ways@example.com');
    expect((await browser.get('/dashboard')).statusCode).toBe(200);
    for (const url of ['/fiat-accounts', '/end-users', '/webhooks', '/csrf-token']) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('signs in with the password chosen on the one-time link, with a new session id each time (no fixation)', async () => {
    const browser = await userWithPassword('sign-in@example.com');
    // A session id planted before sign-in (an attacker's cookie) is not adopted.
    browser.cookies.set('customer_api_session', 'planted-by-someone-else-0000000000000000000000');
    const response = await browser.post('/dashboard/sign-in', { email: 'Sign-In@Example.com', password: testPassword });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard');
    const first = cookiesSet(response).customer_api_session!;
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(first).not.toBe('planted-by-someone-else-0000000000000000000000');
    expect((await browser.get('/dashboard')).body).toContain('sign-in@example.com');

    // Signing in again from the same browser replaces the session: the previous id stops working.
    await browser.get('/dashboard/sign-in');
    const again = await browser.post('/dashboard/sign-in', { email: 'sign-in@example.com', password: testPassword });
    const second = cookiesSet(again).customer_api_session!;
    expect(second).not.toBe(first);
    const old = await t.app.inject({ url: '/dashboard', headers: { cookie: `customer_api_session=${first}` } });
    expect(old.statusCode).toBe(303);
  });

  it('sets the session cookie HttpOnly, SameSite=Strict, path /dashboard, and Secure unless plain HTTP to localhost', async () => {
    const local = await userWithPassword('cookies@example.com');
    const response = await local.post('/dashboard/sign-in', { email: 'cookies@example.com', password: testPassword });
    const line = setCookieLine(response, 'customer_api_session');
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Strict/);
    expect(line).toMatch(/; Path=\/dashboard/);
    expect(line).not.toMatch(/; Secure/);

    // Reached by any other name the cookie is Secure (a browser then keeps it only over HTTPS).
    const remote = new DashboardBrowser(t);
    const page = await remote.get('/dashboard/sign-in', { host: 'dashboard.example.com' });
    expect(setCookieLine(page, 'customer_api_form')).toMatch(/; Secure/);
    const signIn = await remote.post('/dashboard/sign-in', { email: 'cookies@example.com', password: testPassword }, { host: 'dashboard.example.com' });
    expect(signIn.statusCode).toBe(303);
    expect(setCookieLine(signIn, 'customer_api_session')).toMatch(/; Secure/);
  });

  it('refuses a wrong password and an unknown address with one message', async () => {
    const browser = await userWithPassword('wrong@example.com');
    const wrong = await browser.post('/dashboard/sign-in', { email: 'wrong@example.com', password: 'not the password at all' });
    expect(wrong.statusCode).toBe(401);
    const unknown = await browser.post('/dashboard/sign-in', { email: 'nobody@example.com', password: testPassword });
    expect(unknown.statusCode).toBe(401);
    const message = (body: string) => /<li>([^<]+)<\/li>/.exec(body)?.[1];
    expect(message(wrong.body)).toBe(message(unknown.body));
    expect(cookiesSet(wrong).customer_api_session).toBeUndefined();
  });

  it('answers an address that is no address (a NUL byte, which PostgreSQL cannot compare) like an unknown one', async () => {
    const browser = await userWithPassword('nul@example.com');
    const response = await browser.post('/dashboard/sign-in', { email: 'nul\u0000@example.com', password: testPassword }, {}, { remoteAddress: '192.0.2.77' });
    expect(response.statusCode).toBe(401);
    expect(response.body).toContain('The email address or the password is not right.');
  });

  it('stores the password as a scrypt hash, never in clear', async () => {
    await userWithPassword('stored@example.com');
    const row = await t.storage.db.selectFrom('dashboard_users').select('password_hash').where('email', '=', 'stored@example.com').executeTakeFirstOrThrow();
    expect(row.password_hash).toMatch(/^scrypt\$16\$8\$2\$[A-Za-z0-9_-]+\$[A-Za-z0-9_-]{43}$/);
    expect(row.password_hash).not.toContain(testPassword);
    expect(await hashPassword(testPassword)).not.toBe(row.password_hash);
  });

  it('limits sign-in attempts per email address (10 per 15 minutes), whatever the password', async () => {
    const browser = await userWithPassword('limited@example.com');
    // Each attempt from another address: only the per-email limit applies.
    const from = (attempt: number) => ({ remoteAddress: `198.51.100.${attempt}` });
    for (let attempt = 1; attempt <= 10; attempt += 1) {
      const response = await browser.post('/dashboard/sign-in', { email: 'limited@example.com', password: `guess number ${attempt}` }, {}, from(attempt));
      expect(response.statusCode, `attempt ${attempt}`).toBe(401);
    }
    const limited = await browser.post('/dashboard/sign-in', { email: 'limited@example.com', password: testPassword }, {}, from(11));
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body).toContain('Too many sign-in attempts');
    expect(cookiesSet(limited).customer_api_session).toBeUndefined();
  });

  it('limits sign-in attempts per client address across email addresses', async () => {
    const browser = new DashboardBrowser(t);
    await browser.get('/dashboard/sign-in');
    const from = { 'x-forwarded-for': '203.0.113.9' };
    const statuses: number[] = [];
    for (let attempt = 1; attempt <= 11; attempt += 1) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/dashboard/sign-in',
        remoteAddress: '203.0.113.9',
        payload: new URLSearchParams({ _csrf: csrfOf(browser.lastPage), email: `someone-${attempt}@example.com`, password: 'whatever it is here' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: `customer_api_form=${browser.cookies.get('customer_api_form')}`, ...from },
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.slice(0, 10).every((status) => status === 401)).toBe(true);
    expect(statuses[10]).toBe(429);
  });

  it('ends a session after the idle timeout (30 minutes) and after the absolute one (12 hours) even when in use', async () => {
    const idle = await signedInBrowser(t, alice.id, 'idle@example.com');
    t.clock.advance(29 * minute);
    expect((await idle.get('/dashboard')).statusCode).toBe(200);
    t.clock.advance(29 * minute);
    expect((await idle.get('/dashboard')).statusCode).toBe(200);
    t.clock.advance(30 * minute);
    const expired = await idle.get('/dashboard');
    expect(expired.statusCode).toBe(303);
    expect(expired.headers.location).toBe('/dashboard/sign-in');

    const busy = await signedInBrowser(t, alice.id, 'busy@example.com');
    // A page every 15 minutes for 11 h 45 min, then one at 12 h 01 min.
    for (let quarter = 0; quarter < 47; quarter += 1) {
      t.clock.advance(15 * minute);
      expect((await busy.get('/dashboard')).statusCode).toBe(200);
    }
    t.clock.advance(16 * minute);
    expect((await busy.get('/dashboard')).statusCode).toBe(303);
  });

  it('signs out: the session ends on the server, not only in the browser', async () => {
    const browser = await signedInBrowser(t, alice.id, 'sign-out@example.com');
    const session = browser.cookies.get('customer_api_session')!;
    await browser.get('/dashboard');
    const response = await browser.post('/dashboard/sign-out');
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe('/dashboard/sign-in');
    expect(cookiesSet(response).customer_api_session).toBe('');
    expect(response.headers['clear-site-data']).toBe('"cache"');
    const replayed = await t.app.inject({ url: '/dashboard', headers: { cookie: `customer_api_session=${session}` } });
    expect(replayed.statusCode).toBe(303);
  });

  it('uses a sign-in link once, refuses it after 24 hours, and ends the other sessions when a password is set', async () => {
    const users = dashboardUsers(t);
    const created = await users.create(alice.id, 'link@example.com');
    expect(created).toMatchObject({ email: 'link@example.com', customer_id: alice.id, password_set: false });
    expect(created.sign_in_url).toMatch(/^http:\/\/localhost:3000\/dashboard\/link\/[A-Za-z0-9_-]{43}$/);
    const path = new URL(created.sign_in_url).pathname;

    const browser = new DashboardBrowser(t);
    expect((await browser.get(path)).body).toContain('link@example.com');
    const short = await browser.post(path, { password: 'short', password_confirmation: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('<a href="#password">New password: must be 12-200 characters</a>');
    expect(short.body).toMatch(/<input id="password"[^>]* aria-invalid="true" aria-describedby="password-problem">/);
    // A password is never sent back into the page.
    expect(short.body).not.toContain('value="short"');
    const differ = await browser.post(path, { password: testPassword, password_confirmation: `${testPassword}!` });
    expect(differ.statusCode).toBe(400);
    expect(differ.body).toContain('New password: differs from its confirmation');
    expect((await browser.post(path, { password: testPassword, password_confirmation: testPassword })).statusCode).toBe(303);
    expect((await browser.get('/dashboard')).statusCode).toBe(200);

    const reused = new DashboardBrowser(t);
    expect((await reused.get(path)).statusCode).toBe(404);

    // A new link (password forgotten) sets a new password and ends the session opened with the old one.
    const again = await users.issueLink('link@example.com');
    const other = new DashboardBrowser(t);
    await other.get(new URL(again.sign_in_url).pathname);
    expect((await other.post(new URL(again.sign_in_url).pathname, { password: 'a brand new passphrase', password_confirmation: 'a brand new passphrase' })).statusCode).toBe(303);
    expect((await browser.get('/dashboard')).statusCode).toBe(303);

    const late = await users.issueLink('link@example.com');
    t.clock.advance(24 * 60 * minute);
    expect((await new DashboardBrowser(t).get(new URL(late.sign_in_url).pathname)).statusCode).toBe(404);
  });

  it('makes a new sign-in link replace the unused older ones', async () => {
    const users = dashboardUsers(t);
    const first = await users.create(alice.id, 'replaced@example.com');
    const second = await users.issueLink('replaced@example.com');
    expect((await new DashboardBrowser(t).get(new URL(first.sign_in_url).pathname)).statusCode).toBe(404);
    expect((await new DashboardBrowser(t).get(new URL(second.sign_in_url).pathname)).statusCode).toBe(200);
  });

  it('deletes sessions past a timeout and links past their expiry in the reaper pass, and nothing else', async () => {
    const count = async (table: 'dashboard_sessions' | 'dashboard_sign_in_links') =>
      Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('count')).executeTakeFirstOrThrow()).count);
    const reaper = t.app.workers.find((worker) => worker.name === 'reaper')!;
    await reaper.runOnce();
    const idle = await signedInBrowser(t, alice.id, 'reaped@example.com');
    await dashboardUsers(t).issueLink('reaped@example.com');
    const sessionsBefore = await count('dashboard_sessions');
    const linksBefore = await count('dashboard_sign_in_links');
    await reaper.runOnce();
    expect(await count('dashboard_sessions')).toBe(sessionsBefore);
    expect(await count('dashboard_sign_in_links')).toBe(linksBefore);
    t.clock.advance(25 * 60 * minute);
    await reaper.runOnce();
    expect(await count('dashboard_sessions')).toBe(0);
    expect(await count('dashboard_sign_in_links')).toBe(0);
    expect((await idle.get('/dashboard')).statusCode).toBe(303);
  });

  it('refuses every signed-out form without its form token, or with a token of another browser', async () => {
    const created = await dashboardUsers(t).create(alice.id, 'forms@example.com');
    const path = new URL(created.sign_in_url).pathname;
    const attacker = new DashboardBrowser(t);
    await attacker.get('/dashboard/sign-in');
    const foreignToken = csrfOf(attacker.lastPage);

    const victim = new DashboardBrowser(t);
    await victim.get('/dashboard/sign-in');
    for (const url of ['/dashboard/sign-in', path]) {
      const missing = await victim.post(url, { _csrf: '', email: 'forms@example.com', password: testPassword, password_confirmation: testPassword });
      expect(missing.statusCode, url).toBe(403);
      const foreign = await victim.post(url, { _csrf: foreignToken, email: 'forms@example.com', password: testPassword, password_confirmation: testPassword });
      expect(foreign.statusCode, url).toBe(403);
    }
    // The link is still unused: refused forms changed nothing.
    expect((await victim.get(path)).statusCode).toBe(200);
  });

  it('refuses signed-in forms without the session form token', async () => {
    const browser = await signedInBrowser(t, alice.id, 'session-forms@example.com');
    await browser.get('/dashboard');
    expect((await browser.post('/dashboard/sign-out', { _csrf: '0'.repeat(64) })).statusCode).toBe(403);
    expect((await browser.get('/dashboard')).statusCode).toBe(200);
  });

  it('takes form bodies only: JSON with a valid form token is refused with the 415 page, signed in or out', async () => {
    const browser = await signedInBrowser(t, alice.id, 'json-forms@example.com');
    await browser.get('/dashboard/webhooks');
    const signedIn = { _csrf: csrfOf(browser.lastPage) };
    const session = { cookie: `customer_api_session=${browser.cookies.get('customer_api_session')}` };
    const signedOut = new DashboardBrowser(t);
    await signedOut.get('/dashboard/sign-in');
    const formCookie = { cookie: `customer_api_form=${signedOut.cookies.get('customer_api_form')}` };
    const attempts = [
      { url: '/dashboard/sign-in', headers: formCookie, payload: { _csrf: csrfOf(signedOut.lastPage), email: 5, password: testPassword } },
      { url: '/dashboard/webhooks', headers: session, payload: { ...signedIn, url: { href: 'https://example.com' }, event_types: [1] } },
      { url: '/dashboard/api-keys', headers: session, payload: { ...signedIn, access: 'scopes', scopes: [1, 2] } },
    ];
    for (const { url, headers, payload } of attempts) {
      const response = await t.app.inject({ method: 'POST', url, headers, payload });
      expect(response.statusCode, url).toBe(415);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
    }
    expect((await browser.get('/dashboard/webhooks')).body).toContain('No subscriptions yet.');
    // The JSON API still takes JSON only: forms are refused there as before.
    for (const contentType of ['application/x-www-form-urlencoded', 'multipart/form-data; boundary=x']) {
      const response = await t.request({ method: 'POST', url: '/webhooks', key: alice.key, csrf: true, body: 'url=x', headers: { 'content-type': contentType } });
      expect(response.statusCode, contentType).toBe(415);
      expect(response.json().error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
    }
  });

  it('answers an id that is no UUID (a NUL byte, which PostgreSQL refuses) with the 404 page on every route with an id', async () => {
    const browser = await signedInBrowser(t, alice.id, 'nul-ids@example.com');
    const gets = ['end-users', 'webhooks', 'events', 'transactions', 'wallet-transfers', 'accounts/fiat', 'accounts/virtual', 'accounts/wallets'];
    for (const url of [...gets.map((section) => `/dashboard/${section}/%00`), '/dashboard/end-users/not-an-id']) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain('Not found');
    }
    const posts = [
      'api-keys/%00/revoke',
      'end-users/%00/verification',
      'webhooks/%00',
      'webhooks/%00/active',
      'webhooks/%00/rotate-secret',
      'webhooks/%00/test',
      'webhooks/%00/replay',
      'webhooks/%00/delete',
      'accounts/%00/deposits',
      'accounts/wallets/%00/deposits',
      'payments/%00/settle',
      'wallet-transfers/%00/settle',
    ];
    for (const url of posts.map((path) => `/dashboard/${path}`)) {
      await browser.get('/dashboard');
      const response = await browser.post(url, { outcome: 'completed', amount: '1' });
      expect(response.statusCode, url).toBe(404);
    }
  });

  it('serves every page with a CSP without inline scripts, no framing and no referrer', async () => {
    const browser = await signedInBrowser(t, alice.id, 'headers@example.com');
    for (const url of ['/dashboard', '/dashboard/api-keys', '/dashboard/sign-in', '/dashboard/nowhere']) {
      const response = await browser.get(url);
      const policy = String(response.headers['content-security-policy']);
      expect(policy, url).toContain("frame-ancestors 'none'");
      expect(policy).toContain("script-src 'self'");
      expect(policy).not.toContain('unsafe-inline');
      expect(policy).not.toContain('unsafe-eval');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
      expect(response.body).not.toMatch(/\sstyle=|\son[a-z]+=/i);
    }
  });
});
