import { randomBytes, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { holdMoneyPlans, type MoneyPlanHold } from '../helpers/held-money-plans.js';
import { fiatBalance } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * One answer per Idempotency-Key (docs/idempotency.md "A request that outlives its lease"): a request held up past
 * its key's lease — queued behind the per-customer limit, a slow database — keeps its key while it runs (the lease
 * is renewed), and if the key was taken over all the same (renewal failed), it answers what the key's owner answers:
 * 409 while the owner runs, then the owner's stored answer, never a refusal of its own.
 */

/** A fresh EUR account with `amount` EUR, a wallet, and the requests of this file, for `customer` of `t`. */
async function money(t: TestApp, customer: TestCustomer, amount: number) {
  const csrf = await t.csrfToken(customer.key);
  const account = await createFiatAccount(t, customer, { accountName: 'Treasury', currency: 'EUR' });
  const funded = await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${account.id}/deposits`, key: customer.key, csrf, body: { amount } });
  expect(funded.statusCode).toBe(201);
  const wallet = (await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf, body: {} })).json().data.local_id as string;
  const post = (url: string, body: unknown, key: string) => t.request({ method: 'POST', url, key: customer.key, csrf, body, headers: { 'idempotency-key': key } });
  return {
    account,
    wallet,
    quote: async (): Promise<string> => {
      const response = await t.request({ method: 'POST', url: '/otc-exchanges/quote', key: customer.key, csrf, body: { sourceFrAccountId: account.id, destinationProviderWalletId: wallet, sourceAmountEur: '100' } });
      expect(response.statusCode, response.body).toBe(200);
      return response.json().data.quoteId;
    },
    confirm: (quoteId: string, key: string) => post('/otc-exchanges', { quoteId }, key),
    deposit: (key: string) => post(`/sandbox/fiat-accounts/${account.id}/deposits`, { amount: 10 }, key),
    fundWallet: (amount: string, key = randomUUID()) => post(`/sandbox/wallets/${wallet}/deposits`, { asset: 'USDC', network: 'ETH', amount }, key),
    transfer: (amount: string, key: string) => post(`/wallets/${wallet}/transfers`, { asset: 'USDC', network: 'ETH', amount, destination: `0x${randomBytes(20).toString('hex')}` }, key),
    orders: async (quoteId: string) => (await t.storage.db.selectFrom('otc_orders').select('id').where('quote_id', '=', quoteId).execute()).length,
    outgoingTransfers: async () => (await t.storage.db.selectFrom('wallet_transfers').select('id').where('wallet_id', '=', wallet).where('direction', '=', 'outgoing').execute()).length,
  };
}

/** The first answer, replayed: same status and body, marked as a replay. */
function expectReplayOf(replay: LightMyRequestResponse, first: LightMyRequestResponse): void {
  expect(replay.statusCode, replay.body).toBe(first.statusCode);
  expect(replay.body).toBe(first.body);
  expect(replay.headers['idempotent-replayed']).toBe('true');
}

function expectKeyInUse(response: LightMyRequestResponse): void {
  expect(response.statusCode, response.body).toBe(409);
  expect(response.json().error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
  expect(response.headers['retry-after']).toBe('1');
}

describe('a request that outlives its Idempotency-Key lease', () => {
  describe('keeps its key while it runs (lease of 1 s, renewed)', () => {
    let t: TestApp;
    let alice: TestCustomer;
    let plans: MoneyPlanHold;

    beforeAll(async () => {
      t = await createTestApp({ env: { IDEMPOTENCY_LEASE_SECONDS: '1', OTC_QUOTE_TTL_SECONDS: '300', SANDBOX_AUTO_SETTLE_MS: 'off' } });
      alice = await t.createCustomer('Alice Ltd');
    });
    afterEach(() => plans?.stop());
    afterAll(async () => {
      expect((await verifyLedger(t.storage)).problems).toEqual([]);
      await t.close();
    });

    const leaseUntil = async (key: string) =>
      (await t.storage.db.selectFrom('idempotency_keys').select('lease_until').where('customer_id', '=', alice.id).where('key', '=', key).executeTakeFirstOrThrow()).lease_until;

    it('answers a retry 409 for as long as the first runs, well past the first lease, then both get the one answer', async () => {
      const { quote, confirm, orders, account } = await money(t, alice, 1000);
      const quoteId = await quote();
      const key = randomUUID();
      plans = holdMoneyPlans(t.storage);
      const original = confirm(quoteId, key);
      const held = await plans.arrived();
      const firstLease = await leaseUntil(key);
      // 1.8 s on the clock in three steps: the second and third retries come after the first lease ran out.
      for (let round = 0; round < 3; round += 1) {
        const lease = await leaseUntil(key);
        t.clock.advance(600);
        // The lease moves ahead while the request runs: it never runs out under it.
        await vi.waitFor(async () => expect(await leaseUntil(key) > lease).toBe(true), { timeout: 5000, interval: 20 });
        expectKeyInUse(await confirm(quoteId, key));
      }
      expect(t.clock.now().toISOString() > firstLease).toBe(true);
      held.release();
      const first = await original;
      expect(first.statusCode, first.body).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      expectReplayOf(await confirm(quoteId, key), first);
      expect(await orders(quoteId)).toBe(1);
      expect(await fiatBalance(t, alice, account.id)).toBe(900);
    });
  });

  describe('answers what the key\'s owner answers once it was taken over (renewal failed)', () => {
    let t: TestApp;
    let alice: TestCustomer;
    let plans: MoneyPlanHold;
    /** Longer than any test here runs: the lease is not renewed before the clock is moved past it. */
    const leaseMs = 60_000;

    beforeAll(async () => {
      t = await createTestApp({ env: { IDEMPOTENCY_LEASE_SECONDS: String(leaseMs / 1000), OTC_QUOTE_TTL_SECONDS: '3600', SANDBOX_AUTO_SETTLE_MS: 'off' } });
      alice = await t.createCustomer('Alice Ltd');
    });
    afterEach(() => plans?.stop());
    afterAll(async () => {
      expect((await verifyLedger(t.storage)).problems).toEqual([]);
      await t.close();
    });

    /**
     * Sends `send(key)`, holds it before its money plan runs past its lease, lets a retry take the key over and
     * finish, then lets the first go on. Returns the first's answer and the retry's.
     */
    async function takenOverWhileWaiting(send: (key: string) => Promise<LightMyRequestResponse>) {
      const key = randomUUID();
      plans = holdMoneyPlans(t.storage);
      const original = send(key);
      await plans.arrived();
      t.clock.advance(leaseMs + 1);
      const pendingRetry = send(key);
      (await plans.arrived()).release();
      const retry = await pendingRetry;
      expect(retry.statusCode, retry.body).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      // Lets the first go on, holding nothing more: a deposit, refused by the lost key, is the refusal of its
      // provider event, which the inbox checks once more after every earlier write has committed.
      plans.stop();
      return { key, original: await original, retry };
    }

    it('OTC confirmation: the first answers the retry\'s 201, not QUOTE_ALREADY_CONFIRMED; the quote is confirmed once', async () => {
      const { quote, confirm, orders, account } = await money(t, alice, 1000);
      const quoteId = await quote();
      const { key, original, retry } = await takenOverWhileWaiting((idempotencyKey) => confirm(quoteId, idempotencyKey));
      expectReplayOf(original, retry);
      expectReplayOf(await confirm(quoteId, key), retry);
      expect(await orders(quoteId)).toBe(1);
      expect(await fiatBalance(t, alice, account.id)).toBe(900);
    });

    it('a wallet transfer of the whole balance: the first answers the retry\'s 201, not INSUFFICIENT_FUNDS; it moves once', async () => {
      const { fundWallet, transfer, outgoingTransfers } = await money(t, alice, 10);
      expect((await fundWallet('25')).statusCode).toBe(201);
      const { key, original, retry } = await takenOverWhileWaiting((idempotencyKey) => transfer('25', idempotencyKey));
      expectReplayOf(original, retry);
      expectReplayOf(await transfer('25', key), retry);
      expect(await outgoingTransfers()).toBe(1);
    });

    it('a deposit whose store finds the key taken: the first answers the retry\'s 201, not 409; it is credited once', async () => {
      const { deposit, account } = await money(t, alice, 10);
      const { key, original, retry } = await takenOverWhileWaiting(deposit);
      expectReplayOf(original, retry);
      expectReplayOf(await deposit(key), retry);
      expect(await fiatBalance(t, alice, account.id)).toBe(20);
    });

    it('answers 409 while the key\'s owner still runs, and the owner\'s answer once it finished', async () => {
      const { quote, confirm, orders } = await money(t, alice, 1000);
      const quoteId = await quote();
      const key = randomUUID();
      plans = holdMoneyPlans(t.storage);
      const original = confirm(quoteId, key);
      const heldOriginal = await plans.arrived();
      t.clock.advance(leaseMs + 1);
      const retry = confirm(quoteId, key);
      const heldRetry = await plans.arrived();
      heldOriginal.release();
      expectKeyInUse(await original);
      heldRetry.release();
      const answered = await retry;
      expect(answered.statusCode, answered.body).toBe(201);
      expectReplayOf(await confirm(quoteId, key), answered);
      expect(await orders(quoteId)).toBe(1);
    });
  });
});
