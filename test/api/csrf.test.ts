import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { installAuthentication } from '../../src/http/auth.js';
import { installCsrfProtection } from '../../src/http/csrf.js';
import { installErrorHandling } from '../../src/http/error-handler.js';
import { ApiKeyService } from '../../src/modules/api-keys/service.js';
import { CsrfTokenService } from '../../src/modules/csrf-tokens/service.js';
import type { Storage } from '../../src/storage/database.js';
import { masterKeysFor, ServerSecrets } from '../../src/storage/server-secrets.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const isoPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const hourMs = 3_600_000;
const validBody = { accountName: 'x', currency: 'EUR' };

function expectCsrfRefused(response: LightMyRequestResponse): void {
  expect(response.statusCode).toBe(403);
  expect(response.json()).toEqual({ error: { code: 'CSRF_TOKEN_INVALID', message: expect.any(String), details: {} } });
}

describe('CSRF tokens', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
  });
  afterAll(async () => t.close());

  const fetchToken = async (key: string) => {
    const response = await t.request({ url: '/csrf-token', key });
    expect(response.statusCode).toBe(200);
    return response.json().data as { csrf_token: string; expires_at: string };
  };
  const createAccount = (key: string, csrf?: string) =>
    t.request({ method: 'POST', url: '/fiat-accounts', key, body: validBody, ...(csrf !== undefined ? { csrf } : {}) });
  const accountCount = async (key: string) => (await t.request({ url: '/fiat-accounts', key })).json().data.length as number;

  describe('GET /csrf-token', () => {
    it('needs an API key (401 without one)', async () => {
      const response = await t.request({ url: '/csrf-token' });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHENTICATED');
      const bad = await t.request({ url: '/csrf-token', key: `sk_test_${randomBytes(32).toString('base64url')}` });
      expect(bad.statusCode).toBe(401);
      expect(bad.body).toBe(response.body);
    });

    it('returns { data: { csrf_token: 64 lowercase hex, expires_at } } and nothing else', async () => {
      const response = await t.request({ url: '/csrf-token', key: alice.key });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body)).toEqual(['data']);
      expect(Object.keys(body.data).sort()).toEqual(['csrf_token', 'expires_at']);
      expect(body.data.csrf_token).toMatch(/^[0-9a-f]{64}$/);
      expect(body.data.expires_at).toMatch(isoPattern);
    });

    it('gives tokens that live between one and two hours, depending on when in the hour they are issued', async () => {
      const now = t.clock.now().getTime();
      const hourStart = Math.ceil(now / hourMs) * hourMs + hourMs;
      t.clock.set(new Date(hourStart));
      const early = await fetchToken(alice.key);
      expect(new Date(early.expires_at).getTime() - hourStart).toBe(2 * hourMs);
      t.clock.set(new Date(hourStart + hourMs - 1));
      const late = await fetchToken(alice.key);
      expect(new Date(late.expires_at).getTime() - (hourStart + hourMs - 1)).toBe(hourMs + 1);
    });

    it('gives different keys different tokens', async () => {
      const other = await t.createKey(alice.id);
      expect((await fetchToken(alice.key)).csrf_token).not.toBe((await fetchToken(other.key)).csrf_token);
    });
  });

  describe('writes', () => {
    it('refuses a POST without X-CSRF-Token with 403 CSRF_TOKEN_INVALID and writes nothing', async () => {
      const before = await accountCount(alice.key);
      expectCsrfRefused(await createAccount(alice.key));
      expect(await accountCount(alice.key)).toBe(before);
    });

    it.each([
      ['an empty token', ''],
      ['63 hex characters', 'a'.repeat(63)],
      ['65 hex characters', 'a'.repeat(65)],
      ['64 characters that are not all hex', `${'a'.repeat(63)}g`],
      ['64 non-hex characters', 'z'.repeat(64)],
      ['a well-formed token nobody issued', 'ab'.repeat(32)],
    ])('refuses %s with 403', async (_label, token) => {
      expectCsrfRefused(await createAccount(alice.key, token));
    });

    it('refuses a valid token with one extra character, or one character short', async () => {
      const { csrf_token } = await fetchToken(alice.key);
      expectCsrfRefused(await createAccount(alice.key, `${csrf_token}0`));
      expectCsrfRefused(await createAccount(alice.key, csrf_token.slice(1)));
    });

    it('refuses the token of another key of the same customer', async () => {
      const other = await t.createKey(alice.id);
      const { csrf_token } = await fetchToken(other.key);
      expectCsrfRefused(await createAccount(alice.key, csrf_token));
    });

    it('refuses the token of another customer’s key', async () => {
      const { csrf_token } = await fetchToken(bob.key);
      expectCsrfRefused(await createAccount(alice.key, csrf_token));
    });

    it('accepts a write with a valid token (201) and the account exists afterwards', async () => {
      const before = await accountCount(alice.key);
      const { csrf_token } = await fetchToken(alice.key);
      const response = await createAccount(alice.key, csrf_token);
      expect(response.statusCode).toBe(201);
      expect(await accountCount(alice.key)).toBe(before + 1);
    });

    it('accepts the same token for several writes while it is valid', async () => {
      const { csrf_token } = await fetchToken(alice.key);
      expect((await createAccount(alice.key, csrf_token)).statusCode).toBe(201);
      expect((await createAccount(alice.key, csrf_token)).statusCode).toBe(201);
    });

    it('accepts a token in upper-case hex (hex is case-insensitive)', async () => {
      const { csrf_token } = await fetchToken(alice.key);
      expect((await createAccount(alice.key, csrf_token.toUpperCase())).statusCode).toBe(201);
    });

    it('binds the token to the key, not to the header the key came in', async () => {
      const { csrf_token } = await fetchToken(alice.key);
      const response = await t.request({
        method: 'POST',
        url: '/fiat-accounts',
        headers: { authorization: `Bearer ${alice.key}`, 'x-csrf-token': csrf_token },
        body: validBody,
      });
      expect(response.statusCode).toBe(201);
    });

    it('does not need a token for GET requests, and ignores a bad one there', async () => {
      expect((await t.request({ url: '/fiat-accounts', key: alice.key })).statusCode).toBe(200);
      expect((await t.request({ url: '/fiat-accounts', key: alice.key, csrf: 'not-a-token' })).statusCode).toBe(200);
      expect((await t.request({ url: '/csrf-token', key: alice.key })).statusCode).toBe(200);
    });

    it('answers a write without a key with 401, not 403', async () => {
      const response = await t.request({ method: 'POST', url: '/fiat-accounts', body: validBody });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHENTICATED');
      const { csrf_token } = await fetchToken(alice.key);
      const withToken = await t.request({ method: 'POST', url: '/fiat-accounts', csrf: csrf_token, body: validBody });
      expect(withToken.statusCode).toBe(401);
    });

    it('ends a key’s tokens when the key is revoked (401, the key is checked first)', async () => {
      const { key, id } = await t.createKey(alice.id);
      const { csrf_token } = await fetchToken(key);
      expect((await createAccount(key, csrf_token)).statusCode).toBe(201);
      await new ApiKeyService(t.storage, t.clock, 'sandbox', t.app.caches).revoke(id);
      expect((await createAccount(key, csrf_token)).statusCode).toBe(401);
    });

    it('is accepted by a second app instance sharing the database', async () => {
      // A non-owning view: closing the second app must not close the first app's database.
      const shared: Storage = { ...t.storage, close: async () => {} };
      const second = await buildApp(t.config, { storage: shared, clock: t.clock });
      try {
        const { csrf_token } = await fetchToken(alice.key);
        const response = await second.inject({
          method: 'POST',
          url: '/fiat-accounts',
          headers: { 'x-api-key': alice.key, 'x-csrf-token': csrf_token },
          payload: validBody,
        });
        expect(response.statusCode).toBe(201);
      } finally {
        await second.close();
      }
    });
  });

  describe('every write method', () => {
    // The API has no PATCH or DELETE route yet, so the real authentication and CSRF hooks are mounted on a small
    // app with one route per method, on the same database and secret as the real app.
    let probe: FastifyInstance;
    beforeAll(async () => {
      probe = Fastify();
      installErrorHandling(probe);
      // No refused-authentication limit here: refusals are answered as they are.
      const refusalsAsThey = async (_request: unknown, _reply: unknown, error: unknown) => error;
      installAuthentication(probe, new ApiKeyService(t.storage, t.clock, 'sandbox', t.app.caches), refusalsAsThey);
      installCsrfProtection(probe, new CsrfTokenService(await (await ServerSecrets.open(t.storage, masterKeysFor(t.config, t.storage.dialect), t.clock)).get('csrf'), t.clock), refusalsAsThey);
      for (const method of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const) {
        probe.route({ method, url: '/probe', handler: async () => ({ ok: true }) });
      }
      await probe.ready();
    });
    afterAll(async () => probe.close());

    it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as const)('refuses %s without a token and accepts it with one', async (method) => {
      const without = await probe.inject({ method, url: '/probe', headers: { 'x-api-key': alice.key } });
      expectCsrfRefused(without);
      const { csrf_token } = await fetchToken(alice.key);
      const malformed = await probe.inject({ method, url: '/probe', headers: { 'x-api-key': alice.key, 'x-csrf-token': csrf_token.slice(1) } });
      expectCsrfRefused(malformed);
      const foreign = await probe.inject({ method, url: '/probe', headers: { 'x-api-key': alice.key, 'x-csrf-token': (await fetchToken(bob.key)).csrf_token } });
      expectCsrfRefused(foreign);
      const withToken = await probe.inject({ method, url: '/probe', headers: { 'x-api-key': alice.key, 'x-csrf-token': csrf_token } });
      expect(withToken.statusCode).toBe(200);
    });

    it('lets GET through without a token', async () => {
      expect((await probe.inject({ method: 'GET', url: '/probe', headers: { 'x-api-key': alice.key } })).statusCode).toBe(200);
    });
  });

  describe('expiry', () => {
    it('accepts a token until just before expires_at and refuses it from expires_at on', async () => {
      const { csrf_token, expires_at } = await fetchToken(alice.key);
      const expiresAt = new Date(expires_at).getTime();
      t.clock.set(new Date(expiresAt - 1));
      expect((await createAccount(alice.key, csrf_token)).statusCode).toBe(201);
      t.clock.set(new Date(expiresAt));
      expectCsrfRefused(await createAccount(alice.key, csrf_token));
    });

    it('refuses a token more than two hours after it was issued, while a fresh one works', async () => {
      const { csrf_token } = await fetchToken(alice.key);
      t.clock.advance(2 * hourMs + 1000);
      expectCsrfRefused(await createAccount(alice.key, csrf_token));
      const fresh = await fetchToken(alice.key);
      expect(fresh.csrf_token).not.toBe(csrf_token);
      expect((await createAccount(alice.key, fresh.csrf_token)).statusCode).toBe(201);
    });
  });
});
