import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestClock } from '../helpers/clock.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createBusiness, createFiatAccount } from '../helpers/fixtures.js';
import { createPayee, deposit, pay, settle } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** The text of each body row of the page's first table, cells joined by " | " (tags dropped). */
function rowTexts(html: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...row[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((cell) => cell[1]!.replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim()).join(' | '),
  );
}

const minus = '\u2212';

describe('dashboard: amounts, times, names and codes as a person reads them', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let browser: DashboardBrowser;
  let gbp: Awaited<ReturnType<typeof createFiatAccount>>;
  const startedAt = '2026-11-26T19:24:07.123Z';
  let payee: { id: string; payee_name: string };
  let paymentTransactionId: string;

  beforeAll(async () => {
    t = await createTestApp({ clock: new TestClock(startedAt), env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    gbp = await createFiatAccount(t, alice, { accountName: 'Operating GBP', currency: 'GBP', ibanCountry: 'GB' });
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  it('writes fiat amounts to two decimals with thousands separators, right-aligned, signed + in and − out', async () => {
    await deposit(t, alice, gbp.id, 1234567.8, { reference: 'Big in' });
    payee = await createPayee(t, alice, 'GBP');
    const payment = await pay(t, alice, { fromAccountId: gbp.id, payeeId: payee.id, amount: 40, currency: 'GBP', reference: 'Small out' });

    const accounts = await browser.get('/dashboard/accounts');
    expect(accounts.body).toContain('<td data-label="Balance" class="num">1,234,527.60 GBP</td>');

    const list = await browser.get('/dashboard/transactions');
    const [paid, deposited] = rowTexts(list.body);
    expect(paid).toContain(`| ${minus}40.00 GBP |`);
    expect(deposited).toContain('| +1,234,567.80 GBP |');
    expect(list.body).toContain(`<td data-label="Amount" class="num money-outgoing">${minus}40.00 GBP</td>`);
    expect(list.body).toContain('<td data-label="Amount" class="num money-incoming">+1,234,567.80 GBP</td>');
    expect(list.body).toContain('<td data-label="Balance after" class="num">1,234,527.60 GBP</td>');

    paymentTransactionId = (await t.request({ url: `/payments/${payment.id}`, key: alice.key })).json().data.transactionId as string;
    // A returned payment is a code in the API (payment_return) and words on the page.
    await settle(t, alice, payment.id, 'failed');
    const returned = rowTexts((await browser.get('/dashboard/transactions')).body)[0]!;
    expect(returned).toMatch(/^[^|]+\| Payment returned \| Operating GBP \(GBP\) \| \+40\.20 GBP \|/);
  });

  it('writes crypto amounts to their significant decimals, at least two', async () => {
    const wallet = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true, body: { displayName: 'Treasury' } })).json().data as { local_id: string };
    for (const amount of ['2500', '0.015']) {
      const response = await t.request({ method: 'POST', url: `/sandbox/wallets/${wallet.local_id}/deposits`, key: alice.key, csrf: true, body: { asset: 'USDC', network: 'ETH', amount } });
      expect(response.statusCode, response.body).toBe(201);
    }
    const page = await browser.get(`/dashboard/accounts/wallets/${wallet.local_id}`);
    expect(page.body).toContain('<td data-label="Balance" class="num">2,500.015 USDC</td>');
    expect(page.body).toContain('>+2,500.00 USDC</td>');
    expect(page.body).toContain('>+0.015 USDC</td>');
    expect(page.body).not.toContain('2500.000000');
  });

  it('writes times as a <time> with the exact UTC instant, readable in UTC without JavaScript', async () => {
    const page = await browser.get(`/dashboard/accounts/fiat/${gbp.id}`);
    expect(page.body).toContain(`<dt>Opened</dt><dd><time datetime="${startedAt}" title="2026-11-26 19:24:07.123 UTC">26 Nov 2026, 19:24 UTC</time></dd>`);
    const script = await t.app.inject({ url: '/assets/pages.js' });
    expect(script.body).toContain("querySelectorAll('time[datetime]')");
  });

  it('names accounts and end users, links them, and offers their ids to copy', async () => {
    const list = await browser.get('/dashboard/transactions');
    const detailPath = /<a href="(\/dashboard\/transactions\/[0-9a-f-]{36})">/.exec(list.body)![1]!;
    const detail = await browser.get(detailPath);
    expect(detail.body).toContain(`<a href="/dashboard/accounts/fiat/${gbp.id}">Operating GBP (GBP)</a>`);
    expect(detail.body).toContain(`<code>${gbp.id}</code><button type="button" class="copy" data-copy-text="${gbp.id}" hidden>`);
    expect(list.body).toContain(`<a href="/dashboard/accounts/fiat/${gbp.id}">Operating GBP (GBP)</a>`);
    const paid = await browser.get(`/dashboard/transactions/${paymentTransactionId}`);
    expect(paid.body).toContain(`<dt>To payee</dt><dd>${payee.payee_name} <span class="copy-id"><code>${payee.id}</code>`);

    const business = await createBusiness(t, alice, {}, { companyName: 'Wordy Ltd' });
    const endUser = await browser.get(`/dashboard/end-users/${business.id}`);
    expect(endUser.body).toContain('<dt>Business type</dt><dd>Limited company</dd>');
    expect(endUser.body).toContain('<dt>Risk tier</dt><dd>Low risk</dd>');
    expect(endUser.body).toContain(`data-copy-text="${business.id}"`);
  });

  it('writes the OTC quote, orders and order in the same way: amounts, times in a <time>, statuses in words', async () => {
    const eur = await createFiatAccount(t, alice, { accountName: 'Treasury EUR', currency: 'EUR' });
    await deposit(t, alice, eur.id, 5000);
    const walletId = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true, body: { displayName: 'Exchange' } })).json().data.local_id as string;
    const exchange = await browser.get('/dashboard/otc');
    expect(exchange.body).toContain('>Treasury EUR (5,000.00 EUR available)</option>');

    const quoted = await browser.post('/dashboard/otc/quotes', { source_account_id: eur.id, wallet_id: walletId, amount_eur: '2500' });
    expect(quoted.statusCode, quoted.body).toBe(303);
    const quotePath = String(quoted.headers.location);
    const quote = (await browser.get(quotePath)).body;
    // 2,500 EUR at the sandbox's rate of that instant (the clock stands still): 2695.130275 USDC in the API.
    expect(quote).toContain('<h1>Quote: 2,500.00 EUR into 2,695.130275 USDC</h1>');
    expect(quote).toContain('<dt>You pay</dt><dd class="num">2,500.00 EUR</dd>');
    expect(quote).toContain('<dt>You receive</dt><dd class="num">2,695.130275 USDC</dd>');
    const expires = '<time datetime="2026-11-26T19:24:37.123Z" title="2026-11-26 19:24:37.123 UTC">26 Nov 2026, 19:24 UTC</time>';
    expect(quote).toContain(`<dt>Expires</dt><dd>${expires}</dd>`);
    expect(quote).toContain(`<strong>30 seconds left</strong> to confirm it (until ${expires})`);
    expect(quote).not.toContain('2500.00 EUR');
    expect(quote).not.toContain('2695.130275');

    const orderPath = String((await browser.post(`${quotePath}/confirm`)).headers.location);
    expect((await browser.post(`${orderPath}/settle`, { outcome: 'completed' })).statusCode).toBe(303);
    const order = (await browser.get(orderPath)).body;
    const at = `<time datetime="${startedAt}" title="2026-11-26 19:24:07.123 UTC">26 Nov 2026, 19:24 UTC</time>`;
    expect(order).toContain('<h1>OTC order: 2,500.00 EUR into 2,695.130275 USDC</h1>');
    expect(order).toContain('<dt>Status</dt><dd>Settled</dd>');
    expect(order).toMatch(/<dt>Paid from<\/dt><dd class="num"><a [^>]+>2,500\.00 EUR<\/a><\/dd>/);
    expect(order).toMatch(/<dt>Received into<\/dt><dd class="num"><a [^>]+>2,695\.130275 USDC<\/a><\/dd>/);
    for (const step of ['Created', 'Debited', 'Settled']) expect(order).toContain(`<dt>${step}</dt><dd>${at}</dd>`);

    const [listed] = rowTexts((await browser.get('/dashboard/otc')).body);
    expect(listed).toBe('26 Nov 2026, 19:24 UTC: OTC order details | 2,500.00 EUR | 2,695.130275 USDC | 1.07805211 USDC per EUR | Settled');
    expect(browser.lastPage).toContain(`<td data-label="Paid" class="num">2,500.00 EUR</td>`);
  });

  it('writes the payee, the status choices and the overview in the same way', async () => {
    const shownPayee = (await browser.get(`/dashboard/payees/${payee.id}`)).body;
    expect(shownPayee).toContain('<dt>Status</dt><dd>Active</dd>');
    expect(shownPayee).toContain(`<dt>Created</dt><dd><time datetime="${startedAt}" title="2026-11-26 19:24:07.123 UTC">26 Nov 2026, 19:24 UTC</time></dd>`);
    expect(shownPayee).toContain('<option value="inactive">Inactive</option>');
    // The accounts that can pay it, with their balances as everywhere else.
    expect(shownPayee).toContain('>Operating GBP (1,234,567.80 GBP)</option>');
    expect((await browser.get(`/dashboard/accounts/fiat/${gbp.id}`)).body).toContain('<option value="frozen">Frozen</option>');

    const overview = (await browser.get('/dashboard')).body;
    // Wallet deposits of 2,500.015 USDC and the OTC order's 2,695.130275 USDC; the GBP payment came back with its fee.
    expect(overview).toContain('<td data-label="Total balance" class="num">1,234,567.80 GBP</td>');
    expect(overview).toContain('<td data-label="Total balance" class="num">2,500.00 EUR</td>');
    expect(overview).toContain('<td data-label="Total balance" class="num">5,195.145275 USDC</td>');
    const recent = /<h2>Recent activity<\/h2>([\s\S]*?)<\/table>/.exec(overview)![1]!;
    expect(rowTexts(recent)[0]).toBe(`26 Nov 2026, 19:24 UTC: OTC exchange details | OTC exchange | ${minus}2,500.00 EUR | Out | Completed`);
    expect(recent).toContain(`<td data-label="Amount" class="num money-outgoing">${minus}2,500.00 EUR</td>`);
  });
});
