import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardAccountChoicesMax, dashboardAccountsPerPage } from '../../src/config/limits.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createBusiness, createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { deIban } from '../helpers/money.js';
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
    // 254 characters (the longest email address) is the longest search: shown whole in the box, one more the 400 page.
    const longest = await browser.get(`/dashboard/end-users?q=${'a'.repeat(254)}`);
    expect(longest.statusCode).toBe(200);
    expect(longest.body).toContain(`value="${'a'.repeat(254)}"`);
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

describe('the payees page: paged and searched', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  const supplierIds: string[] = [];
  let erika: string;
  let arthur: string;
  let bobsErika: string;

  /** A payee of the customer, made through the API. */
  async function addPayee(customer: TestCustomer, name: string, bankDetails: Record<string, string>): Promise<string> {
    const body = { name, address: { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' }, bankDetails };
    const response = await t.request({ method: 'POST', url: '/payees', key: customer.key, csrf: true, body });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data.id;
  }

  const search = async (q: string) => linkedIds((await browser.get(`/dashboard/payees?q=${encodeURIComponent(q)}`)).body, '/dashboard/payees/');

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    for (let index = 0; index < 11; index += 1) {
      supplierIds.push(await addPayee(alice, `Supplier ${index}`, { sortCode: '601613', accountNumber: `1000000${index % 10}` }));
      t.clock.advance(1000);
    }
    erika = await addPayee(alice, 'Erika Mustermann', { iban: deIban, bic: 'COBADEFFXXX', accountHolderName: 'Mustermann Holding' });
    t.clock.advance(1000);
    arthur = await addPayee(alice, 'Arthur Dent', { sortCode: '20-00-00', accountNumber: '31926819' });
    bobsErika = await addPayee(bob, 'Erika Bobsdottir', { iban: deIban });
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  it('pages the payees newest first, the links keeping the search and the page size', async () => {
    const first = await browser.get('/dashboard/payees?limit=10');
    expect(first.statusCode).toBe(200);
    expect(linkedIds(first.body, '/dashboard/payees/')).toEqual([arthur, erika, ...[...supplierIds].reverse()].slice(0, 10));
    expect(first.body).toContain('Page 1 of 2 (13 in all)');

    const searched = await browser.get('/dashboard/payees?q=supplier&limit=5');
    expect(linkedIds(searched.body, '/dashboard/payees/')).toEqual([...supplierIds].reverse().slice(0, 5));
    expect(searched.body).toContain('Page 1 of 3 (11 in all)');
    expect(searched.body).toContain('href="/dashboard/payees?q=supplier&amp;page=2&amp;limit=5"');
    expect(searched.body).toContain('value="supplier"');
    const second = await browser.get('/dashboard/payees?q=supplier&page=2&limit=5');
    expect(linkedIds(second.body, '/dashboard/payees/')).toEqual([...supplierIds].reverse().slice(5, 10));
    expect(second.body).toContain('href="/dashboard/payees?q=supplier&amp;page=3&amp;limit=5"');
    expect(second.body).toContain('href="/dashboard/payees?q=supplier&amp;page=1&amp;limit=5"');
    for (const bad of ['page=0', 'limit=x', 'page=99999999999']) expect((await browser.get(`/dashboard/payees?${bad}`)).statusCode, bad).toBe(400);
  });

  it('finds a payee by its name or account holder (case of A-Z ignored), its IBAN, account number or sort code as people write them, or its id', async () => {
    for (const q of ['ERIKA', 'erika muster', 'mustermann holding', deIban, 'de89 3704 0044', erika, erika.toUpperCase()]) expect(await search(q), q).toEqual([erika]);
    for (const q of ['arthur', '31926819', '20-00-00', '200000', arthur]) expect(await search(q), q).toEqual([arthur]);
    expect(await search('10000003')).toEqual([supplierIds[3]]);
  });

  it("says when nothing matches, and never lists another customer's payees", async () => {
    const none = await browser.get('/dashboard/payees?q=nobody');
    expect(linkedIds(none.body, '/dashboard/payees/')).toEqual([]);
    expect(none.body).toContain('No payee matches this search.');
    expect(await search(bobsErika)).toEqual([]);
    expect(await search('Bobsdottir')).toEqual([]);
    expect(await search('erika')).toEqual([erika]);
    expect(linkedIds((await browser.get('/dashboard/payees?limit=100')).body, '/dashboard/payees/')).not.toContain(bobsErika);
  });

  it('takes a search of 254 characters, the longest, and refuses one longer (400 page)', async () => {
    const longest = await browser.get(`/dashboard/payees?q=${'a'.repeat(254)}`);
    expect(longest.statusCode).toBe(200);
    expect(longest.body).toContain(`value="${'a'.repeat(254)}"`);
    expect((await browser.get(`/dashboard/payees?q=${'a'.repeat(255)}`)).statusCode).toBe(400);
  });
});
