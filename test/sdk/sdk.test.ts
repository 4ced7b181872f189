import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CustomerApi, CustomerApiConnectionError, CustomerApiError, verifyWebhook, WebhookVerificationError, type CustomerApiOptions } from '../../sdk/src/index.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue } from '../helpers/webhooks.js';

/** docs/sdk.md: the SDK against the real server, listening on a loopback port; no mocked answer anywhere. */

interface Sent {
  method: string;
  path: string;
  headers: Headers;
  status: number | 'failed';
  /** The answer's X-Request-Id. */
  requestId?: string | null;
}

describe('TypeScript SDK', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let baseUrl: string;
  let receiver: WebhookReceiver;
  /** Every request the SDK sent, in order. */
  let sent: Sent[];
  /** Requests to drop the answer of (the server carries them out; the SDK sees a failed connection). */
  let dropAnswer: (method: string, path: string) => boolean;
  const slept: number[] = [];

  /** Passes each request to the server and records it; drops the answers `dropAnswer` names. */
  const recordingFetch: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const path = new URL(request.url).pathname;
    try {
      const response = await fetch(request);
      sent.push({ method: request.method, path, headers: request.headers, status: response.status, requestId: response.headers.get('x-request-id') });
      if (dropAnswer(request.method, path)) throw new TypeError('fetch failed');
      return response;
    } catch (error) {
      if (!sent.some((entry) => entry.headers === request.headers)) sent.push({ method: request.method, path, headers: request.headers, status: 'failed' });
      throw error;
    }
  };

  const client = (options: Partial<CustomerApiOptions> = {}) =>
    new CustomerApi({
      apiKey: alice.key,
      baseUrl,
      fetch: recordingFetch,
      // Waits advance the server's clock instead of the test's time (Retry-After, backoff).
      sleep: async (ms) => {
        slept.push(ms);
        t.clock.advance(ms);
      },
      ...options,
    });

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });
  beforeEach(() => {
    sent = [];
    dropAnswer = () => false;
    slept.length = 0;
  });

  async function fundedAccount(api: CustomerApi, amount = 1000) {
    const { data: account } = await api.createFiatAccount({ body: { accountName: 'Operating', currency: 'EUR' } });
    await api.sandboxCreateFiatDeposit({ params: { path: { id: account.id } }, body: { amount } });
    return account;
  }

  it('calls every operation by its operationId, typed, and fetches the CSRF token once for all its writes', async () => {
    const api = client();
    const from = await fundedAccount(api);
    const { data: to } = await api.createFiatAccount({ body: { accountName: 'Savings', currency: 'EUR' } });
    const { data: payment } = await api.createPayment({ body: { fromAccountId: from.id, toAccountId: to.id, amount: 12.5, currency: 'EUR', reference: 'sdk-typed' } });
    expect(payment.status).toBe('pending');
    const { data: fetched } = await api.getPayment({ params: { path: { id: payment.id } } });
    expect(fetched).toMatchObject({ id: payment.id, amount: '12.50', currency: 'EUR', reference: 'sdk-typed' });
    expect(sent.filter((request) => request.path === '/csrf-token')).toHaveLength(1);
    for (const request of sent.filter((entry) => entry.method === 'POST')) {
      expect(request.headers.get('x-csrf-token')).toMatch(/^[0-9a-f]{64}$/);
      expect(request.headers.get('x-api-key')).toBe(alice.key);
      expect(request.headers.get('x-api-version')).toBe('v1');
    }
  });

  it('fetches a fresh CSRF token when the one it holds has expired, and the write goes through', async () => {
    const api = client();
    await api.createFiatAccount({ body: { accountName: 'Before', currency: 'EUR' } });
    t.clock.advance(3 * 3600 * 1000);
    const { data } = await api.createFiatAccount({ body: { accountName: 'After', currency: 'EUR' } });
    expect(data.account_name).toBe('After');
    expect(sent.filter((request) => request.path === '/csrf-token')).toHaveLength(2);
    expect(sent.filter((request) => request.path === '/fiat-accounts').map((request) => request.status)).toEqual([201, 403, 201]);
  });

  it('sends an Idempotency-Key on the operations that take one and keeps it across its retries: one account for an answer lost', async () => {
    const api = client();
    const before = (await api.listFiatAccounts()).data.length;
    let dropped = 0;
    dropAnswer = (method, path) => method === 'POST' && path === '/fiat-accounts' && dropped++ === 0;
    const { data: account } = await api.createFiatAccount({ body: { accountName: 'Once', currency: 'EUR' } });
    const attempts = sent.filter((request) => request.path === '/fiat-accounts' && request.method === 'POST');
    expect(attempts).toHaveLength(2);
    const key = attempts[0]!.headers.get('idempotency-key');
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    expect(attempts[1]!.headers.get('idempotency-key')).toBe(key);
    expect((await api.listFiatAccounts()).data.length).toBe(before + 1);
    expect((await api.getFiatAccount({ params: { path: { id: account.id } } })).data.account_name).toBe('Once');
  });

  it('uses the Idempotency-Key it is given, so a retry of the caller’s own is safe too', async () => {
    const api = client();
    const idempotencyKey = crypto.randomUUID();
    const first = await api.createFiatAccount({ body: { accountName: 'Mine', currency: 'EUR' }, idempotencyKey });
    const second = await api.createFiatAccount({ body: { accountName: 'Mine', currency: 'EUR' }, idempotencyKey });
    expect(second.data.id).toBe(first.data.id);
  });

  it('never repeats POST /payments after an ambiguous failure, and finds the payment by its reference', async () => {
    const api = client();
    const from = await fundedAccount(api);
    const { data: to } = await api.createFiatAccount({ body: { accountName: 'To', currency: 'EUR' } });
    dropAnswer = (method, path) => method === 'POST' && path === '/payments';
    const reference = `ambiguous-${crypto.randomUUID()}`;
    const failure = await api.createPayment({ body: { fromAccountId: from.id, toAccountId: to.id, amount: 5, currency: 'EUR', reference } }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CustomerApiConnectionError);
    expect(String((failure as Error).message)).toMatch(/not retried/);
    expect(sent.filter((request) => request.path === '/payments' && request.method === 'POST')).toHaveLength(1);
    expect(sent.some((request) => request.headers.has('idempotency-key') && request.path === '/payments')).toBe(false);
    dropAnswer = () => false;
    const found = await api.findPayments(reference);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ reference, amount: '5.00' });
  });

  it('retries a 429 after Retry-After, whatever the request', async () => {
    const limited = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: '2' }, clock: t.clock });
    try {
      const customer = await limited.createCustomer('Limited');
      await limited.app.listen({ host: '127.0.0.1', port: 0 });
      const api = client({ apiKey: customer.key, baseUrl: `http://127.0.0.1:${(limited.app.server.address() as AddressInfo).port}` });
      for (let call = 0; call < 3; call += 1) await api.listFiatAccounts();
      const statuses = sent.filter((request) => request.path === '/fiat-accounts').map((request) => request.status);
      expect(statuses).toEqual([200, 200, 429, 200]);
      expect(slept).toEqual([1000]);
    } finally {
      await limited.close();
    }
  });

  it('rejects with a typed error from the envelope, with the request id', async () => {
    const api = client();
    const error = await api.getPayment({ params: { path: { id: crypto.randomUUID() } } }).catch((failure: unknown) => failure);
    expect(error).toBeInstanceOf(CustomerApiError);
    const refused = error as CustomerApiError;
    expect(refused).toMatchObject({ status: 404, code: 'NOT_FOUND' });
    expect(refused.requestId).toMatch(/.+/);
    expect(refused.requestId).toBe(sent.at(-1)!.requestId);
    const invalid = await api.createFiatAccount({ body: { accountName: '', currency: 'EUR' } }).catch((failure: unknown) => failure as CustomerApiError);
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(sent.filter((request) => request.path === '/fiat-accounts')).toHaveLength(1);
  });

  it('reads the flat unsupported-version answer as a typed error too', async () => {
    const api = client({ apiVersion: 'v9' as 'v1' });
    const error = await api.listFiatAccounts().catch((failure: unknown) => failure as CustomerApiError);
    expect(error).toMatchObject({ status: 400, code: 'UNSUPPORTED_API_VERSION' });
  });

  it('pages through GET /transactions by itself', async () => {
    const customer = await t.createCustomer('Pager');
    const api = client({ apiKey: customer.key });
    const from = await fundedAccount(api);
    const { data: to } = await api.createFiatAccount({ body: { accountName: 'To', currency: 'EUR' } });
    for (let index = 0; index < 5; index += 1) {
      await api.createPayment({ body: { fromAccountId: from.id, toAccountId: to.id, amount: 1, currency: 'EUR', reference: `page-${index}` } });
    }
    const total = (await api.listTransactions({ params: { query: { limit: 1 } } })).meta.pagination.total;
    const seen: string[] = [];
    for await (const transaction of api.paginate('listTransactions', { params: { query: { limit: 2 } } })) seen.push(transaction.id);
    expect(total).toBeGreaterThanOrEqual(6);
    expect(seen).toHaveLength(total);
    expect(new Set(seen).size).toBe(total);
    expect(sent.filter((request) => request.path === '/transactions').length).toBe(1 + Math.ceil(total / 2));
  });

  it('verifies a delivered webhook with the subscription’s secret, and refuses one that was tampered with', async () => {
    // The signature's timestamp is the server's clock, which the tests above moved: verification reads real time.
    t.clock.set(new Date());
    const api = client();
    const { data: subscription } = await api.createWebhook({ body: { url: receiver.url(), eventTypes: ['fiat_account.created'] } });
    await api.createFiatAccount({ body: { accountName: 'Announced', currency: 'EUR' } });
    await deliverDue(t);
    await receiver.waitFor(1);
    const delivery = receiver.received.find((received) => received.body.includes('"Announced"'));
    const event = verifyWebhook(delivery!.body, delivery!.headers, subscription.signing_secret);
    expect(event).toMatchObject({ type: 'fiat_account.created', data: { account_name: 'Announced' } });
    expect(() => verifyWebhook(delivery!.body.replace('Announced', 'Tampered'), delivery!.headers, subscription.signing_secret)).toThrow(WebhookVerificationError);
  });
});
