import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxProviders } from '../../src/providers/providers.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createVirtualAccount, deposit, fiatBalance, moneySnapshot, virtualBalance } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '5b0e2c4d-6f7a-4b8c-9d0e-1f2a3b4c5d6e';

type Account = Awaited<ReturnType<typeof createFiatAccount>>;
type Wallet = { local_id: string; deposit_address: string };

async function createWallet(t: TestApp, customer: TestCustomer, displayName: string): Promise<Wallet> {
  const response = await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf: true, body: { displayName } });
  if (response.statusCode !== 201) throw new Error(`POST /wallets answered ${response.statusCode}: ${response.body}`);
  return response.json().data as Wallet;
}

async function walletBalances(t: TestApp, customer: TestCustomer, walletId: string) {
  const response = await t.request({ url: `/wallets/${walletId}`, key: customer.key });
  expect(response.statusCode).toBe(200);
  return response.json().data.balances as Array<{ asset: string; balance: string; available: string }>;
}

describe('dashboard accounts pages (sandbox)', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  let eur: Account;
  let gbp: Account;
  let closed: Account;
  let collections: Awaited<ReturnType<typeof createVirtualAccount>>;
  let wallet: Wallet;
  let bobsEur: Account;
  let bobsVirtual: Awaited<ReturnType<typeof createVirtualAccount>>;
  let bobsWallet: Wallet;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    eur = await createFiatAccount(t, alice, { accountName: 'Main EUR', currency: 'EUR' });
    gbp = await createFiatAccount(t, alice, { accountName: 'Sterling', currency: 'GBP', ibanCountry: 'GB' });
    closed = await createFiatAccount(t, alice, { accountName: 'Old EUR', currency: 'EUR' });
    const closing = await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${closed.id}/status`, key: alice.key, csrf: true, body: { status: 'closed' } });
    expect(closing.statusCode).toBe(200);
    collections = await createVirtualAccount(t, alice, eur.id);
    wallet = await createWallet(t, alice, 'Treasury');
    await deposit(t, alice, eur.id, 1000);
    bobsEur = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    bobsVirtual = await createVirtualAccount(t, bob, bobsEur.id);
    bobsWallet = await createWallet(t, bob, 'Bob wallet');
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  it("lists the customer's fiat accounts with IBAN, BIC and balance, its virtual accounts and wallets, and nobody else's", async () => {
    const page = await browser.get('/dashboard/accounts');
    expect(page.statusCode).toBe(200);
    for (const text of ['Main EUR', eur.iban as string, eur.bic as string, '1,000.00 EUR', 'Sterling', gbp.sort_code as string, 'Closed', 'Collections', collections.iban, 'Treasury', wallet.deposit_address]) {
      expect(page.body).toContain(text);
    }
    for (const text of ['Bob EUR', bobsEur.iban as string, bobsVirtual.iban, 'Bob wallet']) expect(page.body).not.toContain(text);
    expect(page.body).toContain(`href="/dashboard/accounts/fiat/${eur.id}"`);
    expect(page.body).toContain(`href="/dashboard/accounts/virtual/${collections.id}"`);
    expect(page.body).toContain(`href="/dashboard/accounts/wallets/${wallet.local_id}"`);
  });

  it('shows an account with its details and, in the sandbox, a labelled deposit form carrying the form token', async () => {
    const page = await browser.get(`/dashboard/accounts/fiat/${eur.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(eur.iban as string);
    expect(page.body).toContain(`action="/dashboard/accounts/${eur.id}/deposits"`);
    for (const field of ['amount', 'reference', 'counterparty_name']) expect(page.body).toMatch(new RegExp(`<label for="([a-z-]+)">[\\s\\S]*?<input id="\\1" name="${field}"`));
    expect(page.body).toContain(`href="/dashboard/transactions?account_id=${eur.id}"`);

    const closedPage = await browser.get(`/dashboard/accounts/fiat/${closed.id}`);
    expect(closedPage.body).toContain('A closed account receives nothing.');
    expect(closedPage.body).not.toContain(`action="/dashboard/accounts/${closed.id}/deposits"`);
  });

  it('deposits through the dashboard: the balance of GET /fiat-accounts rises by the amount, and the account page says so', async () => {
    const before = await fiatBalance(t, alice, eur.id);
    await browser.get(`/dashboard/accounts/fiat/${eur.id}`);
    const response = await browser.post(`/dashboard/accounts/${eur.id}/deposits`, { amount: '250.75', reference: 'Top-up 7', counterparty_name: 'Ada Lovelace' });
    expect(response.statusCode, response.body).toBe(303);
    const location = String(response.headers.location);
    expect(location).toBe(`/dashboard/accounts/fiat/${eur.id}`);
    expect(await fiatBalance(t, alice, eur.id)).toBe(before + 250.75);

    const record = (await t.request({ url: `/transactions?account_id=${eur.id}`, key: alice.key })).json().data[0];
    expect(record).toMatchObject({ transaction_type: 'deposit', amount: 250.75, reference: 'Top-up 7', counterparty_name: 'Ada Lovelace', status: 'completed' });

    const shown = await browser.get(location);
    expect(shown.statusCode).toBe(200);
    expect(before).toBe(1000);
    expect(shown.body).toContain('Deposit of 250.75 EUR received; the balance is now 1,250.75 EUR.');
    expect(shown.body).toContain('1,250.75 EUR');
    // A reload shows the account without the notice and deposits nothing more.
    const count = (await t.request({ url: `/transactions?account_id=${eur.id}`, key: alice.key })).json().meta.pagination.total;
    const reloaded = await browser.get(location);
    expect(reloaded.body).not.toContain('Deposit of 250.75 EUR received');
    expect(await fiatBalance(t, alice, eur.id)).toBe(before + 250.75);
    expect((await t.request({ url: `/transactions?account_id=${eur.id}`, key: alice.key })).json().meta.pagination.total).toBe(count);
  });

  it('deposits into a virtual account by its id, crediting it and its master', async () => {
    const masterBefore = await fiatBalance(t, alice, eur.id);
    const page = await browser.get(`/dashboard/accounts/virtual/${collections.id}`);
    expect(page.body).toContain(collections.iban);
    expect(page.body).toContain(`href="/dashboard/accounts/fiat/${eur.id}"`);
    const response = await browser.post(`/dashboard/accounts/${collections.id}/deposits`, { amount: '40' });
    expect(response.statusCode, response.body).toBe(303);
    expect(String(response.headers.location)).toBe(`/dashboard/accounts/virtual/${collections.id}`);
    expect(await virtualBalance(t, alice, collections.id)).toBe(40);
    expect(await fiatBalance(t, alice, eur.id)).toBe(masterBefore + 40);
  });

  it("shows a refused deposit again with the API's reasons (400 not valid, 422 closed account), and moves nothing", async () => {
    const before = await moneySnapshot(t, alice.id);
    await browser.get(`/dashboard/accounts/fiat/${eur.id}`);
    const cases: Array<[fields: Record<string, string>, reason: string]> = [
      [{ amount: '' }, '<a href="#deposit-amount">Amount in EUR: is required</a>'],
      [{ amount: 'lots' }, 'Amount in EUR: must be number'],
      [{ amount: '-5' }, 'Amount in EUR: must be &gt; 0'],
      [{ amount: '1.234' }, 'Amount in EUR:'],
      [{ amount: '10', reference: 'x'.repeat(201) }, '<a href="#deposit-reference">Reference: must NOT have more than 200 characters</a>'],
    ];
    for (const [fields, reason] of cases) {
      const response = await browser.post(`/dashboard/accounts/${eur.id}/deposits`, fields);
      expect(response.statusCode, JSON.stringify(fields)).toBe(400);
      expect(response.body).toContain('class="problems"');
      expect(response.body).toContain(reason);
      // The form keeps what was typed, and the field says what is wrong with it.
      expect(response.body).toContain(`value="${fields.amount}"`);
      expect(response.body).toMatch(/aria-invalid="true" aria-describedby="deposit-(amount|reference)-problem"/);
    }
    const refused = await browser.post(`/dashboard/accounts/${closed.id}/deposits`, { amount: '10' });
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('class="problems"');
    expect(refused.body).toMatch(/closed/);
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
  });

  it("shows a wallet's balances and addresses, and a dashboard deposit shows in the wallet's balance", async () => {
    const page = await browser.get(`/dashboard/accounts/wallets/${wallet.local_id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(wallet.deposit_address);
    expect(page.body).toContain('<option value="USDC/ETH">USDC on ETH</option>');
    expect(page.body).toMatch(/<label for="wallet-deposit-amount">/);

    const response = await browser.post(`/dashboard/accounts/wallets/${wallet.local_id}/deposits`, { pair: 'USDC/ETH', amount: '12.5' });
    expect(response.statusCode, response.body).toBe(303);
    const location = String(response.headers.location);
    expect(location).toBe(`/dashboard/accounts/wallets/${wallet.local_id}`);
    const balances = await walletBalances(t, alice, wallet.local_id);
    expect(balances).toEqual([{ asset: 'USDC', balance: '12.500000', available: '12.500000' }]);

    const shown = await browser.get(location);
    expect(shown.body).toContain('Deposit of 12.50 USDC on ETH received.');
    expect(shown.body).toContain('+12.50 USDC');
    expect(shown.body).toContain('Deposit in');
  });

  it('refuses a wallet deposit the API refuses: no address of the pair (422), an amount not valid (400)', async () => {
    await browser.get(`/dashboard/accounts/wallets/${wallet.local_id}`);
    const noAddress = await browser.post(`/dashboard/accounts/wallets/${wallet.local_id}/deposits`, { pair: 'BTC/BTC', amount: '1' });
    expect(noAddress.statusCode).toBe(422);
    expect(noAddress.body).toContain('The wallet has no BTC address on BTC');
    const badAmount = await browser.post(`/dashboard/accounts/wallets/${wallet.local_id}/deposits`, { pair: 'USDC/ETH', amount: '1e3' });
    expect(badAmount.statusCode).toBe(400);
    expect(badAmount.body).toContain('<a href="#wallet-deposit-amount">Amount:');
    const noPair = await browser.post(`/dashboard/accounts/wallets/${wallet.local_id}/deposits`, { amount: '1' });
    expect(noPair.statusCode).toBe(400);
    expect(noPair.body).toContain('<a href="#wallet-deposit-pair">Asset and network: is required</a>');
    expect(await walletBalances(t, alice, wallet.local_id)).toEqual([{ asset: 'USDC', balance: '12.500000', available: '12.500000' }]);
  });

  it('refuses every deposit form without a valid form token (403), and moves nothing', async () => {
    const before = await moneySnapshot(t, alice.id);
    const walletBefore = await walletBalances(t, alice, wallet.local_id);
    for (const url of [`/dashboard/accounts/${eur.id}/deposits`, `/dashboard/accounts/wallets/${wallet.local_id}/deposits`]) {
      for (const token of [undefined, 'f'.repeat(64)]) {
        await browser.get('/dashboard/accounts');
        const fields: Record<string, string> = { amount: '5', pair: 'USDC/ETH', _csrf: token ?? '' };
        const response = await browser.post(url, fields);
        expect(response.statusCode, url).toBe(403);
      }
    }
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
    expect(await walletBalances(t, alice, wallet.local_id)).toEqual(walletBefore);
  });

  it("answers another customer's ids like unknown ones (404 page) on every route with an id, and moves nothing of theirs", async () => {
    await deposit(t, bob, bobsEur.id, 1);
    const bobsBefore = await moneySnapshot(t, bob.id);
    const gets = [
      `/dashboard/accounts/fiat/${bobsEur.id}`,
      `/dashboard/accounts/fiat/${collections.id}`,
      `/dashboard/accounts/fiat/${unknownId}`,
      `/dashboard/accounts/virtual/${bobsVirtual.id}`,
      `/dashboard/accounts/virtual/${eur.id}`,
      `/dashboard/accounts/virtual/${unknownId}`,
      `/dashboard/accounts/wallets/${bobsWallet.local_id}`,
      `/dashboard/accounts/wallets/${unknownId}`,
      '/dashboard/accounts/wallets/not-a-wallet',
    ];
    for (const url of gets) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain('Not found');
    }
    for (const url of [`/dashboard/accounts/${bobsEur.id}/deposits`, `/dashboard/accounts/${bobsVirtual.id}/deposits`, `/dashboard/accounts/${unknownId}/deposits`]) {
      await browser.get('/dashboard/accounts');
      expect((await browser.post(url, { amount: '5' })).statusCode, url).toBe(404);
    }
    for (const walletId of [bobsWallet.local_id, unknownId]) {
      await browser.get('/dashboard/accounts');
      expect((await browser.post(`/dashboard/accounts/wallets/${walletId}/deposits`, { pair: 'USDC/ETH', amount: '5' })).statusCode).toBe(404);
    }
    expect(await moneySnapshot(t, bob.id)).toEqual(bobsBefore);
    expect(await walletBalances(t, bob, bobsWallet.local_id)).toEqual([{ asset: 'USDC', balance: '0.000000', available: '0.000000' }]);
  });

  it('starts a new account in EUR, the home currency, and a virtual account on a EUR master in its currency', async () => {
    const carol = await t.createCustomer('Carol SARL');
    const carolsBrowser = await signedInBrowser(t, carol.id);
    const currencyChoices = (html: string, id: string) => html.split(`<select id="${id}" name="currency">`)[1]!.split('</select>')[0]!.replace(/\s+/g, '');
    expect(currencyChoices((await carolsBrowser.get('/dashboard/accounts')).body, 'fiat-currency')).toBe('<option>USD</option><optionselected>EUR</option><option>GBP</option>');

    // The GBP master listed first (oldest first), yet the form starts on the EUR master.
    const carolsGbp = await createFiatAccount(t, carol, { accountName: 'Carol GBP', currency: 'GBP', ibanCountry: 'GB' });
    t.clock.advance(1000);
    const carolsEur = await createFiatAccount(t, carol, { accountName: 'Carol EUR', currency: 'EUR' });
    const page = (await carolsBrowser.get('/dashboard/accounts')).body;
    expect(page.indexOf(`<option value="${carolsGbp.id}"`)).toBeLessThan(page.indexOf(`<option value="${carolsEur.id}"`));
    expect(page).toContain(`<option value="${carolsEur.id}" selected>Carol EUR (EUR)</option>`);
    expect(currencyChoices(page, 'virtual-currency')).toBe('<option>USD</option><optionselected>EUR</option><option>GBP</option>');

    // Without a EUR master, the first master and its currency: the pair the API accepts.
    const dave = await t.createCustomer('Dave Ltd');
    const davesGbp = await createFiatAccount(t, dave, { accountName: 'Dave GBP', currency: 'GBP', ibanCountry: 'GB' });
    const davesPage = (await (await signedInBrowser(t, dave.id)).get('/dashboard/accounts')).body;
    expect(davesPage).toContain(`<option value="${davesGbp.id}" selected>Dave GBP (GBP)</option>`);
    expect(currencyChoices(davesPage, 'virtual-currency')).toBe('<option>USD</option><option>EUR</option><optionselected>GBP</option>');
    expect(currencyChoices(davesPage, 'fiat-currency')).toBe('<option>USD</option><optionselected>EUR</option><option>GBP</option>');
  });

  it('refuses a wallet page address asking for a page that is not valid (400 page)', async () => {
    const response = await browser.get(`/dashboard/accounts/wallets/${wallet.local_id}?page=0`);
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain('Page: must be &gt;= 1');
  });

  it('sends a signed-out browser to sign-in from every page and form of the section', async () => {
    const requests: Array<{ method: 'GET' | 'POST'; url: string }> = [
      { method: 'GET', url: '/dashboard/accounts' },
      { method: 'GET', url: `/dashboard/accounts/fiat/${eur.id}` },
      { method: 'GET', url: `/dashboard/accounts/virtual/${collections.id}` },
      { method: 'GET', url: `/dashboard/accounts/wallets/${wallet.local_id}` },
      { method: 'POST', url: `/dashboard/accounts/${eur.id}/deposits` },
      { method: 'POST', url: `/dashboard/accounts/wallets/${wallet.local_id}/deposits` },
    ];
    for (const { method, url } of requests) {
      const response = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: 'amount=5', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location).toBe(method === 'GET' ? `/dashboard/sign-in?next=${encodeURIComponent(url)}` : '/dashboard/sign-in');
    }
  });
});

describe('dashboard accounts pages in production', () => {
  it('offer no deposit forms, and the deposit routes do not exist (404)', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer('Live Ltd');
      const account = await createFiatAccount(t, customer, { accountName: 'Live EUR', currency: 'EUR' });
      const wallet = await createWallet(t, customer, 'Live wallet');
      const browser = await signedInBrowser(t, customer.id);
      const list = await browser.get('/dashboard/accounts');
      expect(list.statusCode).toBe(200);
      expect(list.body).toContain(account.iban as string);
      expect(list.body).not.toContain('sandbox');
      for (const url of [`/dashboard/accounts/fiat/${account.id}`, `/dashboard/accounts/wallets/${wallet.local_id}`]) {
        const page = await browser.get(url);
        expect(page.statusCode).toBe(200);
        expect(page.body).not.toContain('/deposits"');
        // The wallet's own transfer form (an API operation) stays; no simulation is offered.
        expect(page.body).not.toContain('(sandbox)');
      }
      for (const [url, fields] of [
        [`/dashboard/accounts/${account.id}/deposits`, { amount: '5' }],
        [`/dashboard/accounts/wallets/${wallet.local_id}/deposits`, { pair: 'USDC/ETH', amount: '5' }],
      ] as const) {
        await browser.get('/dashboard/accounts');
        expect((await browser.post(url, fields)).statusCode, url).toBe(404);
      }
      expect((await t.request({ url: '/fiat-accounts', key: customer.key })).json().data[0].balance).toBe(0);
    } finally {
      await t.close();
    }
  });
});
