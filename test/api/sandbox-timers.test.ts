import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { customerWithMoney, deposit, pay, settle } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * The sandbox keeps its own schedule (docs/providers.md "The worked example: the sandbox"): when it answers for a
 * payment, a wallet transfer or an OTC order is a row of its table `sandbox_timers`, written with the resource; the
 * resource tables hold none of it. One mechanism fires every kind, and a timer that has nothing left to answer goes.
 */
const autoSettleMs = 2_000;

describe('the sandbox timers', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;
  let eur: { id: string };
  let savings: { id: string };
  let wallet: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: String(autoSettleMs), OTC_QUOTE_TTL_SECONDS: '300' } });
    ({ customer: alice, csrf, eur, wallet } = await customerWithMoney(t));
    savings = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
  });
  afterAll(async () => {
    expect((await verifyLedger(t.storage)).problems).toEqual([]);
    await t.close();
  });

  const runOnce = (worker: string) => t.app.workers.find((candidate) => candidate.name === worker)!.runOnce();
  const timerOf = (id: string) => t.storage.db.selectFrom('sandbox_timers').selectAll().where('id', '=', id).executeTakeFirst();
  const inLater = (ms: number) => new Date(t.clock.now().getTime() + ms).toISOString();

  const payment = async () => (await pay(t, alice, { fromAccountId: eur.id, toAccountId: savings.id, amount: 1, currency: 'EUR', reference: 'Timer' })).id;
  const transfer = async () => {
    const body = { asset: 'USDC', network: 'ETH', amount: '1', destination: `0x${randomBytes(20).toString('hex')}` };
    const created = await t.request({ method: 'POST', url: `/wallets/${wallet}/transfers`, key: alice.key, csrf, body });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().data.local_id as string;
  };
  const order = async () => {
    const quote = (await t.request({ method: 'POST', url: '/otc-exchanges/quote', key: alice.key, csrf, body: { sourceFrAccountId: eur.id, destinationProviderWalletId: wallet, sourceAmountEur: '100' } })).json().data;
    const created = await t.request({ method: 'POST', url: '/otc-exchanges', key: alice.key, csrf, body: { quoteId: quote.quoteId }, headers: { 'idempotency-key': randomUUID() } });
    expect(created.statusCode, created.body).toBe(201);
    return created.json().data.orderId as string;
  };

  it.each([
    ['payment', payment],
    ['wallet_transfer', transfer],
    ['otc_order', order],
  ] as const)('a new %s gets its timer, due SANDBOX_AUTO_SETTLE_MS after its creation', async (resource, create) => {
    const dueAt = inLater(autoSettleMs);
    const id = await create();
    expect(await timerOf(id)).toEqual({ id, resource, customer_id: alice.id, due_at: dueAt, answer: null, clock_id: null });
  });

  it('a payment keeps no schedule of the sandbox: nothing is due for submission to a rail', async () => {
    const id = await payment();
    const row = await t.storage.db.selectFrom('payments').select('submit_at').where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.submit_at).toBeNull();
  });

  it("fires an OTC order's timer twice: the debit, then the credit SANDBOX_AUTO_SETTLE_MS after it; then it is gone", async () => {
    const id = await order();
    const status = async () => (await t.request({ url: `/otc-exchanges/orders/${id}`, key: alice.key })).json().data.status;
    t.clock.advance(autoSettleMs);
    await runOnce('sandbox-otc-settlement');
    expect(await status()).toBe('debited');
    expect((await timerOf(id))?.due_at).toBe(inLater(autoSettleMs));
    t.clock.advance(autoSettleMs - 1);
    await runOnce('sandbox-otc-settlement');
    expect(await status()).toBe('debited');
    t.clock.advance(1);
    await runOnce('sandbox-otc-settlement');
    expect(await status()).toBe('settled');
    expect(await timerOf(id)).toBeUndefined();
  });

  it('a settle simulation takes the timer away with the answer', async () => {
    const id = await payment();
    await settle(t, alice, id, 'completed');
    expect(await timerOf(id)).toBeUndefined();
  });

  it('a timer whose resource was answered for meanwhile reports nothing and goes', async () => {
    const id = await payment();
    const timer = (await timerOf(id))!;
    await settle(t, alice, id, 'failed');
    // As a simulation racing the timer leaves it: the route answered, the timer was claimed before it could go.
    await t.storage.db.insertInto('sandbox_timers').values(timer).execute();
    const { fr_payment_id: reference } = await t.storage.db.selectFrom('payments').select('fr_payment_id').where('id', '=', id).executeTakeFirstOrThrow();
    const events = () => t.storage.db.selectFrom('provider_events').select('idempotency_key').where('reference', '=', reference).execute();
    const before = await events();
    t.clock.advance(autoSettleMs);
    while ((await runOnce('sandbox-payment-settlement')) > 0);
    expect(await events()).toEqual(before);
    expect(await timerOf(id)).toBeUndefined();
    expect((await t.request({ url: `/payments/${id}`, key: alice.key })).json().data.status).toBe('failed');
  });
});

describe('the sandbox timers with SANDBOX_AUTO_SETTLE_MS off', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
  });
  afterAll(async () => {
    await t.close();
  });

  it('writes no timer: the simulation routes alone answer', async () => {
    const alice = await t.createCustomer('Alice Ltd');
    const eur = await createFiatAccount(t, alice, { accountName: 'Treasury', currency: 'EUR' });
    const savings = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
    await deposit(t, alice, eur.id, 10);
    await pay(t, alice, { fromAccountId: eur.id, toAccountId: savings.id, amount: 1, currency: 'EUR', reference: 'No timer' });
    expect(await t.storage.db.selectFrom('sandbox_timers').selectAll().execute()).toEqual([]);
  });
});
