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
});
