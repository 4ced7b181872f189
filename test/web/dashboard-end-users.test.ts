import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onboardingLinkTtlMs } from '../../src/config/limits.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createBusiness, createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b';
const pngBytes = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 0x41)]);

describe('dashboard end users', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  const statusOf = async (customer: TestCustomer, endUserId: string) =>
    (await t.request({ url: `/end-users/${endUserId}`, key: customer.key })).json().data.status as string;

  const decideByApi = async (customer: TestCustomer, endUserId: string, outcome: string) => {
    const response = await t.request({ method: 'POST', url: `/sandbox/end-users/${endUserId}/verification`, key: customer.key, csrf: true, body: { outcome } });
    expect(response.statusCode, response.body).toBe(200);
  };

  it('lists the end users of this customer only, with name, type, email, status and verification method in words, each linking to its page', async () => {
    const ada = await createIndividual(t, alice, { firstName: 'Ada', lastName: 'Listed', email: 'ada.listed@example.com', verificationMethod: 'pdf_upload' });
    const engines = await createBusiness(t, alice, {}, { companyName: 'Listed Engines Ltd' });
    await decideByApi(alice, engines.id, 'review_required');
    const bobsUser = await createIndividual(t, bob, { firstName: 'Bobs', lastName: 'Person', email: 'bobs.person@example.com' });

    const page = await browser.get('/dashboard/end-users');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<a href="/dashboard/end-users/${ada.id}">Ada Listed</a>`);
    expect(page.body).toContain('ada.listed@example.com');
    expect(page.body).toContain('PDF upload');
    expect(page.body).toContain(`<a href="/dashboard/end-users/${engines.id}">Listed Engines Ltd</a>`);
    expect(page.body).toMatch(/Listed Engines Ltd<\/a><\/td>\s*<td data-label="Type">Business<\/td>\s*<td data-label="Email">office@engines\.example<\/td>\s*<td data-label="Status"><span>Review required<\/span><\/td>\s*<td data-label="Verification method">Not set<\/td>/);
    expect(page.body).toMatch(/Ada Listed<\/a><\/td>\s*<td data-label="Type">Individual<\/td>[\s\S]*?Pending verification/);
    expect(page.body).not.toContain(bobsUser.id);
    expect(page.body).not.toContain('bobs.person@example.com');
  });

  it('shows an end user with its main fields and its documents', async () => {
    const user = await createIndividual(t, alice, { firstName: 'Doc', lastName: 'Holder' });
    const uploaded = await t.request({
      method: 'POST',
      url: '/documents',
      key: alice.key,
      csrf: true,
      body: { endUserId: user.id, documentType: 'proof_of_address', fileName: 'utility-bill.png', fileData: pngBytes.toString('base64'), mimeType: 'image/png' },
    });
    expect(uploaded.statusCode, uploaded.body).toBe(201);

    const page = await browser.get(`/dashboard/end-users/${user.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Doc Holder</h1>');
    expect(page.body).toContain(String(user.reference_code));
    expect(page.body).toContain('Pending verification');
    expect(page.body).toMatch(/<td data-label="Type">Proof of address<\/td>\s*<td data-label="Kind"><\/td>\s*<td data-label="File name">utility-bill\.png<\/td>\s*<td data-label="MIME type">image\/png<\/td>\s*<td data-label="Size" class="num">64 bytes<\/td>\s*<td data-label="Sync status">Pending<\/td>/);
  });

  it('changes the status with the sandbox verification buttons, as GET /end-users/{id} then answers', async () => {
    const user = await createIndividual(t, alice);
    const before = await browser.get(`/dashboard/end-users/${user.id}`);
    for (const outcome of ['verified', 'rejected', 'review_required']) expect(before.body).toContain(`name="outcome" value="${outcome}"`);

    const review = await browser.post(`/dashboard/end-users/${user.id}/verification`, { outcome: 'review_required' });
    expect(review.statusCode).toBe(303);
    expect(review.headers.location).toBe(`/dashboard/end-users/${user.id}`);
    expect(await statusOf(alice, user.id)).toBe('review_required');
    const reviewPage = await browser.get(`/dashboard/end-users/${user.id}`);
    expect(reviewPage.body).toContain('Review required');
    expect(reviewPage.body).toContain('<p class="notice" role="status">Verification decided: Review required.</p>');
    // A reload decides nothing again and says nothing again.
    const events = async () => (await t.request({ url: '/events?type=end_user.review_required&limit=100', key: alice.key })).json().meta.pagination.total;
    const count = await events();
    expect((await browser.get(`/dashboard/end-users/${user.id}`)).body).not.toContain('Verification decided');
    expect(await events()).toBe(count);
    // Only the moves the status allows are offered.
    expect(reviewPage.body).not.toContain('name="outcome" value="review_required"');

    const verified = await browser.post(`/dashboard/end-users/${user.id}/verification`, { outcome: 'verified' });
    expect(verified.statusCode).toBe(303);
    expect(await statusOf(alice, user.id)).toBe('verified');
    const verifiedPage = await browser.get(`/dashboard/end-users/${user.id}`);
    expect(verifiedPage.body).toContain('<span class="status-ok">Verified</span>');
    expect(verifiedPage.body).not.toContain('name="outcome"');
  });

  it('shows a move the status does not allow (verifying a rejected end user) as a problem with status 422, and changes nothing', async () => {
    const user = await createIndividual(t, alice);
    await decideByApi(alice, user.id, 'rejected');
    await browser.get(`/dashboard/end-users/${user.id}`);
    const refused = await browser.post(`/dashboard/end-users/${user.id}/verification`, { outcome: 'verified' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('role="alert"');
    expect(refused.body).toContain('An end user in status rejected cannot become verified.');
    expect(await statusOf(alice, user.id)).toBe('rejected');
  });

  it('refuses an outcome the API does not know with status 400 and the field problem', async () => {
    const user = await createIndividual(t, alice);
    await browser.get(`/dashboard/end-users/${user.id}`);
    const refused = await browser.post(`/dashboard/end-users/${user.id}/verification`, { outcome: 'approved' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Outcome: must be one of verified, rejected, review_required');
    expect(await statusOf(alice, user.id)).toBe('pending_verification');
  });

  it('shows the hosted onboarding URL with a copy button for a hosted_kyc end user only', async () => {
    const token = 'hosted-7';
    const hosted = await createIndividual(t, alice, { verificationMethod: 'hosted_kyc', onboarding_url_token: token });
    const link = (await t.request({ url: `/end-users/${hosted.id}/onboarding-link`, key: alice.key })).json().data;
    expect(link.url).toMatch(new RegExp(`^${t.config.publicUrl}/onboarding/${token}\\.[A-Za-z0-9_-]{43}$`));
    const hostedPage = await browser.get(`/dashboard/end-users/${hosted.id}`);
    expect(hostedPage.body).toContain(`id="onboarding-url" readonly value="${link.url}"`);
    expect(hostedPage.body).toContain('data-copy="onboarding-url"');
    expect(hostedPage.body).toContain('Hosted onboarding page');

    // A token sent without hosted_kyc opens no page, so it is no link to hand out.
    const otherToken = `plain${'B'.repeat(40)}`;
    const notHosted = await createIndividual(t, alice, { verificationMethod: 'pdf_upload', onboarding_url_token: otherToken });
    const notHostedPage = await browser.get(`/dashboard/end-users/${notHosted.id}`);
    expect(notHostedPage.body).not.toContain('/onboarding/');
    expect(notHostedPage.body).not.toContain(otherToken);
  });

  it('escapes names with HTML characters on the list and the detail page', async () => {
    const user = await createIndividual(t, alice, { lastName: '<script>x</script>' });
    const business = await createBusiness(t, alice, {}, { companyName: 'Smith & "Sons" <b>Ltd</b>' });
    for (const url of ['/dashboard/end-users', `/dashboard/end-users/${user.id}`, `/dashboard/end-users/${business.id}`]) {
      const page = await browser.get(url);
      expect(page.body, url).not.toContain('<script>x</script>');
      expect(page.body, url).not.toContain('<b>Ltd</b>');
    }
    expect((await browser.get(`/dashboard/end-users/${user.id}`)).body).toContain('Ada &lt;script&gt;x&lt;/script&gt;');
    expect((await browser.get(`/dashboard/end-users/${business.id}`)).body).toContain('Smith &amp; &quot;Sons&quot; &lt;b&gt;Ltd&lt;/b&gt;');
  });

  it('refuses the verification form with 403 without a valid form token, and changes nothing', async () => {
    const user = await createIndividual(t, alice);
    await browser.get(`/dashboard/end-users/${user.id}`);
    for (const csrf of ['', 'f'.repeat(64)]) {
      const refused = await browser.post(`/dashboard/end-users/${user.id}/verification`, { outcome: 'verified', _csrf: csrf });
      expect(refused.statusCode).toBe(403);
    }
    expect(await statusOf(alice, user.id)).toBe('pending_verification');
  });

  it("answers another customer's end user like an unknown one (404) on every page that takes an id, and changes nothing", async () => {
    const bobsUser = await createIndividual(t, bob, { firstName: 'Hidden', lastName: 'Person' });
    for (const id of [bobsUser.id, unknownId, 'not-an-id']) {
      const page = await browser.get(`/dashboard/end-users/${id}`);
      expect(page.statusCode, id).toBe(404);
      expect(page.body).not.toContain('Hidden Person');
      await browser.get('/dashboard/end-users');
      const decided = await browser.post(`/dashboard/end-users/${id}/verification`, { outcome: 'verified' });
      expect(decided.statusCode, id).toBe(404);
      // An outcome the API refuses does not tell another customer's end user from an unknown one either.
      await browser.get('/dashboard/end-users');
      expect((await browser.post(`/dashboard/end-users/${id}/verification`, { outcome: 'approved' })).statusCode, id).toBe(404);
    }
    expect(await statusOf(bob, bobsUser.id)).toBe('pending_verification');
  });

  it('sends a browser without a session to the sign-in page', async () => {
    const user = await createIndividual(t, alice);
    for (const [method, url] of [
      ['GET', '/dashboard/end-users'],
      ['GET', `/dashboard/end-users/${user.id}`],
      ['POST', `/dashboard/end-users/${user.id}/verification`],
    ] as const) {
      const response = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: 'outcome=verified', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location).toBe(method === 'GET' ? `/dashboard/sign-in?next=${encodeURIComponent(url)}` : '/dashboard/sign-in');
    }
    expect(await statusOf(alice, user.id)).toBe('pending_verification');
  });
});

describe('dashboard hosted onboarding link', () => {
  it('says until when the link works, that it expired once its time is over, and that the person completed it', async () => {
    const t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    try {
      const customer = await t.createCustomer();
      const user = await createIndividual(t, customer, { verificationMethod: 'hosted_kyc' });
      const expiresAt = new Date(t.clock.now().getTime() + onboardingLinkTtlMs).toISOString();
      const fresh = await (await signedInBrowser(t, customer.id)).get(`/dashboard/end-users/${user.id}`);
      expect(fresh.body).toMatch(new RegExp(`The link works until <time datetime="${expiresAt}"[^>]*>[^<]+</time>\\.`));

      t.clock.advance(onboardingLinkTtlMs + 1);
      // A new session: the first one has long been idle.
      const later = await (await signedInBrowser(t, customer.id, 'later@example.com')).get(`/dashboard/end-users/${user.id}`);
      expect(later.body).toMatch(new RegExp(`The link expired on <time datetime="${expiresAt}"[^>]*>[^<]+</time>; it no longer opens the page\\.`));

      // The hosted page records its completion (web/onboarding); the dashboard says so instead of the expiry.
      const completedAt = t.clock.now().toISOString();
      await t.storage.db.updateTable('end_users').set({ onboarding_completed_at: completedAt }).where('id', '=', user.id).execute();
      const completed = await (await signedInBrowser(t, customer.id, 'completed@example.com')).get(`/dashboard/end-users/${user.id}`);
      expect(completed.body).toMatch(new RegExp(`The person completed the page on <time datetime="${completedAt}"[^>]*>[^<]+</time>; the link no longer opens it\\.`));
    } finally {
      await t.close();
    }
  });
});

describe('dashboard end users in production', () => {
  it('offers no verification buttons and has no verification route', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production', SANDBOX_AUTO_SETTLE_MS: 'off' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer();
      const browser = await signedInBrowser(t, customer.id);
      const user = await createIndividual(t, customer);
      const page = await browser.get(`/dashboard/end-users/${user.id}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('name="outcome"');
      const refused = await browser.post(`/dashboard/end-users/${user.id}/verification`, { outcome: 'verified' });
      expect(refused.statusCode).toBe(404);
      expect(await (await t.request({ url: `/end-users/${user.id}`, key: customer.key })).json().data.status).toBe('pending_verification');
    } finally {
      await t.close();
    }
  });
});
