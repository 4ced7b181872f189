import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxProviders } from '../../src/providers/providers.js';
import { signedInBrowser } from '../helpers/dashboard.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createVirtualAccount, deposit, moneySnapshot } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

type Listed = Array<{ [field: string]: unknown }>;

async function listed(t: TestApp, customer: TestCustomer, path: string): Promise<Listed> {
  const response = await t.request({ url: path, key: customer.key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as Listed;
}

/** Everything sample data makes, counted through the API. */
async function counts(t: TestApp, customer: TestCustomer) {
  const paths = ['/end-users', '/fiat-accounts', '/virtual-accounts', '/wallets', '/payees', '/payments', '/otc-exchanges/orders', '/transactions'];
  return Object.fromEntries(await Promise.all(paths.map(async (path) => [path, (await listed(t, customer, path)).length] as const)));
}

describe('dashboard overview and sample data (sandbox)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
  });
  afterAll(async () => t.close());

  it('offers sample data in an empty sandbox; it makes the whole flow through the services, once, and a reload or a second click adds nothing', async () => {
    const customer = await t.createCustomer('Sample Ltd');
    const browser = await signedInBrowser(t, customer.id);
    const empty = await browser.get('/dashboard');
    expect(empty.body).toContain('action="/dashboard/sample-data"');
    expect(empty.body).toContain('No accounts or wallets yet.');

    const created = await browser.post('/dashboard/sample-data');
    expect(created.statusCode, created.body).toBe(303);
    expect(created.headers.location).toBe('/dashboard?sample=created');

    const endUsers = await listed(t, customer, '/end-users');
    expect(endUsers).toEqual([expect.objectContaining({ end_user_type: 'BUSINESS', company_name: 'Sample Logistics GmbH' })]);
    const accounts = await listed(t, customer, '/fiat-accounts');
    expect(accounts.map((account) => [account.currency, account.balance]).sort()).toEqual([
      // 25,000 in, 1,250 paid plus its fee pending, 1,000 reserved by the OTC order.
      ['EUR', expect.any(Number)],
      ['GBP', 8000],
    ]);
    expect(accounts.find((account) => account.currency === 'EUR')!.balance).toBeLessThan(25000 - 2250 + 0.01);
    expect(await listed(t, customer, '/payees')).toHaveLength(1);
    expect(await listed(t, customer, '/payments')).toEqual([expect.objectContaining({ amount: '1250.00', status: 'pending' })]);
    const [wallet] = await listed(t, customer, '/wallets');
    const balances = (await t.request({ url: `/wallets/${String(wallet!.local_id)}`, key: customer.key })).json().data.balances;
    expect(balances).toEqual([{ asset: 'USDC', balance: '500.000000', available: '500.000000' }]);
    expect(await listed(t, customer, '/otc-exchanges/orders')).toEqual([expect.objectContaining({ sourceAmountEur: '1000.00', status: 'debit_pending' })]);

    const before = await counts(t, customer);
    const money = await moneySnapshot(t, customer.id);
    for (let reload = 0; reload < 2; reload++) {
      const page = await browser.get('/dashboard?sample=created');
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Sample data created');
      expect(page.body).not.toContain('action="/dashboard/sample-data"');
    }
    // The second click of a double click (its form is still on the screen): refused, nothing made.
    const again = await browser.post('/dashboard/sample-data');
    expect(again.statusCode).toBe(409);
    expect(again.body).toContain('holds data already');
    expect(await counts(t, customer)).toEqual(before);
    expect(await moneySnapshot(t, customer.id)).toEqual(money);
  });

  it('makes sample data once when two clicks arrive together', async () => {
    const customer = await t.createCustomer('Double Click Ltd');
    const browser = await signedInBrowser(t, customer.id);
    await browser.get('/dashboard');
    const answers = await Promise.all([browser.post('/dashboard/sample-data'), browser.post('/dashboard/sample-data')]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([303, 409]);
    expect(await listed(t, customer, '/end-users')).toHaveLength(1);
    expect(await listed(t, customer, '/fiat-accounts')).toHaveLength(2);
    expect(await listed(t, customer, '/otc-exchanges/orders')).toHaveLength(1);
  });

  it('refuses sample data where the customer has anything already (409), and shows no button there', async () => {
    const customer = await t.createCustomer('Busy Ltd');
    await createFiatAccount(t, customer, { accountName: 'Own', currency: 'EUR' });
    const browser = await signedInBrowser(t, customer.id);
    const page = await browser.get('/dashboard');
    expect(page.body).not.toContain('action="/dashboard/sample-data"');
    const refused = await browser.post('/dashboard/sample-data');
    expect(refused.statusCode).toBe(409);
    expect(await listed(t, customer, '/end-users')).toEqual([]);
    expect(await listed(t, customer, '/fiat-accounts')).toHaveLength(1);
  });

  it('shows the balances per currency exactly (virtual accounts inside their master), the last 10 transactions and the failing webhooks', async () => {
    const customer = await t.createCustomer('Overview Ltd');
    const eur = await createFiatAccount(t, customer, { accountName: 'EUR one', currency: 'EUR' });
    const eur2 = await createFiatAccount(t, customer, { accountName: 'EUR two', currency: 'EUR' });
    const virtual = await createVirtualAccount(t, customer, eur.id);
    await deposit(t, customer, eur.id, 0.1);
    await deposit(t, customer, eur2.id, 0.2);
    await deposit(t, customer, virtual.id, 100.05);
    for (let index = 0; index < 10; index++) await deposit(t, customer, eur2.id, 1, { reference: `Top-up ${index}` });
    const csrf = await t.csrfToken(customer.key);
    const hook = (await t.request({ method: 'POST', url: '/webhooks', key: customer.key, csrf, body: { url: 'https://receiver.example/hook', eventTypes: ['payment.created'] } })).json().data;
    await t.request({ method: 'PATCH', url: `/webhooks/${hook.id}`, key: customer.key, csrf, body: { isActive: false } });
    const healthy = (await t.request({ method: 'POST', url: '/webhooks', key: customer.key, csrf, body: { url: 'https://healthy.example/hook', eventTypes: ['payment.created'] } })).json().data;

    const browser = await signedInBrowser(t, customer.id);
    const page = await browser.get('/dashboard');
    expect(page.statusCode).toBe(200);
    // 0.1 + 0.2 + 100.05 + 10 exactly (a float sum would say 110.35000000000001).
    expect(page.body).toContain('<tr><td data-label="Currency">EUR</td><td data-label="Total balance" class="num">110.35 EUR</td></tr>');
    const recent = page.body.split('<h2>Recent activity</h2>')[1]!.split('</table>')[0]!;
    expect(recent.match(/href="\/dashboard\/transactions\/[0-9a-f-]{36}"/g)).toHaveLength(10);
    const failing = page.body.split('<h2>Failing webhooks</h2>')[1]!.split('<h2>')[0]!;
    expect(failing).toContain(`href="/dashboard/webhooks/${String(hook.id)}"`);
    expect(failing).toContain('Disabled');
    expect(failing).not.toContain(String(healthy.id));
  });
});

describe('dashboard overview in production', () => {
  it('offers no sample data, and its route does not exist (404)', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer('Live Ltd');
      const browser = await signedInBrowser(t, customer.id);
      const page = await browser.get('/dashboard');
      expect(page.statusCode).toBe(200);
      expect(page.body).not.toContain('sample-data');
      expect((await browser.post('/dashboard/sample-data')).statusCode).toBe(404);
      expect(await listed(t, customer, '/end-users')).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
