import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sandboxProviders } from '../../src/providers/providers.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { deIban, deposit, moneySnapshot } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const destination = '0x52908400098527886e0f7030069857d2e4169ee7';

/** What GET <path> of the JSON API lists for the customer. */
async function listed(t: TestApp, customer: TestCustomer, path: string): Promise<Array<{ id: string; local_id: string; [field: string]: unknown }>> {
  const response = await t.request({ url: path, key: customer.key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data;
}

/** Everything the forms create, counted through the API. */
async function counts(t: TestApp, customer: TestCustomer) {
  const [endUsers, fiat, virtual, wallets, payees, payments] = await Promise.all(
    ['/end-users', '/fiat-accounts', '/virtual-accounts', '/wallets', '/payees', '/payments'].map((path) => listed(t, customer, path)),
  );
  return { endUsers: endUsers!.length, fiat: fiat!.length, virtual: virtual!.length, wallets: wallets!.length, payees: payees!.length, payments: payments!.length };
}

/**
 * Posts a form from its page and follows the 303 (Post/Redirect/Get): returns the page it lands on, after checking
 * that loading it again changes nothing (the reload of a browser).
 */
async function postAndReload(t: TestApp, customer: TestCustomer, browser: DashboardBrowser, formPage: string, action: string, fields: Record<string, string>) {
  await browser.get(formPage);
  const response = await browser.post(action, fields);
  expect(response.statusCode, response.body).toBe(303);
  const location = String(response.headers.location);
  const after = await counts(t, customer);
  const money = await moneySnapshot(t, customer.id);
  for (let reload = 0; reload < 2; reload++) {
    const page = await browser.get(location);
    expect(page.statusCode, location).toBe(200);
  }
  expect(await counts(t, customer)).toEqual(after);
  expect(await moneySnapshot(t, customer.id)).toEqual(money);
  return { location, page: browser.lastPage };
}

const individualForm = {
  first_name: 'Grace',
  last_name: 'Hopper',
  email: 'grace@example.com',
  dob: '1906-12-09',
  address_line1: '1 Navy Way',
  address_city: 'Arlington',
  address_postal_code: '22202',
  address_country: 'US',
};

const businessForm = {
  company_name: 'Compilers GmbH',
  registration_number: 'HRB 4711',
  registration_date: '2001-02-03',
  email: 'office@compilers.example',
  incorporation_country: 'DE',
  address_line1: 'Hauptstraße 1',
  address_city: 'Berlin',
  address_postal_code: '10115',
  address_country: 'DE',
  director_first_name: 'Konrad',
  director_last_name: 'Zuse',
  director_dob: '1910-06-22',
  director_email: 'konrad@compilers.example',
};

const payeeForm = { name: 'Erika Mustermann', address_line1: 'Hauptstraße 1', address_city: 'Berlin', address_postal_code: '10115', address_country: 'DE', iban: deIban, bic: 'COBADEFFXXX' };

describe('dashboard create forms and status simulations (sandbox)', () => {
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

  it('creates a person and a business end user, each shown on its page and in GET /end-users; a reload creates nothing more', async () => {
    const person = await postAndReload(t, alice, browser, '/dashboard/end-users', '/dashboard/end-users', { ...individualForm, verification_method: 'hosted_kyc' });
    expect(person.location).toMatch(/^\/dashboard\/end-users\/[0-9a-f-]{36}$/);
    expect(person.page).toContain('Grace Hopper');
    const business = await postAndReload(t, alice, browser, '/dashboard/end-users', '/dashboard/end-users/businesses', businessForm);
    expect(business.page).toContain('Compilers GmbH');
    const endUsers = await listed(t, alice, '/end-users');
    expect(endUsers.map((endUser) => endUser.email).sort()).toEqual(['grace@example.com', 'office@compilers.example']);
    expect(endUsers.find((endUser) => endUser.end_user_type === 'BUSINESS')).toMatchObject({ company_name: 'Compilers GmbH', registration_number: 'HRB 4711' });
  });

  it("shows a refused end user form again with the API's reasons and what was typed, and creates nothing", async () => {
    const before = await counts(t, alice);
    await browser.get('/dashboard/end-users');
    const refused = await browser.post('/dashboard/end-users', { ...individualForm, dob: '1990-02-30', email: 'not-an-email' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('class="problems"');
    expect(refused.body).toContain('Email:');
    expect(refused.body).toContain('value="Grace"');
    const noDirector = await browser.post('/dashboard/end-users/businesses', { ...businessForm, director_first_name: '' });
    expect(noDirector.statusCode).toBe(400);
    expect(noDirector.body).toContain('Director&#39;s first name: is required');
    expect(noDirector.body).toContain('value="Compilers GmbH"');
    expect(await counts(t, alice)).toEqual(before);
  });

  it('opens a fiat account, a virtual account inside it and a wallet, as the API lists them; refusals create nothing', async () => {
    const fiat = await postAndReload(t, alice, browser, '/dashboard/accounts', '/dashboard/accounts/fiat', { account_name: 'Operating EUR', currency: 'EUR', iban_country: '' });
    expect(fiat.location).toMatch(/^\/dashboard\/accounts\/fiat\/[0-9a-f-]{36}$/);
    const fiatId = fiat.location.split('/').pop()!;
    expect(fiat.page).toContain('Operating EUR');
    expect(await listed(t, alice, '/fiat-accounts')).toEqual([expect.objectContaining({ id: fiatId, account_name: 'Operating EUR', currency: 'EUR' })]);

    const virtual = await postAndReload(t, alice, browser, '/dashboard/accounts', '/dashboard/accounts/virtual', { account_name: 'Client money', master_fiat_account_id: fiatId, currency: 'EUR', end_user_id: '' });
    expect(virtual.location).toMatch(/^\/dashboard\/accounts\/virtual\/[0-9a-f-]{36}$/);
    expect(await listed(t, alice, '/virtual-accounts')).toEqual([expect.objectContaining({ account_name: 'Client money', master_fiat_account_id: fiatId })]);

    const wallet = await postAndReload(t, alice, browser, '/dashboard/accounts', '/dashboard/accounts/wallets', { display_name: 'Treasury wallet', end_user_id: '' });
    expect(wallet.location).toMatch(/^\/dashboard\/accounts\/wallets\/[0-9a-f-]{36}$/);
    expect(wallet.page).toContain('Treasury wallet');

    const before = await counts(t, alice);
    await browser.get('/dashboard/accounts');
    const noName = await browser.post('/dashboard/accounts/fiat', { account_name: '', currency: 'EUR' });
    expect(noName.statusCode).toBe(400);
    expect(noName.body).toContain('Account name: is required');
    const badCurrency = await browser.post('/dashboard/accounts/fiat', { account_name: 'Yen', currency: 'JPY' });
    expect(badCurrency.statusCode).toBe(400);
    expect(badCurrency.body).toContain('value="Yen"');
    const mismatch = await browser.post('/dashboard/accounts/virtual', { account_name: 'Sterling', master_fiat_account_id: fiatId, currency: 'GBP' });
    expect(mismatch.statusCode).toBe(422);
    expect(mismatch.body).toContain('class="problems"');
    expect(await counts(t, alice)).toEqual(before);
  });

  it('sends crypto from a wallet: the transfer is pending and reserves the amount; too much is refused (422)', async () => {
    const walletId = (await listed(t, alice, '/wallets'))[0]!.local_id;
    await browser.get(`/dashboard/accounts/wallets/${walletId}`);
    expect((await browser.post(`/dashboard/accounts/wallets/${walletId}/deposits`, { pair: 'USDC/ETH', amount: '20' })).statusCode).toBe(303);
    const sent = await postAndReload(t, alice, browser, `/dashboard/accounts/wallets/${walletId}`, `/dashboard/accounts/wallets/${walletId}/transfers`, {
      pair: 'USDC/ETH',
      amount: '7.5',
      destination,
      note: 'Supplier',
    });
    expect(sent.location).toMatch(/^\/dashboard\/wallet-transfers\/[0-9a-f-]{36}$/);
    expect(sent.page).toContain('7.50 USDC');
    const wallet = (await t.request({ url: `/wallets/${walletId}`, key: alice.key })).json().data;
    expect(wallet.balances).toEqual([{ asset: 'USDC', balance: '20.000000', available: '12.500000' }]);

    await browser.get(`/dashboard/accounts/wallets/${walletId}`);
    const tooMuch = await browser.post(`/dashboard/accounts/wallets/${walletId}/transfers`, { pair: 'USDC/ETH', amount: '100', destination });
    expect(tooMuch.statusCode).toBe(422);
    expect(tooMuch.body).toContain('class="problems"');
    expect(tooMuch.body).toContain(`value="${destination}"`);
    const badAddress = await browser.post(`/dashboard/accounts/wallets/${walletId}/transfers`, { pair: 'USDC/ETH', amount: '1', destination: 'nowhere' });
    expect(badAddress.statusCode).toBe(400);
  });

  it('adds a payee and pays it: the payment is pending on its transaction page; an amount refused by the API moves nothing', async () => {
    const payee = await postAndReload(t, alice, browser, '/dashboard/payees', '/dashboard/payees', payeeForm);
    expect(payee.location).toMatch(/^\/dashboard\/payees\/[0-9a-f-]{36}$/);
    const payeeId = payee.location.split('/').pop()!;
    expect(payee.page).toContain('Erika Mustermann');
    expect(payee.page).toContain(deIban);
    const list = await browser.get('/dashboard/payees');
    expect(list.body).toContain(`href="/dashboard/payees/${payeeId}"`);

    const account = (await listed(t, alice, '/fiat-accounts'))[0]!;
    await deposit(t, alice, account.id, 500);
    const paid = await postAndReload(t, alice, browser, payee.location, `/dashboard/payees/${payeeId}/payments`, { from_account_id: account.id, amount: '120.50', reference: 'Invoice 7' });
    expect(paid.location).toMatch(/^\/dashboard\/transactions\/[0-9a-f-]{36}$/);
    const payments = await listed(t, alice, '/payments');
    expect(payments).toEqual([expect.objectContaining({ amount: '120.50', reference: 'Invoice 7', payeeId, status: 'pending' })]);

    const before = await moneySnapshot(t, alice.id);
    await browser.get(payee.location);
    const refused = await browser.post(`/dashboard/payees/${payeeId}/payments`, { from_account_id: account.id, amount: '1.234', reference: 'Too precise' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('value="Too precise"');
    const tooMuch = await browser.post(`/dashboard/payees/${payeeId}/payments`, { from_account_id: account.id, amount: '100000', reference: 'Too much' });
    expect(tooMuch.statusCode).toBe(422);
    const noBank = await browser.post('/dashboard/payees', { ...payeeForm, iban: '' });
    expect(noBank.statusCode).toBe(400);
    expect(noBank.body).toContain('value="Erika Mustermann"');
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
    expect((await listed(t, alice, '/payees')).length).toBe(1);
  });

  it('sets the status of an account and a payee as the sandbox bank would; a move the API refuses is shown (422), a reload repeats nothing', async () => {
    const account = (await listed(t, alice, '/fiat-accounts'))[0]!;
    const virtual = (await listed(t, alice, '/virtual-accounts'))[0]!;
    const payee = (await listed(t, alice, '/payees'))[0]!;
    const events = async () => (await t.request({ url: '/events?limit=100', key: alice.key })).json().meta.pagination.total as number;

    await postAndReload(t, alice, browser, `/dashboard/payees/${payee.id}`, `/dashboard/payees/${payee.id}/status`, { status: 'inactive' });
    expect((await t.request({ url: `/payees/${payee.id}`, key: alice.key })).json().data.status).toBe('inactive');
    const payeePage = await browser.get(`/dashboard/payees/${payee.id}`);
    expect(payeePage.body).toContain('An inactive payee cannot be paid.');

    const frozen = await postAndReload(t, alice, browser, `/dashboard/accounts/fiat/${account.id}`, `/dashboard/accounts/fiat/${account.id}/status`, { status: 'frozen' });
    expect(frozen.location).toBe(`/dashboard/accounts/fiat/${account.id}`);
    expect((await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data.status).toBe('frozen');
    await postAndReload(t, alice, browser, `/dashboard/accounts/virtual/${virtual.id}`, `/dashboard/accounts/virtual/${virtual.id}/status`, { status: 'closed' });
    expect((await t.request({ url: `/virtual-accounts/${virtual.id}`, key: alice.key })).json().data.status).toBe('closed');

    const before = await events();
    await browser.get(`/dashboard/accounts/virtual/${virtual.id}`);
    const reopen = await browser.post(`/dashboard/accounts/virtual/${virtual.id}/status`, { status: 'active' });
    expect(reopen.statusCode).toBe(422);
    expect(reopen.body).toContain('class="problems"');
    const unknown = await browser.post(`/dashboard/accounts/fiat/${account.id}/status`, { status: 'asleep' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('Status:');
    expect(await events()).toBe(before);
  });

  it("answers another customer's ids like unknown ones (404 page) on every new route, and changes nothing of theirs", async () => {
    const bobsAccount = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    const bobsPayee = (await t.request({ method: 'POST', url: '/payees', key: bob.key, csrf: true, body: { name: 'Bobs payee', address: { line1: 'x', city: 'Berlin', country: 'DE' }, bankDetails: { iban: deIban } } })).json().data;
    const bobsWallet = (await t.request({ method: 'POST', url: '/wallets', key: bob.key, csrf: true, body: {} })).json().data;
    const aliceAccount = (await listed(t, alice, '/fiat-accounts'))[0]!;
    for (const url of [`/dashboard/payees/${bobsPayee.id}`, `/dashboard/payees/${aliceAccount.id}`]) expect((await browser.get(url)).statusCode, url).toBe(404);
    const posts: Array<[string, Record<string, string>]> = [
      [`/dashboard/accounts/fiat/${bobsAccount.id}/status`, { status: 'frozen' }],
      [`/dashboard/accounts/virtual/${bobsAccount.id}/status`, { status: 'frozen' }],
      [`/dashboard/accounts/savings/${aliceAccount.id}/status`, { status: 'frozen' }],
      [`/dashboard/payees/${bobsPayee.id}/status`, { status: 'inactive' }],
      [`/dashboard/payees/${bobsPayee.id}/payments`, { from_account_id: aliceAccount.id, amount: '1', reference: 'x' }],
      [`/dashboard/accounts/wallets/${bobsWallet.local_id}/transfers`, { pair: 'USDC/ETH', amount: '1', destination }],
    ];
    for (const [url, fields] of posts) {
      await browser.get('/dashboard/accounts');
      expect((await browser.post(url, fields)).statusCode, url).toBe(404);
    }
    expect((await t.request({ url: `/fiat-accounts/${bobsAccount.id}`, key: bob.key })).json().data.status).toBe('active');
    expect((await t.request({ url: `/payees/${bobsPayee.id}`, key: bob.key })).json().data.status).toBe('active');
  });

  it('refuses every new form without a valid form token (403), creating nothing', async () => {
    const before = await counts(t, alice);
    const payee = (await listed(t, alice, '/payees'))[0]!;
    const account = (await listed(t, alice, '/fiat-accounts'))[0]!;
    for (const url of ['/dashboard/end-users', '/dashboard/end-users/businesses', '/dashboard/accounts/fiat', '/dashboard/accounts/virtual', '/dashboard/accounts/wallets', '/dashboard/payees', `/dashboard/payees/${payee.id}/status`, `/dashboard/payees/${payee.id}/payments`, `/dashboard/accounts/fiat/${account.id}/status`]) {
      const response = await browser.post(url, { _csrf: 'f'.repeat(64), account_name: 'x', currency: 'EUR', status: 'active' });
      expect(response.statusCode, url).toBe(403);
    }
    expect(await counts(t, alice)).toEqual(before);
  });
});

/**
 * A refused field as the page shows it: in the list at the top, in words with the form's own label and linked to the
 * field; by the field, whose input is marked invalid and names the message.
 */
function expectFieldProblem(html: string, id: string, label: string): void {
  expect(html, `${label} in the list`).toContain(`<a href="#${id}">${label}: `);
  expect(html, `${id} marked invalid`).toMatch(new RegExp(`id="${id}"[^>]* aria-invalid="true" aria-describedby="${id}-problem"`));
  expect(html, `${id} message`).toContain(`<p class="field-problem" id="${id}-problem">`);
}

describe('dashboard sandbox forms name their own fields when refused', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let browser: DashboardBrowser;
  let fiatId: string;
  let walletId: string;
  let payeeId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    browser = await signedInBrowser(t, alice.id);
    fiatId = (await createFiatAccount(t, alice, { accountName: 'Operating EUR', currency: 'EUR' })).id;
    walletId = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true, body: {} })).json().data.local_id;
    payeeId = (await t.request({ method: 'POST', url: '/payees', key: alice.key, csrf: true, body: { name: 'Erika', address: { line1: 'x', city: 'Berlin', country: 'DE' }, bankDetails: { iban: deIban } } })).json().data.id;
  });
  afterAll(async () => t.close());

  /** Posts a form from its page; expects the refusal (status) and answers the page shown again. */
  async function refused(formPage: string, action: string, fields: Record<string, string>, status = 400): Promise<string> {
    const before = await counts(t, alice);
    await browser.get(formPage);
    const response = await browser.post(action, fields);
    expect(response.statusCode, response.body).toBe(status);
    expect(await counts(t, alice)).toEqual(before);
    return response.body;
  }

  it('a person and a business: each problem by its label, the address once though the director shares it, everything typed kept', async () => {
    const person = await refused('/dashboard/end-users', '/dashboard/end-users', { ...individualForm, email: 'not-an-email', nationality: 'Germany' });
    expectFieldProblem(person, 'individual-email', 'Email');
    expectFieldProblem(person, 'individual-nationality', 'Nationality');
    for (const value of ['Grace', 'Hopper', 'not-an-email', '1906-12-09', '1 Navy Way', 'Arlington', 'Germany']) expect(person).toContain(`value="${value}"`);
    expectFieldProblem(await refused('/dashboard/end-users', '/dashboard/end-users', { ...individualForm, dob: '1990-02-30' }), 'individual-dob', 'Date of birth');
    // The other create form of the page stays empty.
    expect(person).toMatch(/id="business-company-name"[^>]* value=""/);

    const business = await refused('/dashboard/end-users', '/dashboard/end-users/businesses', { ...businessForm, director_first_name: '', address_line1: '' });
    expectFieldProblem(business, 'business-director-first-name', 'Director&#39;s first name');
    expectFieldProblem(business, 'business-line1', 'Street and number');
    expect(business.match(/<a href="#business-line1">/g)).toHaveLength(1);
    for (const value of ['Compilers GmbH', 'HRB 4711', 'Zuse', 'konrad@compilers.example', 'Berlin']) expect(business).toContain(`value="${value}"`);
    expect(business).not.toContain('Business persons');
    expect(business).not.toContain('Line1');
  });

  it('a fiat account, a virtual account and a wallet: each problem by its label, what was typed and chosen kept', async () => {
    const fiat = await refused('/dashboard/accounts', '/dashboard/accounts/fiat', { account_name: '', currency: 'JPY', iban_country: 'GB' });
    expectFieldProblem(fiat, 'fiat-name', 'Account name');
    expectFieldProblem(fiat, 'fiat-currency', 'Currency');
    expect(fiat).toContain('<option selected>GB</option>');

    const virtual = await refused('/dashboard/accounts', '/dashboard/accounts/virtual', { account_name: 'x'.repeat(201), master_fiat_account_id: fiatId, currency: 'EUR', end_user: '' });
    expectFieldProblem(virtual, 'virtual-name', 'Account name');
    expect(virtual).toContain(`value="${'x'.repeat(201)}"`);
    expect(virtual).toContain(`<option value="${fiatId}" selected>`);
    // The fiat form of the same page is fresh.
    expect(virtual).toMatch(/id="fiat-name"[^>]* value=""/);

    const wallet = await refused('/dashboard/accounts', '/dashboard/accounts/wallets', { display_name: 'w'.repeat(101), end_user: '' });
    expectFieldProblem(wallet, 'wallet-name', 'Name');
    expect(wallet).toContain(`value="${'w'.repeat(101)}"`);
  });

  it('a wallet transfer: each problem by its label, the note and the pair kept', async () => {
    const page = `/dashboard/accounts/wallets/${walletId}`;
    const transfer = await refused(page, `${page}/transfers`, { pair: 'USDC/ETH', amount: '1', destination: 'nowhere', note: 'Supplier 7' });
    expectFieldProblem(transfer, 'wallet-transfer-destination', 'To address');
    for (const value of ['nowhere', 'Supplier 7']) expect(transfer).toContain(`value="${value}"`);
    expect(transfer).toContain('<option value="USDC/ETH" selected>');
    // The deposit form of the same page is fresh.
    expect(transfer).toMatch(/id="wallet-deposit-amount"[^>]* value=""/);
  });

  it('a payee and a payment: each problem by its label (the bank details as a whole by their fieldset), everything typed kept', async () => {
    const badCountry = await refused('/dashboard/payees', '/dashboard/payees', { ...payeeForm, address_country: 'Germany' });
    expectFieldProblem(badCountry, 'payee-country', 'Country');
    for (const value of ['Erika Mustermann', 'Germany', 'Hauptstraße 1', deIban, 'COBADEFFXXX']) expect(badCountry).toContain(`value="${value}"`);
    const badIban = await refused('/dashboard/payees', '/dashboard/payees', { ...payeeForm, iban: 'DE00 1234' });
    expectFieldProblem(badIban, 'payee-iban', 'IBAN');
    expect(badIban).toContain('value="DE00 1234"');
    const noBank = await refused('/dashboard/payees', '/dashboard/payees', { ...payeeForm, iban: '', bic: '' });
    expect(noBank).toContain('<a href="#payee-bank">Their bank details: ');
    expect(noBank).toMatch(/<fieldset id="payee-bank" aria-describedby="payee-bank-problem">/);

    const payment = await refused(`/dashboard/payees/${payeeId}`, `/dashboard/payees/${payeeId}/payments`, { from_account_id: fiatId, amount: '1.234', reference: 'Invoice 7' });
    expectFieldProblem(payment, 'payment-amount', 'Amount in EUR');
    for (const value of ['1.234', 'Invoice 7']) expect(payment).toContain(`value="${value}"`);
    const noReference = await refused(`/dashboard/payees/${payeeId}`, `/dashboard/payees/${payeeId}/payments`, { from_account_id: fiatId, amount: '10', reference: '' });
    expectFieldProblem(noReference, 'payment-reference', 'Reference');
  });

  it('an OTC quote: each problem by its label, what was typed kept', async () => {
    await deposit(t, alice, fiatId, 500);
    const asset = await refused('/dashboard/otc', '/dashboard/otc/quotes', { source_account_id: fiatId, wallet_id: walletId, amount_eur: '50', destination_currency: 'DOGE' });
    expectFieldProblem(asset, 'otc-asset', 'Receive');
    for (const value of ['50', 'DOGE']) expect(asset).toContain(`value="${value}"`);
    const amount = await refused('/dashboard/otc', '/dashboard/otc/quotes', { source_account_id: fiatId, wallet_id: walletId, amount_eur: '5', destination_currency: 'USDT' });
    expectFieldProblem(amount, 'otc-amount', 'Amount in EUR');
    for (const value of ['5', 'USDT']) expect(amount).toContain(`value="${value}"`);
  });
});

describe('dashboard create forms in production', () => {
  it('create through the same services, while the status simulations do not exist (404)', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer('Live Ltd');
      const browser = await signedInBrowser(t, customer.id);
      await browser.get('/dashboard/accounts');
      const opened = await browser.post('/dashboard/accounts/fiat', { account_name: 'Live EUR', currency: 'EUR' });
      expect(opened.statusCode, opened.body).toBe(303);
      const accountPath = String(opened.headers.location);
      const accountPage = await browser.get(accountPath);
      expect(accountPage.body).not.toContain('/status"');
      await browser.get('/dashboard/payees');
      const added = await browser.post('/dashboard/payees', payeeForm);
      expect(added.statusCode, added.body).toBe(303);
      const payeePath = String(added.headers.location);
      const payeePage = await browser.get(payeePath);
      expect(payeePage.body).not.toContain('sandbox');
      for (const url of [`${accountPath}/status`.replace('/accounts/fiat/', '/accounts/fiat/'), `${payeePath}/status`]) {
        expect((await browser.post(url, { status: 'frozen' })).statusCode, url).toBe(404);
      }
    } finally {
      await t.close();
    }
  });
});
