import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { HttpPaymentProviderDouble } from '../helpers/http-payment-provider.js';
import { fiatBalance, outboxEvents } from '../helpers/money.js';
import { providerEventsSetup } from '../helpers/provider-events.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const secretOf = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * The HTTP payment adapter (docs/providers.md "The HTTP adapter"), against a provider double that speaks its contract
 * over loopback: payments are submitted to it, and complete or fail when it reports so, through the inbox.
 */
describe('the HTTP payment adapter', () => {
  let provider: HttpPaymentProviderDouble;
  let apiUrl: string;
  beforeAll(async () => {
    provider = await HttpPaymentProviderDouble.start(secretOf());
  });
  afterAll(() => provider.close());
  const setup = providerEventsSetup(() => ({ PAYMENT_PROVIDER_URL: provider.url, PAYMENT_PROVIDER_SECRET: provider.secret, SETTLEMENT_LEASE_SECONDS: '5' }));
  const { applyDue, paymentOf, newPayment } = setup;
  const submitDue = () => setup.runWorker('payment-submission');
  let t: TestApp;
  let alice: TestCustomer;
  let from: { id: string };
  let to: { id: string };
  beforeAll(async () => {
    ({ t, alice, from, to } = setup);
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });

  it('submits a payment to the provider, signed, and completes it when the provider reports so', async () => {
    expect(t.app.workers.map((candidate) => candidate.name)).not.toContain('sandbox-payment-settlement');
    const payment = await newPayment('Invoice 7', 12.34);
    const before = await fiatBalance(t, alice, to.id);
    expect(await submitDue()).toBe(1);
    const [submission] = provider.submissions.slice(-1);
    expect(submission!.signed).toBe(true);
    expect(submission!.headers['idempotency-key']).toBe(payment.frPaymentId);
    expect(submission!.body).toEqual({ id: payment.frPaymentId, amount: '12.34', currency: 'EUR', scheme: 'INTERNAL', reference: 'Invoice 7' });
    expect(await submitDue()).toBe(0);
    expect((await paymentOf(payment.id)).status).toBe('pending');

    const reported = await provider.report(apiUrl, { id: 'evt_1', type: 'payment.completed', reference: payment.frPaymentId });
    expect(reported).toEqual({ status: 202, body: { data: { id: 'evt_1', status: 'received' } } });
    expect((await paymentOf(payment.id)).status).toBe('pending');
    expect(await applyDue()).toBe(1);
    expect((await paymentOf(payment.id)).status).toBe('completed');
    expect(await fiatBalance(t, alice, to.id)).toBeCloseTo(before + 12.34, 2);
    expect((await outboxEvents(t, alice.id)).filter((event) => event.type === 'payment.completed' && event.data.id === payment.id)).toHaveLength(1);
  });

  it('writes an outcome reported twice once', async () => {
    const payment = await newPayment('Twice');
    await submitDue();
    const event = { id: 'evt_twice', type: 'payment.failed', reference: payment.frPaymentId, data: { reason: 'Account closed at the receiving bank' } };
    expect((await provider.report(apiUrl, event)).status).toBe(202);
    expect((await provider.report(apiUrl, event)).status).toBe(202);
    expect(await applyDue()).toBe(1);
    expect(await paymentOf(payment.id)).toMatchObject({ status: 'failed', failureReason: 'Account closed at the receiving bank' });
    const rows = await t.storage.db.selectFrom('provider_events').select(['provider', 'state']).where('idempotency_key', '=', 'evt_twice').execute();
    expect(rows).toEqual([{ provider: 'http', state: 'applied' }]);
  });

  it('refuses an outcome not signed with the shared secret, signed long ago, or for another provider, writing nothing', async () => {
    const payment = await newPayment('Forged');
    expect(await submitDue()).toBe(1);
    const event = { id: 'evt_forged', type: 'payment.completed', reference: payment.frPaymentId };
    const forged = await provider.report(apiUrl, event, { secret: secretOf() });
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ error: { code: 'UNAUTHENTICATED' } });
    expect((await provider.report(apiUrl, event, { at: new Date(t.clock.now().getTime() - 6 * 60_000) })).status).toBe(401);
    expect((await provider.report(apiUrl, event, { provider: 'sandbox' })).status).toBe(404);
    expect((await provider.report(apiUrl, { ...event, type: 'payment.exploded' })).status).toBe(400);
    expect(await t.storage.db.selectFrom('provider_events').select('id').where('reference', '=', payment.frPaymentId).execute()).toEqual([]);
  });

  it('fails a payment the provider refuses, and returns its money', async () => {
    const before = await fiatBalance(t, alice, from.id);
    provider.answer = () => ({ status: 422, body: { error: { message: 'Scheme not offered' } } });
    try {
      const payment = await newPayment('Refused');
      expect(await submitDue()).toBe(1);
      expect(await paymentOf(payment.id)).toMatchObject({ status: 'failed', failureReason: 'Scheme not offered' });
      expect(await fiatBalance(t, alice, from.id)).toBe(before);
    } finally {
      provider.answer = () => ({ status: 202, body: {} });
    }
  });

  it('submits again, once its claim has run out, a payment the provider could not take', async () => {
    provider.answer = () => ({ status: 503, body: {} });
    const payment = await newPayment('Retried');
    const submitted = () => provider.submissions.filter((submission) => submission.body.id === payment.frPaymentId).length;
    expect(await submitDue()).toBe(1);
    provider.answer = () => ({ status: 202, body: {} });
    t.clock.advance(4_999);
    expect(await submitDue()).toBe(0);
    t.clock.advance(1);
    expect(await submitDue()).toBe(1);
    expect(submitted()).toBe(2);
    expect(await submitDue()).toBe(0);
    expect((await paymentOf(payment.id)).status).toBe('pending');
  });
});

describe('the HTTP payment adapter settings', () => {
  it('refuses a provider URL without its secret, and a secret that is not a Standard Webhooks secret', () => {
    expect(() => loadConfig({ PAYMENT_PROVIDER_URL: 'https://bank.example.com' })).toThrow(/PAYMENT_PROVIDER_SECRET/);
    expect(() => loadConfig({ PAYMENT_PROVIDER_URL: 'https://bank.example.com', PAYMENT_PROVIDER_SECRET: 'hunter2' })).toThrow(/whsec_/);
    expect(loadConfig({ PAYMENT_PROVIDER_URL: 'https://bank.example.com/', PAYMENT_PROVIDER_SECRET: secretOf() }).paymentProvider?.url).toBe('https://bank.example.com');
  });

  it('still refuses to start in production, where accounts, KYC and custody have no adapter', async () => {
    await expect(createTestApp({ env: { API_ENVIRONMENT: 'production', PAYMENT_PROVIDER_URL: 'https://bank.example.com', PAYMENT_PROVIDER_SECRET: secretOf() } })).rejects.toThrow(/production/);
  });
});
