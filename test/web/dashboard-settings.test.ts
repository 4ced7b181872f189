import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createIndividual } from '../helpers/fixtures.js';

const logoOrigin = 'https://cdn.example.com';

describe('dashboard settings: the hosted onboarding page shows the customer’s display name and logo', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let browser: DashboardBrowser;

  beforeAll(async () => {
    t = await createTestApp({ env: { ONBOARDING_LOGO_ORIGINS: `${logoOrigin},https://img.example.org:8443` } });
    alice = await t.createCustomer('Alice Ltd');
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  const onboardingPath = async () => {
    const created = await createIndividual(t, alice, { verificationMethod: 'hosted_kyc' });
    return new URL((await t.request({ url: `/end-users/${created.id}/onboarding-link`, key: alice.key })).json().data.url).pathname;
  };
  const stored = async () => t.storage.db.selectFrom('customers').select(['display_name', 'logo_url']).where('id', '=', alice.id).executeTakeFirstOrThrow();

  it('names the customer by its own name and shows no logo until set; the page policy allows its own images only', async () => {
    const page = await t.app.inject({ url: await onboardingPath() });
    expect(page.body).toContain('<strong>Alice Ltd</strong> asks you');
    expect(page.body).not.toContain('class="logo"');
    expect(page.headers['content-security-policy']).toContain("img-src 'self';");
  });

  it('sets a display name and a logo: the page shows them, and its policy allows images of exactly that origin', async () => {
    const form = await browser.get('/dashboard/settings');
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('aria-current="page">Settings');
    const saved = await browser.submit('/dashboard/settings', { display_name: '  Alice Payments  ', logo_url: `${logoOrigin}/brand/logo.svg` });
    expect(saved.redirectedTo).toBe('/dashboard/settings');
    expect(saved.body).toContain('Saved: your hosted onboarding pages show it from now on.');
    expect(saved.body).toContain('value="Alice Payments"');
    expect(await stored()).toEqual({ display_name: 'Alice Payments', logo_url: `${logoOrigin}/brand/logo.svg` });

    const page = await t.app.inject({ url: await onboardingPath() });
    expect(page.body).toContain('<strong>Alice Payments</strong> asks you');
    expect(page.body).toContain(`<img class="logo" src="${logoOrigin}/brand/logo.svg" alt="Alice Payments" height="48">`);
    expect(page.headers['content-security-policy']).toContain(`img-src 'self' ${logoOrigin};`);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self';");
    // The dashboard's own pages keep their policy.
    expect((await browser.get('/dashboard')).headers['content-security-policy']).toContain("img-src 'self';");
    // A reload of the page the form led to changes nothing.
    await browser.get(saved.redirectedTo!);
    expect(await stored()).toEqual({ display_name: 'Alice Payments', logo_url: `${logoOrigin}/brand/logo.svg` });
  });

  it('refuses a logo that is not https, on another host, or with credentials, and a name too long, each by its field, storing nothing', async () => {
    const before = await stored();
    await browser.get('/dashboard/settings');
    for (const [logoUrl, reason] of [
      ['http://cdn.example.com/logo.png', 'must be an https URL'],
      ['https://evil.example/logo.png', 'must be on https://cdn.example.com or https://img.example.org:8443'],
      ['https://img.example.org/logo.png', 'must be on https://cdn.example.com'],
      ['https://user:pw@cdn.example.com/logo.png', 'must not carry a user name or password'],
      ['javascript:alert(1)', 'must be an https URL'],
    ] as const) {
      const refused = await browser.submit('/dashboard/settings', { display_name: 'x'.repeat(101), logo_url: logoUrl });
      expect(refused.statusCode, logoUrl).toBe(400);
      expect(refused.body).toContain('<a href="#display_name">Display name: must be at most 100 characters</a>');
      expect(refused.body).toContain(`<a href="#logo_url">Logo URL: ${reason}`);
      expect(refused.body).toMatch(/<input id="logo_url"[^>]* aria-invalid="true" aria-describedby="logo_url-problem">/);
      expect(refused.body).toContain(`value="${logoUrl.replaceAll('&', '&amp;')}"`);
    }
    expect(await stored()).toEqual(before);
  });

  it('takes a display name of 100 characters and a logo URL of 2048, the longest: stored and shown whole', async () => {
    const displayName = `${'D'.repeat(99)}!`;
    const prefix = `${logoOrigin}/brand/`;
    const logoUrl = `${prefix}${'l'.repeat(2048 - prefix.length - 4)}.svg`;
    expect(logoUrl).toHaveLength(2048);
    await browser.get('/dashboard/settings');
    const saved = await browser.submit('/dashboard/settings', { display_name: displayName, logo_url: logoUrl });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(await stored()).toEqual({ display_name: displayName, logo_url: logoUrl });
    expect(saved.body).toContain(`value="${displayName}"`);
    expect(saved.body).toContain(`value="${logoUrl}"`);
    const page = await t.app.inject({ url: await onboardingPath() });
    expect(page.body).toContain(`<strong>${displayName}</strong> asks you`);
    expect(page.body).toContain(`src="${logoUrl}"`);
  });

  it('clears both with empty fields: the customer’s name again, no logo', async () => {
    await browser.get('/dashboard/settings');
    await browser.submit('/dashboard/settings', { display_name: '', logo_url: '' });
    expect(await stored()).toEqual({ display_name: null, logo_url: null });
    const page = await t.app.inject({ url: await onboardingPath() });
    expect(page.body).toContain('<strong>Alice Ltd</strong> asks you');
    expect(page.body).not.toContain('class="logo"');
  });

  it('shows no logo from an origin no longer allowed (the setting changed since), and refuses every logo when none is allowed', async () => {
    await t.storage.db.updateTable('customers').set({ logo_url: 'https://old.example.com/logo.png' }).where('id', '=', alice.id).execute();
    const page = await t.app.inject({ url: await onboardingPath() });
    expect(page.body).not.toContain('old.example.com');
    expect(page.headers['content-security-policy']).toContain("img-src 'self';");

    const bare = await createTestApp();
    try {
      const carol = await bare.createCustomer('Carol SA');
      const carolBrowser = await signedInBrowser(bare, carol.id);
      await carolBrowser.get('/dashboard/settings');
      const refused = await carolBrowser.submit('/dashboard/settings', { logo_url: `${logoOrigin}/logo.png` });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain('no logo host is allowed on this server (ONBOARDING_LOGO_ORIGINS)');
    } finally {
      await bare.close();
    }
  });
});
