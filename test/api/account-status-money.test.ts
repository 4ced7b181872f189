import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createPayee, createVirtualAccount, deposit, fiatBalance, moneySnapshot, outboxEvents, pay, payRequest, settleRequest, virtualBalance } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import type { LightMyRequestResponse } from 'fastify';

type Resource = 'fiat-accounts' | 'virtual-accounts';

/**
 * Money leaves a fiat or virtual account only while it (and a virtual account's master) is active, on every path
 * that debits it — payments, OTC quotes, confirmations and the OTC order's debit step — and the statement that
 * debits checks it, so a freeze another instance committed a moment ago is not overtaken (docs/payments.md
 * "Account and payee status").
 */
describe('account status on every path that takes money out', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;
  let otcWorker: PollingWorker;
  let paymentWorker: PollingWorker;
  let wallet: string;

  const setStatus = async (resource: Resource, id: string, status: string) => {
    const response = await t.request({ method: 'POST', url: `/sandbox/${resource}/${id}/status`, key: alice.key, csrf, body: { status } });
    expect(response.statusCode, response.body).toBe(200);
  };
  /** As another instance (or the provider's notification handled there) would: straight in the database, so this instance's cache still says active. */
  const setStatusElsewhere = async (resource: Resource, id: string, status: string) => {
    const table = resource === 'fiat-accounts' ? 'fiat_accounts' : 'virtual_accounts';
    await t.storage.db.updateTable(table).set({ status }).where('id', '=', id).execute();
  };
  const quoteRequest = (accountId: string) =>
    t.request({ method: 'POST', url: '/otc-exchanges/quote', key: alice.key, csrf, body: { sourceFrAccountId: accountId, destinationProviderWalletId: wallet, sourceAmountEur: '50' } });
  const quote = async (accountId: string): Promise<string> => {
    const response = await quoteRequest(accountId);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data.quoteId;
  };
  const confirmRequest = (quoteId: string) =>
    t.request({ method: 'POST', url: '/otc-exchanges', key: alice.key, csrf, body: { quoteId }, headers: { 'idempotency-key': randomUUID() } });
  const order = async (orderId: string) => (await t.request({ url: `/otc-exchanges/orders/${orderId}`, key: alice.key })).json().data;
  const eligible = async (): Promise<string[]> => (await t.request({ url: '/otc-exchanges/accounts', key: alice.key })).json().data.map((item: { id: string }) => item.id);
  const notActive = (response: LightMyRequestResponse, accountId: string, status: string) => {
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: accountId, status } });
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: '2000' } });
    alice = await t.createCustomer('Alice Ltd');
    csrf = await t.csrfToken(alice.key);
    otcWorker = t.app.workers.find((candidate) => candidate.name === 'sandbox-otc-settlement')!;
    paymentWorker = t.app.workers.find((candidate) => candidate.name === 'sandbox-payment-settlement')!;
    const created = await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf, body: {} });
    wallet = created.json().data.local_id;
  });
  afterAll(async () => {
    expect((await verifyLedger(t.storage)).problems).toEqual([]);
    await t.close();
  });

  describe('OTC exchange', () => {
    it.each(['frozen', 'closed'])('refuses a quote and a confirmation from a %s EUR account with 422 ACCOUNT_NOT_ACTIVE, and lists it no more', async (status) => {
      const account = await createFiatAccount(t, alice, { accountName: `OTC ${status}`, currency: 'EUR' });
      await deposit(t, alice, account.id, 1_000);
      const quoteId = await quote(account.id);
      expect(await eligible()).toContain(account.id);
      await setStatus('fiat-accounts', account.id, status);

      const before = await moneySnapshot(t, alice.id);
      notActive(await quoteRequest(account.id), account.id, status);
      notActive(await confirmRequest(quoteId), account.id, status);
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
      expect(await t.storage.db.selectFrom('otc_orders').select('id').where('source_account_id', '=', account.id).execute()).toEqual([]);
      expect(await eligible()).not.toContain(account.id);
    });

    it('refuses a virtual account under a frozen master, and a frozen virtual account, at quote and confirmation', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'OTC master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      await deposit(t, alice, virtual.id, 500);
      const quoteId = await quote(virtual.id);
      await setStatus('fiat-accounts', master.id, 'frozen');
      notActive(await quoteRequest(virtual.id), master.id, 'frozen');
      notActive(await confirmRequest(quoteId), master.id, 'frozen');
      expect(await eligible()).not.toContain(virtual.id);

      await setStatus('fiat-accounts', master.id, 'active');
      const again = await quote(virtual.id);
      await setStatus('virtual-accounts', virtual.id, 'frozen');
      notActive(await confirmRequest(again), virtual.id, 'frozen');
      expect(await eligible()).not.toContain(virtual.id);
      expect(await virtualBalance(t, alice, virtual.id)).toBe(500);
    });

    it('refuses a confirmation from an account another instance froze a moment ago, though this one still has it cached as active', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'OTC elsewhere', currency: 'EUR' });
      await deposit(t, alice, account.id, 1_000);
      const quoteId = await quote(account.id);
      await setStatusElsewhere('fiat-accounts', account.id, 'frozen');
      const before = await moneySnapshot(t, alice.id);
      notActive(await confirmRequest(quoteId), account.id, 'frozen');
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
      expect(await fiatBalance(t, alice, account.id)).toBe(1_000);
    });

    it('fails an order whose account was frozen after its confirmation: the debit step does not take the EUR, it comes back', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'OTC frozen later', currency: 'EUR' });
      await deposit(t, alice, account.id, 1_000);
      const confirmed = await confirmRequest(await quote(account.id));
      expect(confirmed.statusCode, confirmed.body).toBe(201);
      const orderId = confirmed.json().data.orderId;
      expect(await fiatBalance(t, alice, account.id)).toBe(950);
      await setStatusElsewhere('fiat-accounts', account.id, 'frozen');

      // By hand: the provider refuses to complete it.
      const settle = await t.request({ method: 'POST', url: `/sandbox/otc-orders/${orderId}/settle`, key: alice.key, csrf, body: { outcome: 'completed' } });
      expect(settle.statusCode).toBe(422);
      expect(settle.json().error.code).toBe('ACCOUNT_NOT_ACTIVE');
      expect((await order(orderId)).status).toBe('debit_pending');

      // By its time: the order fails and the EUR returns to the (frozen) account, which may receive.
      t.clock.advance(2_000);
      await otcWorker.runOnce();
      const failed = await order(orderId);
      expect(failed.status).toBe('failed');
      expect(failed.failureReason).toBe('The fiat account is frozen: it cannot send money.');
      expect(await fiatBalance(t, alice, account.id)).toBe(1_000);
      const types = (await outboxEvents(t, alice.id)).filter((event) => event.data.orderId === orderId).map((event) => event.type);
      expect(types).toEqual(['otc_order.created', 'otc_order.status_updated']);
      expect((await outboxEvents(t, alice.id)).filter((event) => event.data.orderId === orderId).at(-1)!.data.status).toBe('failed');
    });
  });

  describe('payments', () => {
    it('refuses a payment from an account another instance froze a moment ago, though this one still has it cached as active', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Pay elsewhere', currency: 'EUR' });
      const payee = await createPayee(t, alice);
      await deposit(t, alice, account.id, 100);
      // A payment first, so that the account's status is cached as active.
      await pay(t, alice, { fromAccountId: account.id, payeeId: payee.id, amount: 10, currency: 'EUR', reference: 'warm' });
      await setStatusElsewhere('fiat-accounts', account.id, 'closed');
      const before = await moneySnapshot(t, alice.id);
      const refused = await payRequest(t, alice, { fromAccountId: account.id, payeeId: payee.id, amount: 10, currency: 'EUR', reference: 'late' });
      notActive(refused, account.id, 'closed');
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
    });

    it('refuses a payment from a virtual account whose master another instance froze, naming the master', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'Pay master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      const payee = await createPayee(t, alice);
      await deposit(t, alice, virtual.id, 100);
      await pay(t, alice, { fromAccountId: virtual.id, payeeId: payee.id, amount: 10, currency: 'EUR', reference: 'warm' });
      await setStatusElsewhere('fiat-accounts', master.id, 'frozen');
      const before = await moneySnapshot(t, alice.id);
      notActive(await payRequest(t, alice, { fromAccountId: virtual.id, payeeId: payee.id, amount: 10, currency: 'EUR', reference: 'late' }), master.id, 'frozen');
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
    });

    it('does not complete a pending payment from an account frozen meanwhile: by hand 422, by its time it fails and the money returns', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Pay frozen later', currency: 'EUR' });
      const payee = await createPayee(t, alice);
      await deposit(t, alice, account.id, 100);
      const created = await pay(t, alice, { fromAccountId: account.id, payeeId: payee.id, amount: 40, currency: 'EUR', reference: 'in flight' });
      const debited = await fiatBalance(t, alice, account.id);
      expect(debited).toBeLessThan(60);
      await setStatus('fiat-accounts', account.id, 'frozen');

      const byHand = await settleRequest(t, alice, created.id, 'completed');
      expect(byHand.statusCode).toBe(422);
      expect(byHand.json().error.code).toBe('ACCOUNT_NOT_ACTIVE');
      expect(await fiatBalance(t, alice, account.id)).toBe(debited);

      t.clock.advance(2_000);
      await paymentWorker.runOnce();
      const settled = (await t.request({ url: `/payments/${created.id}`, key: alice.key })).json().data;
      expect(settled.status).toBe('failed');
      expect(settled.failureReason).toBe('The fiat account is frozen: it cannot send money.');
      expect(await fiatBalance(t, alice, account.id)).toBe(100);
      // Settled once: failed now, it is settled no more.
      expect((await settleRequest(t, alice, created.id, 'failed')).statusCode).toBe(422);
    });

    it('does not complete a transfer into an account closed meanwhile: by hand 422 naming it, by its time it fails and the money returns', async () => {
      const from = await createFiatAccount(t, alice, { accountName: 'Transfer from', currency: 'EUR' });
      const to = await createFiatAccount(t, alice, { accountName: 'Transfer to', currency: 'EUR' });
      await deposit(t, alice, from.id, 100);
      const created = await pay(t, alice, { fromAccountId: from.id, toAccountId: to.id, amount: 30, currency: 'EUR', reference: 'to be closed' });
      await setStatusElsewhere('fiat-accounts', to.id, 'closed');

      notActive(await settleRequest(t, alice, created.id, 'completed'), to.id, 'closed');
      t.clock.advance(2_000);
      await paymentWorker.runOnce();
      const settled = (await t.request({ url: `/payments/${created.id}`, key: alice.key })).json().data;
      expect(settled.status).toBe('failed');
      expect(settled.failureReason).toBe('The fiat account is closed: it cannot receive money.');
      expect(await fiatBalance(t, alice, from.id)).toBe(100);
      expect(await fiatBalance(t, alice, to.id)).toBe(0);
    });

    it('names the frozen master of a virtual account alike on both databases when its payment is settled by hand', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'Settle master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      const payee = await createPayee(t, alice);
      await deposit(t, alice, virtual.id, 100);
      const created = await pay(t, alice, { fromAccountId: virtual.id, payeeId: payee.id, amount: 10, currency: 'EUR', reference: 'master frozen' });
      await setStatusElsewhere('fiat-accounts', master.id, 'frozen');
      const refused = await settleRequest(t, alice, created.id, 'completed');
      notActive(refused, master.id, 'frozen');
      expect(refused.json().error.message).toBe("The virtual account's master fiat account is frozen: it cannot send money.");
    });
  });

  describe('balance events', () => {
    it('carry the status the account has when the money moves: a deposit into a frozen account says frozen', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Frozen receiver', currency: 'EUR' });
      await setStatus('fiat-accounts', account.id, 'frozen');
      const before = (await outboxEvents(t, alice.id)).length;
      const record = await deposit(t, alice, account.id, 12.34);
      const [event] = (await outboxEvents(t, alice.id)).slice(before);
      const fetched = (await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data;
      expect(fetched.status).toBe('frozen');
      expect(event!.data).toEqual({ ...fetched, previous_balance: 0, transaction_id: record.id });
    });
  });
});
