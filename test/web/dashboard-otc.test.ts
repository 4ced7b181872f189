import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxProviders } from '../../src/providers/providers.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { deposit, fiatBalance, moneySnapshot } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

type Order = { orderId: string; status: string; destinationAmount: string };

async function orders(t: TestApp, customer: TestCustomer): Promise<Order[]> {
  return (await t.request({ url: '/otc-exchanges/orders', key: customer.key })).json().data as Order[];
}

async function usdcBalance(t: TestApp, customer: TestCustomer, walletId: string): Promise<string | undefined> {
  const balances = (await t.request({ url: `/wallets/${walletId}`, key: customer.key })).json().data.balances as Array<{ asset: string; balance: string }>;
  return balances.find((balance) => balance.asset === 'USDC')?.balance;
}

describe('dashboard OTC exchange (sandbox)', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  let eur: { id: string };
  let walletId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    eur = await createFiatAccount(t, alice, { accountName: 'Treasury', currency: 'EUR' });
    await deposit(t, alice, eur.id, 1000);
    walletId = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true, body: { displayName: 'Crypto' } })).json().data.local_id;
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  /** Requests a quote through the page's form; returns the quote page's address (a reload of it changes nothing). */
  async function quote(amount: string): Promise<string> {
    const page = await browser.get('/dashboard/otc');
    expect(page.body).toContain(`<option value="${eur.id}"`);
    expect(page.body).toContain(`<option value="${walletId}"`);
    const response = await browser.post('/dashboard/otc/quotes', { source_account_id: eur.id, wallet_id: walletId, amount_eur: amount, destination_currency: 'usdc' });
    expect(response.statusCode, response.body).toBe(303);
    return String(response.headers.location);
  }

  it('quotes, shows the time left to confirm in words, confirms into an order within the TTL, and settles it (sandbox)', async () => {
    const quotePath = await quote('100.00');
    expect(quotePath).toMatch(/^\/dashboard\/otc\/quotes\/[0-9a-f-]{36}$/);
    const shown = await browser.get(quotePath);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('100.00 EUR');
    expect(shown.body).toContain('30 seconds left');
    t.clock.advance(12_000);
    const later = await browser.get(quotePath);
    expect(later.body).toContain('18 seconds left');
    expect(await orders(t, alice)).toEqual([]);

    const confirmed = await browser.post(`${quotePath}/confirm`);
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    const orderPath = String(confirmed.headers.location);
    expect(orderPath).toMatch(/^\/dashboard\/otc\/orders\/[0-9a-f-]{36}$/);
    const [order] = await orders(t, alice);
    expect(order).toMatchObject({ orderId: orderPath.split('/').pop(), status: 'debit_pending' });
    expect(await fiatBalance(t, alice, eur.id)).toBe(900);
    // Reloading the order page, or the quote's (now saying it is confirmed), makes nothing more.
    const money = await moneySnapshot(t, alice.id);
    for (const path of [orderPath, orderPath, quotePath]) expect((await browser.get(path)).statusCode).toBe(200);
    expect(browser.lastPage).toContain(`href="${orderPath}"`);
    expect(browser.lastPage).not.toContain('/confirm"');
    expect(await orders(t, alice)).toHaveLength(1);
    expect(await moneySnapshot(t, alice.id)).toEqual(money);

    // A second click on Confirm: the quote made its order already (422), nothing moves.
    await browser.get(orderPath);
    const again = await browser.post(`${quotePath}/confirm`);
    expect(again.statusCode).toBe(422);
    expect(again.body).toContain('confirmed already');
    expect(await orders(t, alice)).toHaveLength(1);

    const list = await browser.get('/dashboard/otc');
    expect(list.body).toContain(`href="${orderPath}"`);
    expect(list.body).toContain('<td data-label="Status">Debit pending</td>');

    await browser.get(orderPath);
    const settled = await browser.post(`${orderPath}/settle`, { outcome: 'completed' });
    expect(settled.statusCode, settled.body).toBe(303);
    expect(settled.headers.location).toBe(orderPath);
    expect((await orders(t, alice))[0]).toMatchObject({ status: 'settled' });
    expect(await usdcBalance(t, alice, walletId)).toBe(order!.destinationAmount);
    const settledPage = await browser.get(orderPath);
    expect(settledPage.body).toContain('<dt>Status</dt><dd>Settled</dd>');
    expect(settledPage.body).not.toContain('/settle"');
  });

  it('refuses to confirm a quote past its TTL (422) and offers a new one; nothing is reserved', async () => {
    const quotePath = await quote('50');
    t.clock.advance(30_000);
    const expired = await browser.get(quotePath);
    expect(expired.body).toContain('This quote has expired');
    expect(expired.body).not.toContain('/confirm"');
    const money = await moneySnapshot(t, alice.id);
    const refused = await browser.post(`${quotePath}/confirm`);
    expect(refused.statusCode).toBe(422);
    expect(refused.body).toContain('The quote has expired');
    expect(await moneySnapshot(t, alice.id)).toEqual(money);
  });

  it("shows a refused quote form with the API's reasons and what was typed; a failed settlement returns the EUR", async () => {
    await browser.get('/dashboard/otc');
    const tooSmall = await browser.post('/dashboard/otc/quotes', { source_account_id: eur.id, wallet_id: walletId, amount_eur: '5' });
    expect(tooSmall.statusCode).toBe(400);
    expect(tooSmall.body).toContain('class="problems"');
    expect(tooSmall.body).toContain('<a href="#otc-amount">Amount in EUR:');
    expect(tooSmall.body).toContain('value="5"');
    const notAmount = await browser.post('/dashboard/otc/quotes', { source_account_id: eur.id, wallet_id: walletId, amount_eur: '1,000' });
    expect(notAmount.statusCode).toBe(400);
    expect(notAmount.body).toContain('<a href="#otc-amount">Amount in EUR:');

    const quotePath = await quote('40');
    const before = await fiatBalance(t, alice, eur.id);
    const confirmed = await browser.post(`${quotePath}/confirm`);
    const orderPath = String(confirmed.headers.location);
    expect(await fiatBalance(t, alice, eur.id)).toBe(before - 40);
    await browser.get(orderPath);
    const failed = await browser.post(`${orderPath}/settle`, { outcome: 'failed' });
    expect(failed.statusCode).toBe(303);
    expect(await fiatBalance(t, alice, eur.id)).toBe(before);
    await browser.get(orderPath);
    expect((await browser.post(`${orderPath}/settle`, { outcome: 'sideways' })).statusCode).toBe(400);
  });

  it("answers another customer's quotes and orders like unknown ones (404 page)", async () => {
    const bobsEur = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    await deposit(t, bob, bobsEur.id, 100);
    const bobsWallet = (await t.request({ method: 'POST', url: '/wallets', key: bob.key, csrf: true, body: {} })).json().data.local_id as string;
    const csrf = await t.csrfToken(bob.key);
    const bobsQuote = (await t.request({ method: 'POST', url: '/otc-exchanges/quote', key: bob.key, csrf, body: { sourceFrAccountId: bobsEur.id, destinationProviderWalletId: bobsWallet, sourceAmountEur: '30' } })).json().data;
    const unknownId = '5b0e2c4d-6f7a-4b8c-9d0e-1f2a3b4c5d6e';
    for (const url of [`/dashboard/otc/quotes/${bobsQuote.quoteId}`, `/dashboard/otc/quotes/${unknownId}`, `/dashboard/otc/orders/${unknownId}`, '/dashboard/otc/orders/not-an-id']) {
      expect((await browser.get(url)).statusCode, url).toBe(404);
    }
    await browser.get('/dashboard/otc');
    expect((await browser.post(`/dashboard/otc/quotes/${bobsQuote.quoteId}/confirm`)).statusCode).toBe(404);
    // A quote from Bob's account into Alice's wallet: the account is not hers.
    expect((await browser.post('/dashboard/otc/quotes', { source_account_id: bobsEur.id, wallet_id: walletId, amount_eur: '30' })).statusCode).toBe(404);
    expect(await orders(t, bob)).toEqual([]);
  });
});

describe('dashboard OTC exchange in production', () => {
  it('quotes and confirms, with no settlement button, and the settle route does not exist (404)', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer('Live Ltd');
      const eur = await createFiatAccount(t, customer, { accountName: 'Live EUR', currency: 'EUR' });
      const walletId = (await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf: true, body: {} })).json().data.local_id as string;
      const browser = await signedInBrowser(t, customer.id);
      await browser.get('/dashboard/otc');
      const quoted = await browser.post('/dashboard/otc/quotes', { source_account_id: eur.id, wallet_id: walletId, amount_eur: '30' });
      expect(quoted.statusCode, quoted.body).toBe(303);
      const page = await browser.get(String(quoted.headers.location));
      expect(page.body).toContain('seconds left');
      const refused = await browser.post(`${String(quoted.headers.location)}/confirm`);
      // No money in the account: the API's refusal, shown on the page.
      expect(refused.statusCode).toBe(422);
      expect((await browser.post(`/dashboard/otc/orders/${'5b0e2c4d-6f7a-4b8c-9d0e-1f2a3b4c5d6e'}/settle`, { outcome: 'completed' })).statusCode).toBe(404);
    } finally {
      await t.close();
    }
  });
});
