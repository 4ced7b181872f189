import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardAccountChoicesMax, dashboardAccountsPerPage } from '../../src/config/limits.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createBusiness, createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** The ids a list page links to under `prefix` (e.g. `/dashboard/end-users/`), in order. */
function linkedIds(html: string, prefix: string): string[] {
  return [...html.matchAll(new RegExp(`<a href="${prefix}([0-9a-f-]{36})">`, 'g'))].map((match) => match[1]!);
}

describe('dashboard lists that scale: pages and search', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  const endUserIds: string[] = [];

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    for (let index = 0; index < 11; index += 1) {
      endUserIds.push((await createIndividual(t, alice, { firstName: `Person${index}`, lastName: 'Plain', email: `person${index}@example.com` })).id);
      t.clock.advance(1000);
    }
    endUserIds.push((await createIndividual(t, alice, { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@analytical.example' })).id);
    t.clock.advance(1000);
    endUserIds.push((await createBusiness(t, alice, {}, { companyName: '100% Widgets_Ltd' })).id);
    await createIndividual(t, bob, { firstName: 'Ada', lastName: 'Bobsdottir', email: 'ada@bob.example' });
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  it('pages the end users newest first, the links keeping the page size and the search', async () => {
    const first = await browser.get('/dashboard/end-users?limit=10');
    expect(first.statusCode).toBe(200);
    expect(linkedIds(first.body, '/dashboard/end-users/')).toEqual([...endUserIds].reverse().slice(0, 10));
    expect(first.body).toContain('Page 1 of 2 (13 in all)');
    expect(first.body).toContain('href="/dashboard/end-users?page=2&amp;limit=10"');
    const second = await browser.get('/dashboard/end-users?limit=10&page=2');
    expect(linkedIds(second.body, '/dashboard/end-users/')).toEqual([...endUserIds].reverse().slice(10));

    const searched = await browser.get('/dashboard/end-users?q=plain&limit=5');
    expect(searched.body).toContain('Page 1 of 3 (11 in all)');
    expect(searched.body).toContain('href="/dashboard/end-users?q=plain&amp;page=2&amp;limit=5"');
    expect((await browser.get('/dashboard/end-users?page=0')).statusCode).toBe(400);
  });

  it('searches end users by name (case of A-Z ignored), full name, email address, id and literal % or _, never another customer\'s', async () => {
    const ada = endUserIds[11]!;
    const widgets = endUserIds[12]!;
    for (const q of ['ADA', 'ada lovelace', 'Lovelace', 'analytical.example', ada.toUpperCase()]) {
      expect(linkedIds((await browser.get(`/dashboard/end-users?q=${encodeURIComponent(q)}`)).body, '/dashboard/end-users/'), q).toEqual([ada]);
    }
    expect(linkedIds((await browser.get(`/dashboard/end-users?q=${encodeURIComponent('100%')}`)).body, '/dashboard/end-users/')).toEqual([widgets]);
    expect(linkedIds((await browser.get(`/dashboard/end-users?q=${encodeURIComponent('s_L')}`)).body, '/dashboard/end-users/')).toEqual([widgets]);
    // `_` and `%` match only themselves: "Person1_" is nobody.
    expect(linkedIds((await browser.get(`/dashboard/end-users?q=${encodeURIComponent('Person1_')}`)).body, '/dashboard/end-users/')).toEqual([]);
    const bobs = (await t.request({ url: '/end-users', key: bob.key })).json().data[0].id as string;
    const none = await browser.get(`/dashboard/end-users?q=${bobs}`);
    expect(linkedIds(none.body, '/dashboard/end-users/')).toEqual([]);
    expect(none.body).toContain('No end user matches this search.');
    expect((await browser.get(`/dashboard/end-users?q=${'a'.repeat(255)}`)).statusCode).toBe(400);
  });

  it('pages each list of the accounts page on its own, keeping the others\' pages', async () => {
    const ids: string[] = [];
    for (let index = 0; index <= dashboardAccountsPerPage; index += 1) {
      ids.push((await createFiatAccount(t, alice, { accountName: `Account ${index}`, currency: 'EUR' })).id);
      t.clock.advance(1000);
    }
    const first = await browser.get('/dashboard/accounts');
    expect(linkedIds(first.body, '/dashboard/accounts/fiat/')).toEqual([...ids].reverse().slice(0, dashboardAccountsPerPage));
    expect(first.body).toContain(`Page 1 of 2 (${dashboardAccountsPerPage + 1} in all)`);
    expect(first.body).toContain('href="/dashboard/accounts?fiat_page=2" rel="next"');
    const second = await browser.get('/dashboard/accounts?fiat_page=2&wallet_page=3');
    expect(linkedIds(second.body, '/dashboard/accounts/fiat/')).toEqual([ids[0]]);
    expect(second.body).toContain('href="/dashboard/accounts?fiat_page=1&amp;wallet_page=3" rel="prev"');
    for (const bad of ['fiat_page=0', 'virtual_page=x', 'wallet_page=99999999999']) expect((await browser.get(`/dashboard/accounts?${bad}`)).statusCode, bad).toBe(400);
  });

  it('offers the newest accounts in the transaction filter, and the one filtered by even when older', async () => {
    const oldest = (await createFiatAccount(t, alice, { accountName: 'Oldest', currency: 'EUR' })).id;
    for (let index = 0; index < dashboardAccountChoicesMax; index += 1) {
      t.clock.advance(1000);
      await createFiatAccount(t, alice, { accountName: `Newer ${index}`, currency: 'EUR' });
    }
    const options = (html: string) => [...html.matchAll(/<option value="([0-9a-f-]{36})"( selected)?>/g)].map((match) => ({ id: match[1]!, selected: match[2] !== undefined }));
    const unfiltered = options((await browser.get('/dashboard/transactions')).body);
    expect(unfiltered).toHaveLength(dashboardAccountChoicesMax);
    expect(unfiltered.map((option) => option.id)).not.toContain(oldest);
    const filtered = options((await browser.get(`/dashboard/transactions?account_id=${oldest}`)).body);
    expect(filtered).toHaveLength(dashboardAccountChoicesMax + 1);
    expect(filtered.find((option) => option.id === oldest)).toEqual({ id: oldest, selected: true });
  });
});
