import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { documentSyncRetryDelayMs } from '../../src/modules/documents/sync-worker.js';
import { createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { customerWithMoney, pay } from '../helpers/money.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, resetWebhooks, subscribe } from '../helpers/webhooks.js';

/**
 * Sandbox test clocks (docs/test-clocks.md): a customer's own time, frozen until advanced. While one is attached, the
 * rules that follow it read it, and an advance answers once what fell due up to the new time has been applied.
 */
const autoSettleMs = 60_000;
const quoteTtlSeconds = 30;
const later = (time: string, ms: number) => new Date(Date.parse(time) + ms).toISOString();

describe('sandbox test clocks', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;
  let eur: { id: string };
  let wallet: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({
      env: { SANDBOX_AUTO_SETTLE_MS: String(autoSettleMs), OTC_QUOTE_TTL_SECONDS: String(quoteTtlSeconds), WEBHOOK_ALLOW_PRIVATE_URLS: 'true' },
    });
    ({ customer: alice, csrf, eur, wallet } = await customerWithMoney(t));
    receiver = await new WebhookReceiver().listen();
  });
  afterEach(async () => {
    await resetWebhooks(t, receiver);
    await t.storage.db.deleteFrom('sandbox_test_clocks').execute();
    t.app.caches.named('test-clock-attachments', undefined, 1).deleteWhere(() => true);
  });
  afterAll(async () => {
    await receiver.close();
    expect((await verifyLedger(t.storage)).problems).toEqual([]);
    await t.close();
  });

  const post = (customer: TestCustomer, url: string, body: unknown = {}, headers: Record<string, string> = {}) =>
    t.request({ method: 'POST', url, key: customer.key, csrf: customer === alice ? csrf : true, body, headers });
  const createClock = async (customer: TestCustomer, body: Record<string, unknown> = {}) => {
    const response = await post(customer, '/sandbox/test-clocks', body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json<{ data: { id: string; name: string | null; frozen_time: string; created_at: string } }>().data;
  };
  const advance = (customer: TestCustomer, id: string, to: string) => post(customer, `/sandbox/test-clocks/${id}/advance`, { to });
  const quote = async (customer: TestCustomer, account: string, toWallet: string) => {
    const response = await post(customer, '/otc-exchanges/quote', { sourceFrAccountId: account, destinationProviderWalletId: toWallet, sourceAmountEur: '100' });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ data: { quoteId: string } }>().data.quoteId;
  };
  const confirm = (customer: TestCustomer, quoteId: string) => post(customer, '/otc-exchanges', { quoteId }, { 'idempotency-key': randomUUID() });
  const paymentStatus = async (customer: TestCustomer, id: string) => (await t.request({ url: `/payments/${id}`, key: customer.key })).json().data.status;

  it('is created frozen at now by default, attached to the customer, and read, listed and deleted through its routes', async () => {
    const clock = await createClock(alice, { name: 'Walk-through' });
    expect(clock).toEqual({ id: expect.any(String), name: 'Walk-through', frozen_time: t.clock.now().toISOString(), created_at: t.clock.now().toISOString() });
    expect((await t.request({ url: `/sandbox/test-clocks/${clock.id}`, key: alice.key })).json().data).toEqual(clock);
    expect((await t.request({ url: '/sandbox/test-clocks', key: alice.key })).json().data).toEqual([clock]);

    const second = await post(alice, '/sandbox/test-clocks', { frozen_time: '2030-01-01T00:00:00Z' });
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toMatchObject({ code: 'TEST_CLOCK_ALREADY_ATTACHED', details: { test_clock_id: clock.id } });

    const deleted = await t.request({ method: 'DELETE', url: `/sandbox/test-clocks/${clock.id}`, key: alice.key, csrf });
    expect(deleted.statusCode).toBe(204);
    expect((await t.request({ url: `/sandbox/test-clocks/${clock.id}`, key: alice.key })).statusCode).toBe(404);
    expect((await t.request({ url: '/sandbox/test-clocks', key: alice.key })).json().data).toEqual([]);
  });

  it("answers another customer's clock exactly like an unknown one", async () => {
    const clock = await createClock(alice);
    const bob = await t.createCustomer('Bob GmbH');
    for (const id of [clock.id, randomUUID()]) {
      const read = await t.request({ url: `/sandbox/test-clocks/${id}`, key: bob.key });
      expect(read.statusCode).toBe(404);
      expect(read.json().error.code).toBe('NOT_FOUND');
      expect((await advance(bob, id, '2100-01-01T00:00:00Z')).statusCode).toBe(404);
    }
  });

  it('refuses an advance backwards, to the same time, or too far, and nothing moves', async () => {
    const clock = await createClock(alice, { frozen_time: '2026-03-01T12:00:00+01:00' });
    expect(clock.frozen_time).toBe('2026-03-01T11:00:00.000Z');
    for (const to of ['2026-03-01T10:59:59.999Z', '2026-03-01T11:00:00.000Z', '2026-04-30T11:00:00.001Z', 'yesterday']) {
      const refused = await advance(alice, clock.id, to);
      expect(refused.statusCode, to).toBe(400);
      expect(refused.json().error.code).toBe('VALIDATION_ERROR');
      expect(refused.json().error.details.fields[0]).toMatchObject({ location: 'body', path: '/to' });
    }
    expect((await t.request({ url: `/sandbox/test-clocks/${clock.id}`, key: alice.key })).json().data.frozen_time).toBe(clock.frozen_time);
    const moved = await advance(alice, clock.id, '2026-04-30T11:00:00.000Z');
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json().data).toEqual({ ...clock, frozen_time: '2026-04-30T11:00:00.000Z' });
  });

  it("refuses an advance while another advance's work holds the clock, until that work ends or its hold runs out", async () => {
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    // As an advance on another instance leaves it while its work runs (or when that instance stopped mid-work).
    const holdUntil = later(t.clock.now().toISOString(), 600_000);
    await t.storage.db.updateTable('sandbox_test_clocks').set({ advancing_until: holdUntil }).where('id', '=', clock.id).execute();
    const refused = await advance(alice, clock.id, '2026-01-02T00:00:00Z');
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error.code).toBe('INVALID_STATUS_TRANSITION');
    expect((await t.request({ url: `/sandbox/test-clocks/${clock.id}`, key: alice.key })).json().data.frozen_time).toBe(clock.frozen_time);
    // Nor is it deleted while held: the advance's deliveries are leased in the clock's time.
    const notDeleted = await t.request({ method: 'DELETE', url: `/sandbox/test-clocks/${clock.id}`, key: alice.key, csrf });
    expect(notDeleted.statusCode).toBe(422);
    expect(notDeleted.json().error.code).toBe('INVALID_STATUS_TRANSITION');
    t.clock.set(new Date(Date.parse(holdUntil)));
    const taken = await advance(alice, clock.id, '2026-01-02T00:00:00Z');
    expect(taken.statusCode, taken.body).toBe(200);
    // Its work done, the clock is free for the next advance at once.
    expect((await advance(alice, clock.id, '2026-01-03T00:00:00Z')).statusCode).toBe(200);
    t.clock.set(new Date());
  });

  it('advance 31 s and the quote has expired: confirming answers the same error as a real expiry', async () => {
    const clock = await createClock(alice);
    const quoteId = await quote(alice, eur.id, wallet);
    expect((await advance(alice, clock.id, later(clock.frozen_time, 31_000))).statusCode).toBe(200);
    const refused = await confirm(alice, quoteId);
    expect(refused.statusCode).toBe(422);
    expect(refused.json().error).toEqual({
      code: 'QUOTE_EXPIRED',
      message: 'The quote has expired: request a new one.',
      details: { ttl_expires_at: later(clock.frozen_time, quoteTtlSeconds * 1000) },
    });
  });

  it('a quote of a clock frozen in the past lives by the clock, not by the server time', async () => {
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    const quoteId = await quote(alice, eur.id, wallet);
    // The server time is long past the quote's expiry in clock time; the clock has not moved, so the quote holds.
    const confirmed = await confirm(alice, quoteId);
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    expect(clock.frozen_time < t.clock.now().toISOString()).toBe(true);
  });

  it('advance past the settle delay and the payment is completed and its webhook delivered', async () => {
    const savings = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payment.completed'] });
    const clock = await createClock(alice);
    const payment = await pay(t, alice, { fromAccountId: eur.id, toAccountId: savings.id, amount: 1, currency: 'EUR', reference: 'Clocked' });

    // The server's time passing settles nothing: the payment's timer is in the clock's time.
    t.clock.advance(autoSettleMs * 10);
    await t.app.workers.find((worker) => worker.name === 'sandbox-payment-settlement')!.runOnce();
    expect(await paymentStatus(alice, payment.id)).toBe('pending');

    expect((await advance(alice, clock.id, later(clock.frozen_time, autoSettleMs - 1))).statusCode).toBe(200);
    expect(await paymentStatus(alice, payment.id)).toBe('pending');
    const advanced = await advance(alice, clock.id, later(clock.frozen_time, autoSettleMs));
    expect(advanced.statusCode, advanced.body).toBe(200);
    // The advance answered after the work: no worker ran since.
    expect(await paymentStatus(alice, payment.id)).toBe('completed');
    expect(receiver.received.map((received) => JSON.parse(received.body))).toEqual([expect.objectContaining({ type: 'payment.completed', data: expect.objectContaining({ id: payment.id }) })]);
    t.clock.set(new Date());
  });

  it('advance past the settle delays and the wallet transfer is completed and the OTC order settled, their webhooks delivered', async () => {
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['wallet_transfer.completed', 'otc_order.status_updated'] });
    const clock = await createClock(alice);
    const transferBody = { asset: 'USDC', network: 'ETH', amount: '1', destination: `0x${randomBytes(20).toString('hex')}` };
    const transfer = await post(alice, `/wallets/${wallet}/transfers`, transferBody);
    expect(transfer.statusCode, transfer.body).toBe(201);
    const transferId = transfer.json().data.local_id as string;
    const confirmed = await confirm(alice, await quote(alice, eur.id, wallet));
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    const orderId = confirmed.json().data.orderId as string;
    const transferStatus = async () => (await t.request({ url: `/wallet-transfers/${transferId}`, key: alice.key })).json().data.status;
    const orderStatus = async () => (await t.request({ url: `/otc-exchanges/orders/${orderId}`, key: alice.key })).json().data.status;

    // The server's time passing settles nothing: both timers are in the clock's time.
    t.clock.advance(autoSettleMs * 10);
    for (const worker of ['sandbox-wallet-settlement', 'sandbox-otc-settlement']) await t.app.workers.find((candidate) => candidate.name === worker)!.runOnce();
    expect([await transferStatus(), await orderStatus()]).toEqual(['pending', 'debit_pending']);

    expect((await advance(alice, clock.id, later(clock.frozen_time, autoSettleMs - 1))).statusCode).toBe(200);
    expect([await transferStatus(), await orderStatus()]).toEqual(['pending', 'debit_pending']);
    // One advance past both of the order's steps takes both, each at its time in the clock's time.
    const advanced = await advance(alice, clock.id, later(clock.frozen_time, 2 * autoSettleMs));
    expect(advanced.statusCode, advanced.body).toBe(200);
    expect([await transferStatus(), await orderStatus()]).toEqual(['completed', 'settled']);
    const delivered = receiver.received.map((received) => JSON.parse(received.body) as { type: string; data: { local_id?: string; orderId?: string; status: string } });
    // The sandbox's own earlier transfers (the deposit that funded the wallet) may be delivered too: these are the two.
    const ofThese = delivered.filter((event) => event.data.local_id === transferId || event.data.orderId === orderId);
    expect(ofThese.map((event) => `${event.type} ${event.data.status}`).sort()).toEqual(['otc_order.status_updated debited', 'otc_order.status_updated settled', 'wallet_transfer.completed completed']);
    t.clock.set(new Date());
  });

  it("an API key expires in its customer's time: advance past its expiry and it is refused, whatever the server's time", async () => {
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    // By the server's time this key expired long ago; by the clock's it has an hour left.
    const { key } = await t.createKey(alice.id, { expiresAt: later(clock.frozen_time, 3_600_000) });
    const read = () => t.request({ url: '/fiat-accounts', key });
    expect((await read()).statusCode).toBe(200);
    expect((await advance(alice, clock.id, later(clock.frozen_time, 3_600_000 - 1))).statusCode).toBe(200);
    expect((await read()).statusCode).toBe(200);
    expect((await advance(alice, clock.id, later(clock.frozen_time, 3_600_000))).statusCode).toBe(200);
    const refused = await read();
    expect(refused.statusCode).toBe(401);
    expect(refused.json().error.code).toBe('UNAUTHENTICATED');
  });

  it("the decision a magic name announced comes SANDBOX_AUTO_SETTLE_MS later in the clock's time, with its webhook", async () => {
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['end_user.status_updated'] });
    const clock = await createClock(alice);
    const user = await createIndividual(t, alice, { lastName: 'Reject' });
    const status = async () => (await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data.status;

    t.clock.advance(autoSettleMs * 10);
    await t.app.workers.find((worker) => worker.name === 'sandbox-kyc-decisions')!.runOnce();
    expect(await status()).toBe('pending_verification');
    expect((await advance(alice, clock.id, later(clock.frozen_time, autoSettleMs - 1))).statusCode).toBe(200);
    expect(await status()).toBe('pending_verification');
    expect((await advance(alice, clock.id, later(clock.frozen_time, autoSettleMs))).statusCode).toBe(200);
    expect(await status()).toBe('rejected');
    const delivered = receiver.received.map((received) => JSON.parse(received.body) as { type: string; data: { id: string; status: string } });
    expect(delivered.filter((event) => event.data.id === user.id).map((event) => event.data.status)).toContain('rejected');
    t.clock.set(new Date());
  });

  it("an Idempotency-Key is kept for its retention in the clock's time: the reaper leaves it, an advance past it forgets it", async () => {
    const retentionMs = t.config.idempotencyRetentionMs;
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    const key = randomUUID();
    const deposit = () => t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${eur.id}/deposits`, key: alice.key, csrf: true, body: { amount: 1 }, headers: { 'idempotency-key': key } });
    const first = await deposit();
    expect(first.statusCode, first.body).toBe(201);

    // By the server's time the key is long past its retention; the reaper leaves it, and it still answers.
    t.clock.advance(retentionMs * 2);
    csrf = await t.csrfToken(alice.key); // the old token's window has passed with the server's time
    await t.app.workers.find((worker) => worker.name === 'reaper')!.runOnce();
    const replayed = await deposit();
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toBe(first.body);

    expect((await advance(alice, clock.id, later(clock.frozen_time, retentionMs - 1))).statusCode).toBe(200);
    expect((await deposit()).body).toBe(first.body);
    expect((await advance(alice, clock.id, later(clock.frozen_time, retentionMs))).statusCode).toBe(200);
    const fresh = await deposit();
    expect(fresh.statusCode).toBe(201);
    expect(fresh.headers['idempotent-replayed']).toBeUndefined();
    expect(fresh.json().data.id).not.toBe(first.json().data.id);
    t.clock.set(new Date());
    csrf = await t.csrfToken(alice.key);
  });

  it("a document's sync and its retries run in the clock's time: the advance past the backoffs syncs it", async () => {
    const clock = await createClock(alice);
    const user = await createIndividual(t, alice);
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 0x41)]);
    // The sandbox provider refuses the first two attempts of a "sync-flaky" file.
    const uploaded = await post(alice, '/documents', { endUserId: user.id, documentType: 'identity', fileName: 'sync-flaky.png', fileData: png.toString('base64'), mimeType: 'image/png' });
    expect(uploaded.statusCode, uploaded.body).toBe(201);
    const document = async () => (await t.request({ url: `/documents/${uploaded.json().data.id}`, key: alice.key })).json().data;

    t.clock.advance(3_600_000);
    await t.app.workers.find((worker) => worker.name === 'document-sync')!.runOnce();
    expect(await document()).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 0, next_sync_at: clock.frozen_time });

    // The first attempt at once, the second a backoff later: both fail; the third is due another backoff on.
    const firstRetryAt = later(clock.frozen_time, documentSyncRetryDelayMs(1));
    expect((await advance(alice, clock.id, firstRetryAt)).statusCode).toBe(200);
    expect(await document()).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 2, next_sync_at: later(firstRetryAt, documentSyncRetryDelayMs(2)) });
    expect((await advance(alice, clock.id, later(firstRetryAt, documentSyncRetryDelayMs(2)))).statusCode).toBe(200);
    expect(await document()).toMatchObject({ fr_sync_status: 'synced', sync_attempts: 3, last_sync_error: null });
    t.clock.set(new Date());
    csrf = await t.csrfToken(alice.key);
  });

  it("other customers are unaffected: their payments settle and their quotes expire by the server's time", async () => {
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    const { customer: bob, eur: bobEur, wallet: bobWallet } = await customerWithMoney(t);
    const bobSavings = await createFiatAccount(t, bob, { accountName: 'Savings', currency: 'EUR' });
    const quoteId = await quote(bob, bobEur.id, bobWallet);
    const payment = await pay(t, bob, { fromAccountId: bobEur.id, toAccountId: bobSavings.id, amount: 1, currency: 'EUR', reference: 'Unclocked' });

    expect((await advance(alice, clock.id, '2026-02-01T00:00:00Z')).statusCode).toBe(200);
    expect(await paymentStatus(bob, payment.id)).toBe('pending');
    expect((await confirm(bob, quoteId)).statusCode).not.toBe(422);

    const laterQuote = await quote(bob, bobEur.id, bobWallet);
    t.clock.advance(autoSettleMs);
    await t.app.workers.find((worker) => worker.name === 'sandbox-payment-settlement')!.runOnce();
    expect(await paymentStatus(bob, payment.id)).toBe('completed');
    expect((await confirm(bob, laterQuote)).json().error.code).toBe('QUOTE_EXPIRED');
    await deliverDue(t);
    t.clock.set(new Date());
  });

  it("delete detaches: the customer's rules read the server clock again, and what was due in the clock's time with them", async () => {
    const savings = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payment.created'] });
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    const idempotencyKey = randomUUID();
    const deposit = () => post(alice, `/sandbox/fiat-accounts/${eur.id}/deposits`, { amount: 1 }, { 'idempotency-key': idempotencyKey });
    const deposited = await deposit();
    const payment = await pay(t, alice, { fromAccountId: eur.id, toAccountId: savings.id, amount: 1, currency: 'EUR', reference: 'Detached' });
    const frozenQuote = await quote(alice, eur.id, wallet);
    // The server's workers leave the payment.created delivery: it is due in the clock's time.
    await deliverDue(t);
    expect(receiver.received).toEqual([]);
    // As if an advance's instance had died mid-attempt: its lease, in the clock's time far ahead of the server's, stays.
    const leased = await t.storage.db.updateTable('webhook_deliveries').set({ leased_until: '2999-01-01T00:00:00.000Z' }).where('customer_id', '=', alice.id).where('status', '=', 'pending').executeTakeFirst();
    expect(Number(leased.numUpdatedRows)).toBe(1);
    expect((await t.request({ method: 'DELETE', url: `/sandbox/test-clocks/${clock.id}`, key: alice.key, csrf })).statusCode).toBe(204);

    // The delivery keeps its due time (2026-01-01), now read by the server clock, and not the lease of the clock's
    // time: the server's workers send it.
    await deliverDue(t);
    expect(receiver.received.map((received) => JSON.parse(received.body).data.id)).toEqual([payment.id]);

    // The quote was made in the clock's time (2026-01-01): by the server's time it has expired.
    expect((await confirm(alice, frozenQuote)).json().error.code).toBe('QUOTE_EXPIRED');
    // The payment's timer keeps its due time, now read by the server clock: long past, so the worker settles it.
    await t.app.workers.find((worker) => worker.name === 'sandbox-payment-settlement')!.runOnce();
    expect(await paymentStatus(alice, payment.id)).toBe('completed');
    const fresh = await quote(alice, eur.id, wallet);
    expect((await confirm(alice, fresh)).statusCode).toBe(201);
    // The key's retention ended on 2026-01-02 by the server's time: the reaper deletes it, and the key runs anew.
    await t.app.workers.find((worker) => worker.name === 'reaper')!.runOnce();
    expect((await deposit()).json().data.id).not.toBe(deposited.json().data.id);
  });

  it("what was written with a clock after its deletion (another instance still remembered it) goes back to the server clock at the reaper's pass", async () => {
    const savings = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
    await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payment.created'] });
    const clock = await createClock(alice, { frozen_time: '2026-01-01T00:00:00Z' });
    expect((await t.request({ method: 'DELETE', url: `/sandbox/test-clocks/${clock.id}`, key: alice.key, csrf })).statusCode).toBe(204);
    const payment = await pay(t, alice, { fromAccountId: eur.id, toAccountId: savings.id, amount: 1, currency: 'EUR', reference: 'Late' });
    // As an instance whose attachment cache still held the clock writes the delivery: in the deleted clock's time.
    while ((await t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!.runOnce()) > 0);
    const late = await t.storage.db.updateTable('webhook_deliveries').set({ clock_id: clock.id }).where('customer_id', '=', alice.id).executeTakeFirst();
    expect(late.numUpdatedRows).toBe(1n);
    await deliverDue(t);
    expect(receiver.received).toEqual([]);
    await t.app.workers.find((worker) => worker.name === 'reaper')!.runOnce();
    await deliverDue(t);
    expect(receiver.received.map((received) => JSON.parse(received.body).data.id)).toEqual([payment.id]);
  });

  it('needs a full-access key', async () => {
    const limited = await t.createCustomer('Carol BV', { scopes: ['payments:write'] });
    const refused = await post(limited, '/sandbox/test-clocks');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
  });
});

describe('sandbox test clocks and webhook retries', () => {
  // Five daily retries: six failed attempts over five days are the default rule's whole schedule failing for 5 days.
  const day = 86_400_000;
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_RETRY_DELAYS: '1d,1d,1d,1d,1d', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('advance 5 days and a failing subscription is disabled: its retries and the auto-disable rule run in the clock\'s time', async () => {
    const alice = await t.createCustomer('Alice Ltd');
    receiver.answer = () => ({ status: 500 });
    const subscription = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['fiat_account.created'] });
    const created = await t.request({ method: 'POST', url: '/sandbox/test-clocks', key: alice.key, csrf: true, body: { frozen_time: '2026-01-01T00:00:00Z' } });
    const clock = created.json<{ data: { id: string; frozen_time: string } }>().data;
    await createFiatAccount(t, alice, { accountName: 'Treasury', currency: 'EUR' });
    const advance = (to: string) => t.request({ method: 'POST', url: `/sandbox/test-clocks/${clock.id}/advance`, key: alice.key, csrf: true, body: { to } });
    const subscriptionNow = async () => (await t.request({ url: `/webhooks/${subscription.id}`, key: alice.key })).json().data;
    const deliveries = async () => (await t.request({ url: `/webhooks/${subscription.id}/deliveries`, key: alice.key })).json().data;

    // The server's workers fan the event out (in the clock's time) but attempt nothing of it, however late it gets.
    await deliverDue(t);
    t.clock.advance(10 * day);
    await deliverDue(t);
    expect(receiver.received).toEqual([]);
    expect(await deliveries()).toEqual([expect.objectContaining({ status: 'pending', attempt_count: 0, next_attempt_at: clock.frozen_time })]);

    const almost = await advance(later(clock.frozen_time, 5 * day - 1));
    expect(almost.statusCode, almost.body).toBe(200);
    // The first attempt and four daily retries, each at its time in the clock's time, under one webhook-id.
    expect(receiver.received).toHaveLength(5);
    expect(new Set(receiver.received.map((received) => received.headers['webhook-id'])).size).toBe(1);
    // The signature's timestamp is the server's: a receiver checks it against its own clock.
    expect(Number(receiver.received[0]!.headers['webhook-timestamp'])).toBe(Math.floor(t.clock.now().getTime() / 1000));
    expect(await subscriptionNow()).toMatchObject({ is_active: true, consecutive_failures: 5, disabled_at: null });
    expect(await deliveries()).toEqual([
      expect.objectContaining({ status: 'pending', attempt_count: 5, last_attempt_at: later(clock.frozen_time, 4 * day), next_attempt_at: later(clock.frozen_time, 5 * day) }),
    ]);
    const health = (await t.request({ url: `/webhooks/${subscription.id}/health`, key: alice.key })).json().data;
    expect(health).toMatchObject({
      status: 'failing',
      failing_since: clock.frozen_time,
      consecutive_failures: 5,
      attempts_24h: 1,
      auto_disable: { failures_left: 1, not_before: later(clock.frozen_time, 5 * day), seconds_left: 1 },
    });

    const advanced = await advance(later(clock.frozen_time, 5 * day));
    expect(advanced.statusCode, advanced.body).toBe(200);
    expect(receiver.received).toHaveLength(6);
    expect(await subscriptionNow()).toMatchObject({
      is_active: false,
      consecutive_failures: 6,
      disabled_at: later(clock.frozen_time, 5 * day),
      disabled_reason: '6 consecutive failed attempts',
    });
    expect(await deliveries()).toEqual([expect.objectContaining({ status: 'failed', attempt_count: 6, next_attempt_at: null })]);
    t.clock.set(new Date());
  });
});

describe('sandbox test clocks in production', () => {
  it('are not served', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer();
      const id = randomUUID();
      for (const [method, url] of [['POST', '/sandbox/test-clocks'], ['GET', '/sandbox/test-clocks'], ['GET', `/sandbox/test-clocks/${id}`], ['POST', `/sandbox/test-clocks/${id}/advance`], ['DELETE', `/sandbox/test-clocks/${id}`]] as const) {
        const response = await t.request({ method, url, key: customer.key, csrf: true, ...(method === 'POST' ? { body: { to: '2100-01-01T00:00:00Z' } } : {}) });
        expect(response.statusCode, `${method} ${url}`).toBe(404);
        expect(response.json().error.code).toBe('ROUTE_NOT_FOUND');
      }
    } finally {
      await t.close();
    }
  });
});
