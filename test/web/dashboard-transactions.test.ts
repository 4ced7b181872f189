import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxProviders } from '../../src/providers/providers.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createPayee, deposit, fiatBalance, moneySnapshot, pay } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '8c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
const minute = 60_000;

type Account = Awaited<ReturnType<typeof createFiatAccount>>;

/** The detail links of a transactions page, in order. */
function listedIds(html: string): string[] {
  return [...html.matchAll(/href="\/dashboard\/transactions\/([0-9a-f-]{36})"/g)].map((match) => match[1]!);
}

/** A link of the page by its text, as the browser would follow it. */
function linkTo(html: string, text: string): string | undefined {
  const match = new RegExp(`<a href="([^"]+)"[^>]*>${text}</a>`).exec(html);
  return match?.[1]!.replaceAll('&amp;', '&');
}

async function transactionIds(t: TestApp, customer: TestCustomer, query: string): Promise<string[]> {
  const response = await t.request({ url: `/transactions?${query}`, key: customer.key });
  expect(response.statusCode).toBe(200);
  return (response.json().data as Array<{ id: string }>).map((record) => record.id);
}

/** A payment as GET /payments/{id} shows it (with the id of its history record). */
/** A payment as GET /payments/{id} answers it: its ids typed, the rest read by the tests. */
type PaymentShown = { id: string; frPaymentId: string; transactionId: string; [field: string]: unknown };

async function paymentOf(t: TestApp, customer: TestCustomer, body: Record<string, unknown>): Promise<PaymentShown> {
  const created = await pay(t, customer, body);
  return (await t.request({ url: `/payments/${created.id}`, key: customer.key })).json().data;
}

async function newWallet(t: TestApp, customer: TestCustomer): Promise<string> {
  const response = await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf: true, body: {} });
  expect(response.statusCode).toBe(201);
  return response.json().data.local_id as string;
}

/** A funded wallet's pending transfer out (nothing settles by itself in these tests). */
async function pendingTransfer(t: TestApp, customer: TestCustomer, walletId: string, amount: string): Promise<{ local_id: string }> {
  const funded = await t.request({ method: 'POST', url: `/sandbox/wallets/${walletId}/deposits`, key: customer.key, csrf: true, body: { asset: 'USDC', network: 'ETH', amount } });
  expect(funded.statusCode).toBe(201);
  const destination = `0x${randomBytes(20).toString('hex')}`;
  const sent = await t.request({ method: 'POST', url: `/wallets/${walletId}/transfers`, key: customer.key, csrf: true, body: { asset: 'USDC', network: 'ETH', amount, destination } });
  expect(sent.statusCode, sent.body).toBe(201);
  return sent.json().data;
}

async function walletTransfer(t: TestApp, customer: TestCustomer, id: string) {
  const response = await t.request({ url: `/wallet-transfers/${id}`, key: customer.key });
  expect(response.statusCode).toBe(200);
  return response.json().data as { status: string; tx_hash: string | null };
}

async function liveBalance(t: TestApp, customer: TestCustomer, walletId: string) {
  return (await t.request({ url: `/otc-exchanges/wallets/${walletId}/balance`, key: customer.key })).json().data as { balance: string; available: string };
}

