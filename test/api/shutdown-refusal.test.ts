import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * A stopping instance (docs/operations.md "Stopping"; test/e2e/shutdown-keep-alive.test.ts runs the real signal):
 * every request still arriving is refused 503 SHUTTING_DOWN in the error envelope, with `Connection: close` and
 * Retry-After, before anything looks at it, and nothing of it is done or reserved.
 */
describe('requests arriving while the instance stops', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    csrf = await t.csrfToken(alice.key);
    t.app.refuseNewRequests();
  });
  afterAll(async () => t.close());

  it.each([
    ['a read', { url: '/fiat-accounts' }],
    ['a keyed create', { method: 'POST' as const, url: '/fiat-accounts', body: { accountName: 'Late', currency: 'EUR' }, headers: { 'idempotency-key': randomUUID() } }],
    ['readiness', { url: '/ready' }],
  ])('refuses %s with 503 SHUTTING_DOWN, Connection: close and Retry-After, doing nothing', async (_label, request) => {
    const response = await t.request({ key: alice.key, csrf, ...request });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toEqual({ error: { code: 'SHUTTING_DOWN', message: expect.any(String), details: {} } });
    expect(response.headers.connection).toBe('close');
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['x-request-id']).toEqual(expect.any(String));
    expect(await t.storage.db.selectFrom('fiat_accounts').select('id').where('customer_id', '=', alice.id).execute()).toEqual([]);
    expect(await t.storage.db.selectFrom('idempotency_keys').select('key').where('customer_id', '=', alice.id).execute()).toEqual([]);
  });

  it('refuses before authentication: a request without a key gets the 503 too, not 401', async () => {
    const response = await t.request({ url: '/fiat-accounts' });
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('SHUTTING_DOWN');
  });
});
