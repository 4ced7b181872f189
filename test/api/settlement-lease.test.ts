import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { Storage } from '../../src/storage/database.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { customerWithMoney, deposit, pay } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * The claim leases of the workers (docs/operations.md "Several instances"): a settlement or a batch of events claimed
 * by an instance that stopped before finishing it is taken by another once SETTLEMENT_LEASE_SECONDS (or
 * WEBHOOK_FAN_OUT_LEASE_SECONDS) have passed — not before, and not a fixed minute later.
 */
const leaseMs = 5_000;
const autoSettleMs = 1_000;

describe('a settlement claimed by an instance that stopped', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;
  let eur: { id: string };
  let wallet: string;

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        SANDBOX_AUTO_SETTLE_MS: String(autoSettleMs),
        SETTLEMENT_LEASE_SECONDS: String(leaseMs / 1000),
        WEBHOOK_FAN_OUT_LEASE_SECONDS: String(leaseMs / 1000),
        WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
        OTC_QUOTE_TTL_SECONDS: '300',
      },
    });
    ({ customer: alice, csrf, eur, wallet } = await customerWithMoney(t));
  });
  afterAll(async () => {
    expect((await verifyLedger(t.storage)).problems).toEqual([]);
    await t.close();
  });

  /** One pass of `worker` that claims what is due and then stops: its money plans never run, as in a process killed mid-pass. */
  async function passThatStops(worker: string): Promise<void> {
    const transaction = t.storage.transaction.bind(t.storage);
    const perCustomer = t.storage.perCustomer.bind(t.storage);
    const stopped = (() => Promise.reject(new Error('the instance stopped'))) as Storage['transaction'] & Storage['perCustomer'];
    t.storage.transaction = stopped;
    t.storage.perCustomer = stopped;
    try {
      await expect(t.app.workers.find((candidate) => candidate.name === worker)!.runOnce()).rejects.toThrow('the instance stopped');
    } finally {
      t.storage.transaction = transaction;
      t.storage.perCustomer = perCustomer;
    }
  }

  const cases: Array<[string, string, () => Promise<() => Promise<string>>]> = [
    [
      'a payment',
      'sandbox-payment-settlement',
      async () => {
        const other = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
        const payment = await pay(t, alice, { fromAccountId: eur.id, toAccountId: other.id, amount: 10, currency: 'EUR', reference: 'Lease' });
        return async () => (await t.request({ url: `/payments/${payment.id}`, key: alice.key })).json().data.status;
      },
    ],
    [
      'a wallet transfer',
      'sandbox-wallet-settlement',
      async () => {
        const body = { asset: 'USDC', network: 'ETH', amount: '1', destination: `0x${randomBytes(20).toString('hex')}` };
        const transfer = (await t.request({ method: 'POST', url: `/wallets/${wallet}/transfers`, key: alice.key, csrf, body })).json().data;
        return async () => (await t.request({ url: `/wallet-transfers/${transfer.local_id}`, key: alice.key })).json().data.status;
      },
    ],
    [
      'an OTC order',
      'sandbox-otc-settlement',
      async () => {
        const quote = (await t.request({ method: 'POST', url: '/otc-exchanges/quote', key: alice.key, csrf, body: { sourceFrAccountId: eur.id, destinationProviderWalletId: wallet, sourceAmountEur: '100' } })).json().data;
        const order = (await t.request({ method: 'POST', url: '/otc-exchanges', key: alice.key, csrf, body: { quoteId: quote.quoteId }, headers: { 'idempotency-key': randomUUID() } })).json().data;
        return async () => (await t.request({ url: `/otc-exchanges/orders/${order.orderId}`, key: alice.key })).json().data.status;
      },
    ],
  ];

  it.each(cases)('%s is taken again once SETTLEMENT_LEASE_SECONDS have passed, and settled once', async (_label, worker, create) => {
    const status = await create();
    const pending = await status();
    t.clock.advance(autoSettleMs);
    await passThatStops(worker);
    const runOnce = () => t.app.workers.find((candidate) => candidate.name === worker)!.runOnce();
    t.clock.advance(leaseMs - 1);
    expect(await runOnce()).toBe(0);
    expect(await status()).toBe(pending);
    t.clock.advance(1);
    expect(await runOnce()).toBe(1);
    expect(await status()).not.toBe(pending);
  });

  it('a batch of events claimed for the webhook fan-out is taken again once WEBHOOK_FAN_OUT_LEASE_SECONDS have passed', async () => {
    const fanOut = () => t.app.workers.find((candidate) => candidate.name === 'webhook-fan-out')!.runOnce();
    // Whatever earlier tests left unpublished goes out first.
    while ((await fanOut()) > 0);
    const hook = (await t.request({ method: 'POST', url: '/webhooks', key: alice.key, csrf, body: { url: 'http://127.0.0.1:9/hooks', eventTypes: ['fiat_account.balance_updated'] } })).json().data;
    await deposit(t, alice, eur.id, 1);
    const deliveries = async () => (await t.request({ url: `/webhooks/${hook.id}/deliveries`, key: alice.key })).json().meta.pagination.total;
    await passThatStops('webhook-fan-out');
    t.clock.advance(leaseMs - 1);
    expect(await fanOut()).toBe(0);
    expect(await deliveries()).toBe(0);
    t.clock.advance(1);
    expect(await fanOut()).toBe(1);
    expect(await deliveries()).toBe(1);
  });
});
