import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { providerEventBackoffMaxMs } from '../../src/config/limits.js';
import type { ReportedProviderEvent } from '../../src/providers/events.js';
import type { Storage } from '../../src/storage/database.js';
import { createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { fiatBalance, outboxEvents, settle } from '../helpers/money.js';
import { providerEventsSetup } from '../helpers/provider-events.js';
import type { TestApp, TestCustomer } from '../helpers/test-app.js';

/** A PNG as far as the upload checks go: its magic bytes, then filler. */
const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 0x41)]);

/**
 * The provider events inbox (docs/providers.md "Reporting outcomes"): outcomes are written as events, applied by the
 * resource's lifecycle through one claimed worker, once, in order per reference; an event that cannot apply is left
 * failed with its reason.
 */
describe('provider events inbox', () => {
  const setup = providerEventsSetup(() => ({ SANDBOX_AUTO_SETTLE_MS: 'off' }));
  const { applyDue, paymentOf, newPayment } = setup;
  let t: TestApp;
  let alice: TestCustomer;
  let from: { id: string };
  let to: { id: string };
  beforeAll(() => ({ t, alice, from, to } = setup));

  const eventsOf = (reference: string) =>
    t.storage.db.selectFrom('provider_events').selectAll().where('reference', '=', reference).orderBy('id').execute();
  const event = (reference: string, type: ReportedProviderEvent['type'], idempotencyKey: string, payload: Record<string, unknown> = {}): ReportedProviderEvent => ({
    provider: 'test-bank',
    type,
    reference,
    idempotencyKey,
    payload,
  });

  it('records a settlement by the simulation route as a sandbox event, applied', async () => {
    const payment = await newPayment('By route');
    await settle(t, alice, payment.id, 'completed');
    const [recorded, ...others] = await eventsOf(payment.frPaymentId);
    expect(others).toEqual([]);
    expect(recorded).toMatchObject({ provider: 'sandbox', event_type: 'payment.completed', state: 'applied', error_code: null });
  });

  it('writes an outcome reported twice with the same key once, and applies it once', async () => {
    const payment = await newPayment('Twice');
    const before = await fiatBalance(t, alice, to.id);
    await t.app.providerEvents.record(event(payment.frPaymentId, 'payment.completed', 'evt-twice'));
    await t.app.providerEvents.record(event(payment.frPaymentId, 'payment.completed', 'evt-twice'));
    expect(await applyDue()).toBe(1);
    expect(await applyDue()).toBe(0);
    expect((await paymentOf(payment.id)).status).toBe('completed');
    expect(await fiatBalance(t, alice, to.id)).toBe(before + 10);
    expect((await eventsOf(payment.frPaymentId)).map((row) => row.state)).toEqual(['applied']);
    const completions = (await outboxEvents(t, alice.id)).filter((outbox) => outbox.type === 'payment.completed' && outbox.data.id === payment.id);
    expect(completions).toHaveLength(1);
  });

  it('leaves an event for an unknown reference failed with its reason, and does not try it again', async () => {
    await t.app.providerEvents.record(event('pmt_unknown', 'payment.completed', 'evt-unknown'));
    expect(await applyDue()).toBe(1);
    const [failed] = await eventsOf('pmt_unknown');
    expect(failed).toMatchObject({ state: 'failed', error_code: 'NOT_FOUND', last_error: 'No such payment.' });
    expect(await applyDue()).toBe(0);
  });

  it('leaves an event its lifecycle forbids failed, and changes nothing', async () => {
    const payment = await newPayment('Forbidden');
    await settle(t, alice, payment.id, 'completed');
    const before = await fiatBalance(t, alice, from.id);
    await t.app.providerEvents.record(event(payment.frPaymentId, 'payment.failed', 'evt-late-failure', { reason: 'Returned' }));
    expect(await applyDue()).toBe(1);
    const late = (await eventsOf(payment.frPaymentId)).find((row) => row.idempotency_key === 'evt-late-failure');
    expect(late).toMatchObject({ state: 'failed', error_code: 'INVALID_STATUS_TRANSITION', last_error: 'A completed payment cannot become failed.' });
    expect((await paymentOf(payment.id)).status).toBe('completed');
    expect(await fiatBalance(t, alice, from.id)).toBe(before);
  });

  it('applies the events of one reference in the order they arrived, one at a time, and others alongside', async () => {
    const first = await newPayment('Ordered');
    const second = await newPayment('Alongside');
    await t.app.providerEvents.record(event(first.frPaymentId, 'payment.failed', 'evt-order-1', { reason: 'Account closed at the receiving bank' }));
    await t.app.providerEvents.record(event(first.frPaymentId, 'payment.completed', 'evt-order-2'));
    await t.app.providerEvents.record(event(second.frPaymentId, 'payment.completed', 'evt-order-3'));
    // The second event of the first payment waits for the first one.
    expect(await applyDue()).toBe(2);
    expect(await paymentOf(first.id)).toMatchObject({ status: 'failed', failureReason: 'Account closed at the receiving bank' });
    expect((await paymentOf(second.id)).status).toBe('completed');
    expect(await applyDue()).toBe(1);
    expect((await eventsOf(first.frPaymentId)).map((row) => [row.idempotency_key, row.state])).toEqual([
      ['evt-order-1', 'applied'],
      ['evt-order-2', 'failed'],
    ]);
  });

  it('tries an event that failed for another reason again after a backoff', async () => {
    const payment = await newPayment('Retried');
    await t.app.providerEvents.record(event(payment.frPaymentId, 'payment.completed', 'evt-retried'));
    const transaction = t.storage.transaction.bind(t.storage);
    const perCustomer = t.storage.perCustomer.bind(t.storage);
    const unavailable = (() => Promise.reject(new Error('the database is away'))) as Storage['transaction'] & Storage['perCustomer'];
    t.storage.transaction = unavailable;
    t.storage.perCustomer = unavailable;
    try {
      expect(await applyDue()).toBe(1);
    } finally {
      t.storage.transaction = transaction;
      t.storage.perCustomer = perCustomer;
    }
    const [waiting] = await eventsOf(payment.frPaymentId);
    expect(waiting).toMatchObject({ state: 'received', last_error: 'the database is away' });
    expect(Number(waiting!.attempts)).toBe(1);
    expect(await applyDue()).toBe(0);
    t.clock.advance(providerEventBackoffMaxMs);
    expect(await applyDue()).toBe(1);
    expect((await eventsOf(payment.frPaymentId))[0]).toMatchObject({ state: 'applied' });
    expect((await paymentOf(payment.id)).status).toBe('completed');
  });

  it('completes a wallet transfer when its custodian reports it, with the transaction id the custodian gives', async () => {
    const wallet = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true, body: {} })).json().data.local_id as string;
    const funded = await t.request({ method: 'POST', url: `/sandbox/wallets/${wallet}/deposits`, key: alice.key, csrf: true, body: { asset: 'USDC', network: 'ETH', amount: '10' } });
    expect(funded.statusCode).toBe(201);
    const body = { asset: 'USDC', network: 'ETH', amount: '4', destination: `0x${'ab'.repeat(20)}` };
    const sent = (await t.request({ method: 'POST', url: `/wallets/${wallet}/transfers`, key: alice.key, csrf: true, body })).json().data;
    const transfer = await t.storage.db.selectFrom('wallet_transfers').select('fr_transfer_id').where('id', '=', sent.local_id).executeTakeFirstOrThrow();
    const txHash = `0x${'cd'.repeat(32)}`;
    await t.app.providerEvents.record(event(transfer.fr_transfer_id, 'wallet_transfer.completed', 'evt-transfer', { txHash }));
    expect(await applyDue()).toBe(1);
    const settled = (await t.request({ url: `/wallet-transfers/${sent.local_id}`, key: alice.key })).json().data;
    expect(settled).toMatchObject({ status: 'completed', tx_hash: txHash });
    await t.app.providerEvents.record(event(transfer.fr_transfer_id, 'wallet_transfer.failed', 'evt-transfer-late'));
    expect(await applyDue()).toBe(1);
    expect((await eventsOf(transfer.fr_transfer_id)).map((row) => [row.state, row.error_code])).toEqual([
      ['applied', null],
      ['failed', 'INVALID_STATUS_TRANSITION'],
    ]);
  });

  it('takes an OTC order through the steps its liquidity provider reports, in order, and refuses a step out of turn', async () => {
    const wallet = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true, body: {} })).json().data.local_id as string;
    const quoted = await t.request({ method: 'POST', url: '/otc-exchanges/quote', key: alice.key, csrf: true, body: { sourceFrAccountId: from.id, destinationProviderWalletId: wallet, sourceAmountEur: '100' } });
    const confirmed = await t.request({ method: 'POST', url: '/otc-exchanges', key: alice.key, csrf: true, body: { quoteId: quoted.json().data.quoteId }, headers: { 'idempotency-key': randomUUID() } });
    expect(confirmed.statusCode, confirmed.body).toBe(201);
    const orderId = confirmed.json().data.orderId as string;
    const status = async () => (await t.request({ url: `/otc-exchanges/orders/${orderId}`, key: alice.key })).json().data.status;
    await t.app.providerEvents.record(event(orderId, 'otc_order.settled', 'evt-otc-early'));
    expect(await applyDue()).toBe(1);
    expect(await status()).toBe('debit_pending');
    await t.app.providerEvents.record(event(orderId, 'otc_order.debited', 'evt-otc-debited'));
    await t.app.providerEvents.record(event(orderId, 'otc_order.settled', 'evt-otc-settled'));
    expect(await applyDue()).toBe(1);
    expect(await status()).toBe('debited');
    expect(await applyDue()).toBe(1);
    expect(await status()).toBe('settled');
    expect((await eventsOf(orderId)).map((row) => [row.idempotency_key, row.state, row.error_code])).toEqual([
      ['evt-otc-early', 'failed', 'INVALID_STATUS_TRANSITION'],
      ['evt-otc-debited', 'applied', null],
      ['evt-otc-settled', 'applied', null],
    ]);
  });

  it('moves an end user as its KYC provider decides, and refuses a decision after a final one', async () => {
    const endUser = await createIndividual(t, alice);
    const reference = (await t.storage.db.selectFrom('end_users').select('fr_end_user_id').where('id', '=', endUser.id).executeTakeFirstOrThrow()).fr_end_user_id;
    const status = async () => (await t.request({ url: `/end-users/${endUser.id}`, key: alice.key })).json().data.status;
    await t.app.providerEvents.record(event(reference, 'end_user.review_required', 'evt-kyc-1'));
    await t.app.providerEvents.record(event(reference, 'end_user.verified', 'evt-kyc-2'));
    await t.app.providerEvents.record(event(reference, 'end_user.rejected', 'evt-kyc-3'));
    expect(await applyDue()).toBe(1);
    expect(await status()).toBe('review_required');
    expect(await applyDue()).toBe(1);
    expect(await status()).toBe('verified');
    expect(await applyDue()).toBe(1);
    expect(await status()).toBe('verified');
    expect((await eventsOf(reference)).map((row) => [row.state, row.error_code])).toEqual([
      ['applied', null],
      ['applied', null],
      ['failed', 'INVALID_STATUS_TRANSITION'],
    ]);
    const types = (await outboxEvents(t, alice.id)).filter((outbox) => outbox.data.id === endUser.id).map((outbox) => outbox.type);
    expect(types).toEqual(['end_user.created', 'end_user.status_updated', 'end_user.review_required', 'end_user.status_updated']);
  });

  it('marks a document synced, or rejected with its reason, as its KYC provider reports after reviewing it', async () => {
    const endUser = await createIndividual(t, alice);
    const upload = async (fileName: string) => {
      const body = { endUserId: endUser.id, documentType: 'identity', fileName, fileData: png.toString('base64'), mimeType: 'image/png' };
      const response = await t.request({ method: 'POST', url: '/documents', key: alice.key, csrf: true, body });
      expect(response.statusCode, response.body).toBe(201);
      return t.storage.db.selectFrom('documents').selectAll().where('end_user_id', '=', endUser.id).where('file_name', '=', fileName).executeTakeFirstOrThrow();
    };
    const accepted = await upload('accepted.png');
    const rejected = await upload('rejected.png');
    await t.app.providerEvents.record(event(accepted.fr_document_id, 'document.synced', 'evt-doc-1'));
    await t.app.providerEvents.record(event(rejected.fr_document_id, 'document.rejected', 'evt-doc-2', { reason: 'The document is blurred' }));
    expect(await applyDue()).toBe(2);
    const statusOf = (id: string) => t.storage.db.selectFrom('documents').select(['fr_sync_status', 'last_sync_error']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(await statusOf(accepted.id)).toEqual({ fr_sync_status: 'synced', last_sync_error: null });
    expect(await statusOf(rejected.id)).toEqual({ fr_sync_status: 'failed', last_sync_error: 'The document is blurred' });
  });

  it('sets an account status as its bank reports it, refuses a move out of a final one, and records an unchanged one as applied', async () => {
    const account = await createFiatAccount(t, alice, { accountName: 'Status', currency: 'EUR' });
    const reference = (await t.storage.db.selectFrom('fiat_accounts').select('fr_account_id').where('id', '=', account.id).executeTakeFirstOrThrow()).fr_account_id;
    const status = async () => (await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data.status;
    await t.app.providerEvents.record(event(reference, 'fiat_account.status_changed', 'evt-status-1', { status: 'FROZEN' }));
    await t.app.providerEvents.record(event(reference, 'fiat_account.status_changed', 'evt-status-2', { status: 'frozen' }));
    await t.app.providerEvents.record(event(reference, 'fiat_account.status_changed', 'evt-status-3', { status: 'closed' }));
    await t.app.providerEvents.record(event(reference, 'fiat_account.status_changed', 'evt-status-4', { status: 'active' }));
    await t.app.providerEvents.record(event(reference, 'fiat_account.status_changed', 'evt-status-5', { status: 'melted' }));
    while ((await applyDue()) > 0);
    expect(await status()).toBe('closed');
    expect((await eventsOf(reference)).map((row) => [row.state, row.error_code])).toEqual([
      ['applied', null],
      ['applied', null],
      ['applied', null],
      ['failed', 'INVALID_STATUS_TRANSITION'],
      ['failed', 'VALIDATION_ERROR'],
    ]);
    const updates = (await outboxEvents(t, alice.id)).filter((outbox) => outbox.type === 'fiat_account.status_updated' && outbox.data.id === account.id);
    expect(updates.map((outbox) => outbox.data.status)).toEqual(['frozen', 'closed']);
  });

  it('refuses an event of an unknown type or with a payload beyond its limit, writing nothing', async () => {
    await expect(t.app.providerEvents.record({ ...event('pmt_x', 'payment.completed', 'evt-bad-type'), type: 'payment.exploded' as never })).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    await expect(t.app.providerEvents.record(event('pmt_x', 'payment.completed', 'evt-big', { note: 'x'.repeat(20_000) }))).rejects.toMatchObject({ code: 'VALIDATION_ERROR' });
    expect(await eventsOf('pmt_x')).toEqual([]);
  });
});
