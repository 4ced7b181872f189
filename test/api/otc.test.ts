import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createVirtualAccount, deposit, fiatBalance, outboxEvents, timestampPattern, uuidPattern } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';
const quoteFields = ['quoteId', 'rate', 'destinationAmount', 'sourceCurrency', 'destinationCurrency', 'ttlExpiresAt', 'ttlSeconds', 'indicative', 'sourceAmountEur', 'sourceAmountUsdc'].sort();

/** A decimal string as an integer count of 10^-decimals (the test's own arithmetic, not the server's). */
const units = (text: string, decimals: number) => {
  const [whole, fraction = ''] = text.split('.');
  return BigInt(`${whole}${fraction.padEnd(decimals, '0')}`);
};

describe('OTC exchange', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let csrf: string;
  let worker: PollingWorker;
  let eur: { id: string };
  let wallet: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: '2000' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    csrf = await t.csrfToken(alice.key);
    worker = t.app.workers.find((candidate) => candidate.name === 'sandbox-otc-settlement')!;
    eur = await createFiatAccount(t, alice, { accountName: 'Treasury EUR', currency: 'EUR' });
    await deposit(t, alice, eur.id, 100_000);
    wallet = await newWallet();
  });
  afterAll(async () => {
    expect((await verifyLedger(t.storage)).problems).toEqual([]);
    await t.close();
  });

  async function newWallet(customer = alice): Promise<string> {
    const response = await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf: true, body: {} });
    expect(response.statusCode).toBe(201);
    return response.json().data.local_id;
  }
  const quoteRequest = (body: Record<string, unknown>, customer = alice) =>
    t.request({ method: 'POST', url: '/otc-exchanges/quote', key: customer.key, csrf: customer === alice ? csrf : true, body: { sourceFrAccountId: eur.id, destinationProviderWalletId: wallet, sourceAmountEur: '100', ...body } });
  const quote = async (body: Record<string, unknown> = {}) => {
    const response = await quoteRequest(body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  };
  /** `key` null sends no Idempotency-Key. */
  const confirmRequest = (body: Record<string, unknown>, key: string | null = randomUUID(), customer = alice) =>
    t.request({ method: 'POST', url: '/otc-exchanges', key: customer.key, csrf: customer === alice ? csrf : true, body, headers: key === null ? {} : { 'idempotency-key': key } });
  const confirm = async (quoteId: string) => {
    const response = await confirmRequest({ quoteId });
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data;
  };
  const settleRequest = (orderId: string, outcome: string, customer = alice) =>
    t.request({ method: 'POST', url: `/sandbox/otc-orders/${orderId}/settle`, key: customer.key, csrf: customer === alice ? csrf : true, body: { outcome } });
  const usdc = async (walletId = wallet) => (await t.request({ url: `/otc-exchanges/wallets/${walletId}/balance?asset=USDC`, key: alice.key })).json().data;

  describe('eligible lists', () => {
    it('lists the EUR fiat and virtual accounts with their available balance as a decimal string, nothing in other currencies or of others', async () => {
      const virtual = await createVirtualAccount(t, alice, eur.id);
      await createFiatAccount(t, alice, { accountName: 'Dollars', currency: 'USD' });
      await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
      const listed = (await t.request({ url: '/otc-exchanges/accounts', key: alice.key })).json().data;
      expect(listed).toEqual([
        { id: eur.id, currency: 'EUR', isMaster: expect.any(Boolean), label: 'Treasury EUR', balance: '100000.00' },
        { id: virtual.id, currency: 'EUR', isMaster: false, label: 'Collections', balance: '0.00' },
      ]);
    });

    it('lists the wallets that can receive an asset, with its default address; USDC when none is named', async () => {
      const other = await newWallet();
      await t.request({ method: 'POST', url: `/wallets/${other}/addresses`, key: alice.key, csrf, body: { asset: 'EURC', network: 'SOL' } });
      const usdcWallets = (await t.request({ url: '/otc-exchanges/wallets', key: alice.key })).json().data;
      expect(usdcWallets.map((item: { id: string }) => item.id)).toEqual(expect.arrayContaining([wallet, other]));
      expect(usdcWallets[0]).toEqual({ id: wallet, label: 'USDC wallet', network: 'ETH', assetAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), asset: 'USDC' });
      const eurcWallets = (await t.request({ url: '/otc-exchanges/wallets?asset=eurc', key: alice.key })).json().data;
      expect(eurcWallets).toEqual([{ id: other, label: 'USDC wallet', network: 'SOL', assetAddress: expect.any(String), asset: 'EURC' }]);
      expect((await t.request({ url: `/otc-exchanges/wallets?asset=${'U'.repeat(11)}`, key: alice.key })).statusCode).toBe(400);
      expect((await t.request({ url: '/otc-exchanges/wallets?asset=', key: alice.key })).statusCode).toBe(400);
      expect((await t.request({ url: '/otc-exchanges/wallets', key: bob.key })).json().data).toEqual([]);
    });

    it.each(['BTC', 'DOGE', 'u', 'ABCDEFGHIJ'])('takes asset=%s as a filter: an asset with no eligible wallet lists nothing (200 [])', async (asset) => {
      const response = await t.request({ url: `/otc-exchanges/wallets?asset=${asset}`, key: alice.key });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ data: [] });
    });
  });

  describe('POST /otc-exchanges/quote', () => {
    it('answers the spec §2 quote: exact decimal strings, rounded down, valid for OTC_QUOTE_TTL_SECONDS', async () => {
      const quoted = await quote({ sourceAmountEur: '1234.56' });
      expect(Object.keys(quoted).sort()).toEqual(quoteFields);
      expect(quoted).toMatchObject({ sourceCurrency: 'EUR', destinationCurrency: 'USDC', ttlSeconds: 30, indicative: true, sourceAmountEur: '1234.56' });
      expect(quoted.quoteId).toMatch(uuidPattern);
      expect(quoted.rate).toMatch(/^\d+\.\d{8}$/);
      expect(quoted.destinationAmount).toMatch(/^\d+\.\d{6}$/);
      expect(quoted.sourceAmountUsdc).toMatch(/^\d+\.\d{6}$/);
      expect(quoted.ttlExpiresAt).toMatch(timestampPattern);
      expect(Date.parse(quoted.ttlExpiresAt) - t.clock.now().getTime()).toBe(30_000);
      // destinationAmount = sourceAmountEur × rate, rounded down to 6 decimals: cents × rate(10^-8) / 10^4.
      expect(units(quoted.destinationAmount, 6)).toBe((units(quoted.sourceAmountEur, 2) * units(quoted.rate, 8)) / 10n ** 4n);
      // The spread: the customer gets less than the amount at the mid rate (sourceAmountUsdc, USDC = USD here).
      expect(units(quoted.destinationAmount, 6)).toBeLessThan(units(quoted.sourceAmountUsdc, 6));
    });

    it('moves the rate with the market: a quote minutes later has another rate', async () => {
      const first = await quote();
      t.clock.advance(150_000);
      const later = await quote();
      expect(later.rate).not.toBe(first.rate);
      expect(Number(later.rate)).toBeGreaterThan(1.05);
      expect(Number(later.rate)).toBeLessThan(1.1);
    });

    it.each([
      ['below the minimum of 20 EUR', { sourceAmountEur: '19.99' }, '/sourceAmountEur'],
      ['with 3 decimals', { sourceAmountEur: '20.001' }, '/sourceAmountEur'],
      ['a number, not a string', { sourceAmountEur: 100 }, '/sourceAmountEur'],
      ['above the maximum', { sourceAmountEur: '10000000.01' }, '/sourceAmountEur'],
      ['side sell', { side: 'sell' }, '/side'],
      ['an asset EUR is not exchanged into', { destinationCurrency: 'BTC' }, '/destinationCurrency'],
      ['a destinationCurrency of 11 characters', { destinationCurrency: 'USDCUSDCUSD' }, '/destinationCurrency'],
      ['an account id that is no UUID', { sourceFrAccountId: 'nope' }, '/sourceFrAccountId'],
    ])('refuses an amount or field %s with 400', async (_label, change, path) => {
      const response = await quoteRequest(change);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields.map((field: { path: string }) => field.path)).toContain(path);
    });

    it('takes exactly 20 EUR, side BUY in any case, null as the defaults', async () => {
      expect((await quote({ sourceAmountEur: '20', side: 'BUY', destinationCurrency: null })).destinationCurrency).toBe('USDC');
      expect((await quote({ side: null, destinationCurrency: 'usdc' })).sourceAmountEur).toBe('100.00');
    });

    it('refuses an account in another currency (422), a wallet without an address of the asset (422), and another customer’s account or wallet like unknown ones (404)', async () => {
      const dollars = await createFiatAccount(t, alice, { accountName: 'USD', currency: 'USD' });
      const mismatch = await quoteRequest({ sourceFrAccountId: dollars.id });
      expect(mismatch.statusCode).toBe(422);
      expect(mismatch.json().error.code).toBe('CURRENCY_MISMATCH');
      const noAddress = await quoteRequest({ destinationCurrency: 'USDT' });
      expect(noAddress.statusCode).toBe(422);
      expect(noAddress.json().error.code).toBe('ADDRESS_REQUIRED');
      const bobsAccount = await createFiatAccount(t, bob, { accountName: 'Bob EUR 2', currency: 'EUR' });
      const bobsWallet = await newWallet(bob);
      for (const [foreign, unknown] of [
        [{ sourceFrAccountId: bobsAccount.id }, { sourceFrAccountId: unknownId }],
        [{ destinationProviderWalletId: bobsWallet }, { destinationProviderWalletId: unknownId }],
      ]) {
        const foreignAnswer = await quoteRequest(foreign!);
        const unknownAnswer = await quoteRequest(unknown!);
        expect(foreignAnswer.statusCode).toBe(404);
        expect(foreignAnswer.body).toBe(unknownAnswer.body);
      }
    });
  });

  describe('POST /otc-exchanges', () => {
    it('confirms a quote into a debit_pending order, reserving exactly sourceAmountEur in the same transaction', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const quoted = await quote({ sourceAmountEur: '250.75' });
      const order = await confirm(quoted.quoteId);
      expect(order).toMatchObject({
        status: 'debit_pending',
        quoteId: quoted.quoteId,
        sourceFrAccountId: eur.id,
        destinationProviderWalletId: wallet,
        sourceAmountEur: '250.75',
        destinationAmount: quoted.destinationAmount,
        rate: quoted.rate,
        debitedAt: null,
        settledAt: null,
      });
      expect(order.orderId).toMatch(uuidPattern);
      expect(await fiatBalance(t, alice, eur.id)).toBe(Math.round((before - 250.75) * 100) / 100);
      const history = (await t.request({ url: '/transactions?limit=1', key: alice.key })).json().data[0];
      expect(history).toMatchObject({ id: order.transactionId, transaction_type: 'otc_exchange', amount: 250.75, currency: 'EUR', status: 'pending', direction: 'outgoing' });
      expect((await outboxEvents(t, alice.id)).some((event) => event.type === 'otc_order.created' && event.data.orderId === order.orderId)).toBe(true);
    });

    it('requires an Idempotency-Key (400), and refuses side sell (400)', async () => {
      const quoted = await quote();
      const missing = await confirmRequest({ quoteId: quoted.quoteId }, null);
      expect(missing.statusCode).toBe(400);
      expect(missing.json().error.details.fields[0]).toMatchObject({ location: 'headers', path: '/idempotency-key' });
      expect((await confirmRequest({ quoteId: quoted.quoteId, side: 'sell' })).statusCode).toBe(400);
    });

    it('makes exactly one order of 50 concurrent confirmations with 50 keys; the others 422 QUOTE_ALREADY_CONFIRMED', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const quoted = await quote({ sourceAmountEur: '30' });
      const responses = await Promise.all(Array.from({ length: 50 }, () => confirmRequest({ quoteId: quoted.quoteId })));
      expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(1);
      const refused = responses.filter((response) => response.statusCode !== 201);
      expect(refused.every((response) => response.statusCode === 422 && response.json().error.code === 'QUOTE_ALREADY_CONFIRMED')).toBe(true);
      expect(await fiatBalance(t, alice, eur.id)).toBe(before - 30);
    });

    it('makes one order of 50 concurrent confirmations with one key: the rest replay it or get 409', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const quoted = await quote({ sourceAmountEur: '40' });
      const key = randomUUID();
      const responses = await Promise.all(Array.from({ length: 50 }, () => confirmRequest({ quoteId: quoted.quoteId }, key)));
      const created = responses.filter((response) => response.statusCode === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const response of created) expect(response.body).toBe(created[0]!.body);
      expect(responses.every((response) => response.statusCode === 201 || response.statusCode === 409)).toBe(true);
      expect(await fiatBalance(t, alice, eur.id)).toBe(before - 40);
    });

    it('refuses an expired quote with 422 QUOTE_EXPIRED and moves no money', async () => {
      const quoted = await quote({ sourceAmountEur: '50' });
      const before = await fiatBalance(t, alice, eur.id);
      t.clock.advance(30_000);
      const response = await confirmRequest({ quoteId: quoted.quoteId });
      expect(response.statusCode).toBe(422);
      expect(response.json().error.code).toBe('QUOTE_EXPIRED');
      expect(await fiatBalance(t, alice, eur.id)).toBe(before);
    });

    it('refuses more than the account holds (422 INSUFFICIENT_FUNDS) and a minDestinationAmount above the quote (422)', async () => {
      const poor = await createFiatAccount(t, alice, { accountName: 'Poor', currency: 'EUR' });
      await deposit(t, alice, poor.id, 25);
      const tooMuch = await confirmRequest({ quoteId: (await quote({ sourceFrAccountId: poor.id, sourceAmountEur: '25.01' })).quoteId });
      expect(tooMuch.statusCode).toBe(422);
      expect(tooMuch.json().error.code).toBe('INSUFFICIENT_FUNDS');
      const quoted = await quote({ sourceFrAccountId: poor.id, sourceAmountEur: '25' });
      const guarded = await confirmRequest({ quoteId: quoted.quoteId, minDestinationAmount: `${units(quoted.destinationAmount, 6) / 10n ** 6n + 1n}` });
      expect(guarded.statusCode).toBe(422);
      expect(guarded.json().error.code).toBe('MIN_DESTINATION_AMOUNT_NOT_MET');
      const met = await confirmRequest({ quoteId: quoted.quoteId, minDestinationAmount: quoted.destinationAmount, travelRulePayload: { originator: { name: 'Alice Ltd' } } });
      expect(met.statusCode).toBe(201);
      expect(await fiatBalance(t, alice, poor.id)).toBe(0);
    });

    it("answers another customer's quote exactly like an unknown one", async () => {
      const quoted = await quote();
      const foreign = await confirmRequest({ quoteId: quoted.quoteId }, randomUUID(), bob);
      const unknown = await confirmRequest({ quoteId: unknownId }, randomUUID(), bob);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
    });
  });

  describe('order lifecycle', () => {
    it('settles by hand: EUR debited = sourceAmountEur, USDC credited = destinationAmount, the spread to fee income; once', async () => {
      const walletBefore = units((await usdc()).balance, 6);
      const quoted = await quote({ sourceAmountEur: '1000' });
      const order = await confirm(quoted.quoteId);
      const settled = await settleRequest(order.orderId, 'completed');
      expect(settled.statusCode).toBe(200);
      expect(settled.json().data).toMatchObject({ status: 'settled', debitedAt: expect.stringMatching(timestampPattern), settledAt: expect.stringMatching(timestampPattern) });
      expect(units((await usdc()).balance, 6) - walletBefore).toBe(units(quoted.destinationAmount, 6));
      const record = (await t.request({ url: `/transactions/${order.transactionId}`, key: alice.key })).json().data;
      expect(record).toMatchObject({ status: 'completed', amount: 1000 });
      expect((await settleRequest(order.orderId, 'completed')).statusCode).toBe(422);
      expect((await settleRequest(order.orderId, 'failed')).statusCode).toBe(422);
      const report = await verifyLedger(t.storage);
      expect(report.problems).toEqual([]);
      expect(BigInt(report.system_balances_minor['fee_income:USDC'] ?? '0')).toBeGreaterThan(0n);
    });

    it('fails by hand before the debit: the EUR returns to the account, with a return record', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const order = await confirm((await quote({ sourceAmountEur: '77.77' })).quoteId);
      expect(await fiatBalance(t, alice, eur.id)).toBe(Math.round((before - 77.77) * 100) / 100);
      const failed = (await settleRequest(order.orderId, 'FAILED')).json().data;
      expect(failed).toMatchObject({ status: 'failed', failureReason: expect.any(String) });
      expect(await fiatBalance(t, alice, eur.id)).toBe(before);
      const [latest] = (await t.request({ url: '/transactions?limit=1', key: alice.key })).json().data;
      expect(latest).toMatchObject({ transaction_type: 'otc_exchange_return', amount: 77.77, direction: 'incoming' });
    });

    it('moves on by itself: debited after SANDBOX_AUTO_SETTLE_MS, settled after as long again', async () => {
      // Orders of earlier tests move on first, step by step.
      do t.clock.advance(2000);
      while ((await worker.runOnce()) > 0);
      const order = await confirm((await quote({ sourceAmountEur: '20' })).quoteId);
      const status = async () => (await t.request({ url: `/otc-exchanges/orders/${order.orderId}`, key: alice.key })).json().data.status;
      t.clock.advance(1999);
      expect(await worker.runOnce()).toBe(0);
      t.clock.advance(1);
      expect(await worker.runOnce()).toBe(1);
      expect(await status()).toBe('debited');
      t.clock.advance(2000);
      expect(await worker.runOnce()).toBe(1);
      expect(await status()).toBe('settled');
    });

    it('fails after the debit too: the EUR comes back from the liquidity provider; the debit record stands, a return balances it', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const order = await confirm((await quote({ sourceAmountEur: '60' })).quoteId);
      t.clock.advance(2000);
      while ((await worker.runOnce()) > 0);
      expect((await t.request({ url: `/otc-exchanges/orders/${order.orderId}`, key: alice.key })).json().data.status).toBe('debited');
      const failed = await settleRequest(order.orderId, 'failed');
      expect(failed.json().data).toMatchObject({ status: 'failed', debitedAt: expect.any(String), settledAt: null });
      expect(await fiatBalance(t, alice, eur.id)).toBe(before);
      expect((await t.request({ url: `/transactions/${order.transactionId}`, key: alice.key })).json().data.status).toBe('completed');
      expect((await settleRequest(order.orderId, 'completed')).statusCode).toBe(422);
    });

    it('lists the crypto credit with the wallet’s deposits: an incoming transfer of destinationAmount to its default address', async () => {
      const quoted = await quote({ sourceAmountEur: '45' });
      const order = await confirm(quoted.quoteId);
      await settleRequest(order.orderId, 'completed');
      const [latest] = (await t.request({ url: `/wallets/${wallet}/transfers?limit=1`, key: alice.key })).json().data;
      expect(latest).toMatchObject({ direction: 'incoming', status: 'completed', asset: 'USDC', network: 'ETH', amount: quoted.destinationAmount, note: `OTC order ${order.orderId}` });
      expect(latest.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    });

    it('lists orders newest first and answers another customer’s order like an unknown one', async () => {
      const order = await confirm((await quote()).quoteId);
      const listed = (await t.request({ url: '/otc-exchanges/orders?limit=2', key: alice.key })).json();
      expect(listed.data[0].orderId).toBe(order.orderId);
      expect(listed.meta.pagination).toMatchObject({ page: 1, limit: 2 });
      const foreign = await t.request({ url: `/otc-exchanges/orders/${order.orderId}`, key: bob.key });
      const unknown = await t.request({ url: `/otc-exchanges/orders/${unknownId}`, key: bob.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
      expect((await settleRequest(order.orderId, 'completed', bob)).body).toBe((await settleRequest(unknownId, 'completed', bob)).body);
      expect((await t.request({ url: '/otc-exchanges/orders', key: bob.key })).json().data).toEqual([]);
    });

    it('asks for otc-exchanges:read to read and otc-exchanges:write to quote and confirm', async () => {
      const reader = await t.createKey(alice.id, { scopes: ['otc-exchanges:read'] });
      expect((await t.request({ url: '/otc-exchanges/accounts', key: reader.key })).statusCode).toBe(200);
      const quoteAttempt = await t.request({ method: 'POST', url: '/otc-exchanges/quote', key: reader.key, csrf: true, body: { sourceFrAccountId: eur.id, destinationProviderWalletId: wallet, sourceAmountEur: '100' } });
      expect(quoteAttempt.statusCode).toBe(403);
      const walletsOnly = await t.createKey(alice.id, { scopes: ['wallets:read'] });
      expect((await t.request({ url: '/otc-exchanges/orders', key: walletsOnly.key })).statusCode).toBe(403);
      expect((await t.request({ url: '/otc-exchanges/accounts' })).statusCode).toBe(401);
    });
  });
});