describe('dashboard transactions pages (sandbox)', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  let eur: Account;
  let savings: Account;
  let payee: { id: string };
  let bobsPayment: PaymentShown;
  let bobsWalletTransfer: { local_id: string };
  let startedAt: Date;
  let alices: Awaited<ReturnType<typeof history>>;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    startedAt = t.clock.now();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    eur = await createFiatAccount(t, alice, { accountName: 'Main EUR', currency: 'EUR' });
    savings = await createFiatAccount(t, alice, { accountName: 'Savings EUR', currency: 'EUR' });
    payee = await createPayee(t, alice, 'EUR');
    const bobsEur = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    await deposit(t, bob, bobsEur.id, 100);
    bobsPayment = await paymentOf(t, bob, { fromAccountId: bobsEur.id, payeeId: (await createPayee(t, bob, 'EUR')).id, amount: 5, currency: 'EUR', reference: 'Bob pays' });
    bobsWalletTransfer = await pendingTransfer(t, bob, await newWallet(t, bob), '3');
    alices = await history();
    // Signed in once the clock has moved on: the session's idle time counts from here.
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  /** Alice's history: three deposits an hour apart, then a payment to a payee (pending). */
  async function history() {
    const deposits = [];
    for (const amount of [100, 200, 300]) {
      deposits.push(await deposit(t, alice, amount === 300 ? savings.id : eur.id, amount, { reference: `Deposit ${amount}` }));
      t.clock.advance(60 * minute);
    }
    return { deposits, payment: await paymentOf(t, alice, { fromAccountId: eur.id, payeeId: payee.id, amount: 25, currency: 'EUR', reference: 'Invoice 77' }) };
  }

  it('lists the history newest first, with the filter form labelled and only the customer\'s own records', async () => {
    const page = await browser.get('/dashboard/transactions');
    expect(page.statusCode).toBe(200);
    expect(listedIds(page.body)).toEqual(await transactionIds(t, alice, 'limit=50'));
    expect(listedIds(page.body)).toHaveLength(4);
    for (const text of ['Invoice 77', 'Deposit 100', '+300.00 EUR', '\u221225.00 EUR', 'Main EUR (EUR)', 'Savings EUR (EUR)', 'Pending', 'Completed']) expect(page.body).toContain(text);
    expect(page.body).not.toContain('Bob pays');
    for (const field of ['account_id', 'status', 'direction', 'created_from', 'created_to']) {
      expect(page.body).toMatch(new RegExp(`<label for="([a-z-]+)">[^<]*(<span[^>]*>[^<]*</span>)?</label>\\s*<(select|input) id="\\1" name="${field}"`));
    }
    expect(page.body).toContain('<form method="get" action="/dashboard/transactions"');
  });

  it('filters as GET /transactions does: by account, status, direction and creation time', async () => {
    const filters = [
      `account_id=${savings.id}`,
      'status=pending',
      'direction=outgoing',
      'status=completed&direction=incoming',
      `created_from=${encodeURIComponent(new Date(startedAt.getTime() + 30 * minute).toISOString())}`,
    ];
    for (const query of filters) {
      const page = await browser.get(`/dashboard/transactions?${query}`);
      expect(page.statusCode, query).toBe(200);
      const expected = await transactionIds(t, alice, query);
      expect(listedIds(page.body), query).toEqual(expected);
      expect(expected.length, query).toBeLessThan(4);
    }
    expect(listedIds((await browser.get(`/dashboard/transactions?account_id=${savings.id}`)).body)).toEqual([alices.deposits[2]!.id]);
    expect(listedIds((await browser.get('/dashboard/transactions?status=pending')).body)).toEqual([alices.payment.transactionId]);

    // The datetime-local inputs send minutes without a zone: read as UTC.
    const from = new Date(startedAt.getTime() + 30 * minute).toISOString().slice(0, 16);
    const to = new Date(startedAt.getTime() + 150 * minute).toISOString().slice(0, 16);
    const window = await browser.get(`/dashboard/transactions?created_from=${from}&created_to=${to}`);
    expect(window.statusCode).toBe(200);
    expect(listedIds(window.body)).toEqual([alices.deposits[2]!.id, alices.deposits[1]!.id]);
    expect(window.body).toContain(`value="${from}"`);

    const selected = await browser.get(`/dashboard/transactions?account_id=${eur.id}&status=completed`);
    expect(selected.body).toContain(`<option value="${eur.id}" selected>`);
    expect(selected.body).toContain('<option value="completed" selected>');
  });

  it('pages through the history with links that keep the filters', async () => {
    const first = await browser.get(`/dashboard/transactions?account_id=${eur.id}&limit=2`);
    expect(first.body).toContain('Page 1 of 2 (3 in all)');
    expect(listedIds(first.body)).toHaveLength(2);
    expect(linkTo(first.body, 'Previous page')).toBeUndefined();
    const next = linkTo(first.body, 'Next page')!;
    expect(next).toBe(`/dashboard/transactions?account_id=${eur.id}&limit=2&page=2`);
    const second = await browser.get(next);
    expect(second.body).toContain('Page 2 of 2 (3 in all)');
    expect(listedIds(second.body)).toEqual([alices.deposits[0]!.id]);
    expect(linkTo(second.body, 'Next page')).toBeUndefined();
    expect(linkTo(second.body, 'Previous page')).toBe(`/dashboard/transactions?account_id=${eur.id}&limit=2&page=1`);
    // The form keeps the page size when the filters change.
    expect(second.body).toContain('<input type="hidden" name="limit" value="2">');

    const unfiltered = await browser.get('/dashboard/transactions?limit=3&page=2');
    expect(listedIds(unfiltered.body)).toEqual(await transactionIds(t, alice, 'limit=3&page=2'));
  });

  it('answers filters GET /transactions refuses with a 400 page naming the problem, the form still there', async () => {
    const cases: Array<[query: string, problem: string]> = [
      ['status=settled', 'Status: must be one of pending, completed, failed'],
      ['direction=sideways', 'Direction: must be one of incoming, outgoing'],
      ['account_id=not-an-id', 'Account:'],
      ['created_from=yesterday', 'Created from: must be an RFC 3339 date-time'],
      ['page=0', 'Page: must be &gt;= 1'],
      ['page=two', 'Page: must be integer'],
      ['limit=0', 'Limit: must be &gt;= 1'],
    ];
    for (const [query, problem] of cases) {
      const page = await browser.get(`/dashboard/transactions?${query}`);
      expect(page.statusCode, query).toBe(400);
      expect(page.body, query).toContain('class="problems"');
      expect(page.body, query).toContain(problem);
      expect(page.body).toContain('<form method="get" action="/dashboard/transactions"');
      expect(listedIds(page.body)).toEqual([]);
    }
  });

  it('shows a payment\'s record with its payment and, while pending, settle buttons', async () => {
    const page = await browser.get(`/dashboard/transactions/${alices.payment.transactionId}`);
    expect(page.statusCode).toBe(200);
    for (const text of ['Invoice 77', alices.payment.frPaymentId, '25.00 EUR', 'SEPA', payee.id]) expect(page.body).toContain(text);
    expect(page.body).toContain(`action="/dashboard/payments/${alices.payment.id}/settle"`);
    expect(page.body).toContain('Settle as completed');
    expect(page.body).toContain('Settle as failed');

    const depositPage = await browser.get(`/dashboard/transactions/${alices.deposits[0]!.id}`);
    expect(depositPage.statusCode).toBe(200);
    expect(depositPage.body).toContain('Deposit 100');
    expect(depositPage.body).not.toContain('/settle"');
  });

  it('settles a payment as completed through the dashboard: the JSON API shows it completed, and the buttons are gone', async () => {
    const payment = await paymentOf(t, alice, { fromAccountId: eur.id, toAccountId: savings.id, amount: 10, currency: 'EUR', reference: 'Sweep 1' });
    const savingsBefore = await fiatBalance(t, alice, savings.id);
    await browser.get(`/dashboard/transactions/${payment.transactionId}`);
    const response = await browser.post(`/dashboard/payments/${payment.id}/settle`, { outcome: 'completed' });
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe(`/dashboard/transactions/${payment.transactionId}`);
    const shown = (await t.request({ url: `/payments/${payment.id}`, key: alice.key })).json().data;
    expect(shown.status).toBe('completed');
    expect(await fiatBalance(t, alice, savings.id)).toBe(savingsBefore + 10);

    const page = await browser.get(String(response.headers.location));
    expect(page.body).not.toContain('/settle"');
    expect(page.body).toContain('<p class="notice" role="status">Payment settled: completed.</p>');
    // A reload shows the page again, without the notice, and moves nothing.
    const reloaded = await browser.get(String(response.headers.location));
    expect(reloaded.body).not.toContain('Payment settled');
    expect(await fiatBalance(t, alice, savings.id)).toBe(savingsBefore + 10);
    // Settling twice is refused with the API's reason, on the same page.
    const again = await browser.post(`/dashboard/payments/${payment.id}/settle`, { outcome: 'failed' });
    expect(again.statusCode).toBe(422);
    expect(again.body).toContain('A completed payment cannot become failed.');
    expect((await t.request({ url: `/payments/${payment.id}`, key: alice.key })).json().data.status).toBe('completed');
  });

  it('settles a payment as failed through the dashboard: amount and fee go back to the account', async () => {
    const before = await fiatBalance(t, alice, eur.id);
    const payment = await paymentOf(t, alice, { fromAccountId: eur.id, payeeId: payee.id, amount: 7.5, currency: 'EUR', reference: 'Invoice 78' });
    expect(await fiatBalance(t, alice, eur.id)).toBeLessThan(before - 7.5 + 0.001);
    await browser.get(`/dashboard/transactions/${payment.transactionId}`);
    const response = await browser.post(`/dashboard/payments/${payment.id}/settle`, { outcome: 'failed' });
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe(`/dashboard/transactions/${payment.transactionId}`);
    expect((await t.request({ url: `/payments/${payment.id}`, key: alice.key })).json().data.status).toBe('failed');
    expect(await fiatBalance(t, alice, eur.id)).toBe(before);
    const page = await browser.get(String(response.headers.location));
    expect(page.body).toContain('Rejected by the receiving bank (sandbox)');
  });

  it('refuses a settle outcome the API refuses (400), settling nothing', async () => {
    const payment = await paymentOf(t, alice, { fromAccountId: eur.id, payeeId: payee.id, amount: 1, currency: 'EUR', reference: 'Invoice 79' });
    await browser.get(`/dashboard/transactions/${payment.transactionId}`);
    for (const fields of [{ outcome: 'maybe' }, {}] as Array<Record<string, string>>) {
      const response = await browser.post(`/dashboard/payments/${payment.id}/settle`, fields);
      expect(response.statusCode).toBe(400);
      expect(response.body).toContain('Outcome:');
    }
    expect((await t.request({ url: `/payments/${payment.id}`, key: alice.key })).json().data.status).toBe('pending');
  });

  it('shows a pending wallet transfer with settle buttons; settling it completed shows in the JSON API with its network id', async () => {
    const walletId = await newWallet(t, alice);
    const transfer = await pendingTransfer(t, alice, walletId, '4');
    const walletPage = await browser.get(`/dashboard/accounts/wallets/${walletId}`);
    expect(walletPage.body).toContain(`href="/dashboard/wallet-transfers/${transfer.local_id}"`);

    const page = await browser.get(`/dashboard/wallet-transfers/${transfer.local_id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('\u22124.00 USDC');
    expect(page.body).toContain('Pending');
    expect(page.body).toContain(`action="/dashboard/wallet-transfers/${transfer.local_id}/settle"`);
    const response = await browser.post(`/dashboard/wallet-transfers/${transfer.local_id}/settle`, { outcome: 'completed' });
    expect(response.statusCode, response.body).toBe(303);
    expect(response.headers.location).toBe(`/dashboard/wallet-transfers/${transfer.local_id}`);
    const settled = await walletTransfer(t, alice, transfer.local_id);
    expect(settled.status).toBe('completed');
    expect(settled.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await liveBalance(t, alice, walletId)).toMatchObject({ balance: '0.000000', available: '0.000000' });
    const after = await browser.get(`/dashboard/wallet-transfers/${transfer.local_id}`);
    expect(after.body).toContain(settled.tx_hash!);
    expect(after.body).not.toContain('/settle"');

    // A deposit is not settled: it has no buttons.
    const depositId = /href="\/dashboard\/wallet-transfers\/([0-9a-f-]{36})"><time[^>]*>[^<]*<\/time><\/a><\/td>\s*<td data-label="Kind">Deposit in/.exec(walletPage.body)![1]!;
    expect((await browser.get(`/dashboard/wallet-transfers/${depositId}`)).body).not.toContain('/settle"');
  });

  it('settling a wallet transfer as failed releases what it reserved', async () => {
    const walletId = await newWallet(t, alice);
    const transfer = await pendingTransfer(t, alice, walletId, '2.5');
    expect(await liveBalance(t, alice, walletId)).toMatchObject({ balance: '2.500000', available: '0.000000' });
    await browser.get(`/dashboard/wallet-transfers/${transfer.local_id}`);
    const response = await browser.post(`/dashboard/wallet-transfers/${transfer.local_id}/settle`, { outcome: 'failed' });
    expect(response.statusCode).toBe(303);
    expect(response.headers.location).toBe(`/dashboard/wallet-transfers/${transfer.local_id}`);
    expect((await walletTransfer(t, alice, transfer.local_id)).status).toBe('failed');
    expect(await liveBalance(t, alice, walletId)).toMatchObject({ balance: '2.500000', available: '2.500000' });
    const again = await browser.post(`/dashboard/wallet-transfers/${transfer.local_id}/settle`, { outcome: 'completed' });
    expect(again.statusCode).toBe(422);
    expect(again.body).toContain('A failed transfer cannot become completed.');
  });

  it('refuses every settle form without a valid form token (403), settling nothing', async () => {
    const payment = await paymentOf(t, alice, { fromAccountId: eur.id, payeeId: payee.id, amount: 1, currency: 'EUR', reference: 'Invoice 80' });
    const transfer = await pendingTransfer(t, alice, await newWallet(t, alice), '1');
    const before = await moneySnapshot(t, alice.id);
    for (const url of [`/dashboard/payments/${payment.id}/settle`, `/dashboard/wallet-transfers/${transfer.local_id}/settle`]) {
      for (const token of ['', '0'.repeat(64)]) {
        await browser.get('/dashboard/transactions');
        expect((await browser.post(url, { outcome: 'completed', _csrf: token })).statusCode, url).toBe(403);
      }
    }
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
    expect((await walletTransfer(t, alice, transfer.local_id)).status).toBe('pending');
  });

  it("answers another customer's ids like unknown ones (404 page) on every route with an id, settling nothing of theirs", async () => {
    const bobsBefore = await moneySnapshot(t, bob.id);
    const bobsTransaction = bobsPayment.transactionId;
    for (const url of [
      `/dashboard/transactions/${bobsTransaction}`,
      `/dashboard/transactions/${unknownId}`,
      '/dashboard/transactions/not-an-id',
      `/dashboard/wallet-transfers/${bobsWalletTransfer.local_id}`,
      `/dashboard/wallet-transfers/${unknownId}`,
      // A payment's id is not a transaction's.
      `/dashboard/transactions/${alices.payment.id}`,
    ]) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain('Not found');
    }
    for (const url of [
      `/dashboard/payments/${bobsPayment.id}/settle`,
      `/dashboard/payments/${unknownId}/settle`,
      `/dashboard/wallet-transfers/${bobsWalletTransfer.local_id}/settle`,
      `/dashboard/wallet-transfers/${unknownId}/settle`,
    ]) {
      await browser.get('/dashboard/transactions');
      expect((await browser.post(url, { outcome: 'failed' })).statusCode, url).toBe(404);
    }
    expect(await moneySnapshot(t, bob.id)).toEqual(bobsBefore);
    expect((await t.request({ url: `/payments/${bobsPayment.id}`, key: bob.key })).json().data.status).toBe('pending');
    expect((await walletTransfer(t, bob, bobsWalletTransfer.local_id)).status).toBe('pending');
  });

  it('sends a signed-out browser to sign-in from every page and form of the section', async () => {
    const requests: Array<{ method: 'GET' | 'POST'; url: string }> = [
      { method: 'GET', url: '/dashboard/transactions' },
      { method: 'GET', url: `/dashboard/transactions/${alices.payment.transactionId}` },
      { method: 'GET', url: `/dashboard/wallet-transfers/${bobsWalletTransfer.local_id}` },
      { method: 'POST', url: `/dashboard/payments/${alices.payment.id}/settle` },
      { method: 'POST', url: `/dashboard/wallet-transfers/${bobsWalletTransfer.local_id}/settle` },
    ];
    for (const { method, url } of requests) {
      const response = await t.app.inject({ method, url, ...(method === 'POST' ? { payload: 'outcome=completed', headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}) });
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location).toBe(method === 'GET' ? `/dashboard/sign-in?next=${encodeURIComponent(url)}` : '/dashboard/sign-in');
    }
    expect((await t.request({ url: `/payments/${alices.payment.id}`, key: alice.key })).json().data.status).toBe('pending');
  });
});

describe('dashboard transactions pages in production', () => {
  it('show a pending payment and a pending wallet transfer without settle buttons, and the settle routes do not exist (404)', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer('Live Ltd');
      const account = await createFiatAccount(t, customer, { accountName: 'Live EUR', currency: 'EUR' });
      const walletId = await newWallet(t, customer);
      // Production has no deposit endpoints: the money arrives as the bank and the custodian report it.
      const wallet = (await t.request({ url: `/wallets/${walletId}`, key: customer.key })).json().data;
      const arrival = () => {
        const id = randomBytes(8).toString('hex');
        return { provider: 'test-bank', reference: `in_${id}`, idempotencyKey: `evt_${id}` };
      };
      await t.app.providerEvents.report({ ...arrival(), type: 'deposit.received', payload: { account: account.fr_account_id, amount: '100.00', currency: 'EUR' } });
      await t.app.providerEvents.report({
        ...arrival(),
        type: 'wallet_deposit.received',
        payload: { address: wallet.deposit_address, asset: 'USDC', network: 'ETH', amount: '5', txHash: `0x${'cd'.repeat(32)}` },
      });
      const payment = await paymentOf(t, customer, { fromAccountId: account.id, payeeId: (await createPayee(t, customer, 'EUR')).id, amount: 5, currency: 'EUR', reference: 'Live invoice' });
      const sent = await t.request({ method: 'POST', url: `/wallets/${walletId}/transfers`, key: customer.key, csrf: true, body: { asset: 'USDC', network: 'ETH', amount: '1', destination: `0x${'ab'.repeat(20)}` } });
      expect(sent.statusCode, sent.body).toBe(201);
      const transferId = sent.json().data.local_id as string;

      const browser = await signedInBrowser(t, customer.id);
      const list = await browser.get('/dashboard/transactions');
      expect(list.statusCode).toBe(200);
      expect(list.body).toContain('Live invoice');
      const paymentPage = await browser.get(`/dashboard/transactions/${payment.transactionId}`);
      expect(paymentPage.statusCode).toBe(200);
      expect(paymentPage.body).toContain('Pending');
      const transferPage = await browser.get(`/dashboard/wallet-transfers/${transferId}`);
      expect(transferPage.statusCode).toBe(200);
      expect(transferPage.body).toContain('Pending');
      for (const page of [paymentPage, transferPage]) {
        expect(page.body).not.toContain('/settle"');
        expect(page.body).not.toContain('Settle as');
      }
      for (const url of [`/dashboard/payments/${payment.id}/settle`, `/dashboard/wallet-transfers/${transferId}/settle`]) {
        await browser.get('/dashboard/transactions');
        const response = await browser.post(url, { outcome: 'completed' });
        expect(response.statusCode, url).toBe(404);
        expect(response.body).toContain('There is nothing at this address');
      }
      expect((await t.request({ url: `/payments/${payment.id}`, key: customer.key })).json().data.status).toBe('pending');
      expect((await walletTransfer(t, customer, transferId)).status).toBe('pending');
    } finally {
      await t.close();
    }
  });
});
