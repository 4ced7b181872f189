import { randomInt } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { Storage } from '../../src/storage/database.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** The limits' windows: one second per key and per address; in memory they are timed by the app's clock. */
const windowMs = 1000;
const limit = 3;

/** A 429 of a limit of `limit` in a window of `windowSeconds`. */
function expectRateLimited(response: LightMyRequestResponse, windowSeconds = 1): void {
  expect(response.statusCode).toBe(429);
  expect(response.json()).toEqual({
    error: { code: 'RATE_LIMITED', message: expect.any(String), details: { limit, retry_after_seconds: expect.any(Number) } },
  });
  const retryAfter = Number(response.headers['retry-after']);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(response.json().error.details.retry_after_seconds).toBe(retryAfter);
  expect(response.headers['ratelimit-limit']).toBe(String(limit));
  expect(response.headers['ratelimit-remaining']).toBe('0');
}

describe('rate limiting (RATE_LIMIT_PER_SECOND=3)', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: String(limit) } });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  /** Each test gets its own key, so its one-second window starts fresh. */
  const freshKey = async () => (await t.createKey(alice.id)).key;
  const list = (key: string) => t.request({ url: '/fiat-accounts', key });

  it('answers the 4th request within a second from one key with 429 RATE_LIMITED and Retry-After', async () => {
    const key = await freshKey();
    for (let i = 0; i < limit; i += 1) expect((await list(key)).statusCode).toBe(200);
    const limited = await list(key);
    expectRateLimited(limited);
    expect(limited.headers['x-api-version']).toBe('v1');
    expect(limited.headers['x-request-id']).toBeTruthy();
    expectRateLimited(await list(key));
  });

  it('sends RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset on successful responses', async () => {
    const key = await freshKey();
    const remaining: string[] = [];
    for (let i = 0; i < limit; i += 1) {
      const response = await list(key);
      expect(response.statusCode).toBe(200);
      expect(response.headers['ratelimit-limit']).toBe(String(limit));
      const reset = Number(response.headers['ratelimit-reset']);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(0);
      expect(reset).toBeLessThanOrEqual(1);
      remaining.push(String(response.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);
  });

  it('counts per API key: another key of the same customer is not limited', async () => {
    const first = await freshKey();
    const second = await freshKey();
    for (let i = 0; i < limit; i += 1) await list(first);
    expectRateLimited(await list(first));
    const other = await list(second);
    expect(other.statusCode).toBe(200);
    expect(other.headers['ratelimit-remaining']).toBe(String(limit - 1));
  });

  it('counts every route of a key together', async () => {
    const key = await freshKey();
    expect((await t.request({ url: '/csrf-token', key })).statusCode).toBe(200);
    expect((await list(key)).statusCode).toBe(200);
    expect((await t.request({ url: '/fiat-accounts/3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b', key })).statusCode).toBe(404);
    expectRateLimited(await t.request({ url: '/csrf-token', key }));
  });

  it('does not run a rate-limited write', async () => {
    const key = await freshKey();
    const before = (await list(key)).json().data.length as number;
    const csrf = await t.csrfToken(key);
    expect((await list(key)).statusCode).toBe(200);
    const response = await t.request({ method: 'POST', url: '/fiat-accounts', key, csrf, body: { accountName: 'limited', currency: 'EUR' } });
    expectRateLimited(response);
    // Read back with another key of the same customer rather than waiting for the window.
    expect((await list(await freshKey())).json().data.length).toBe(before);
  });

  it('does not limit /health or /ready', async () => {
    for (let i = 0; i < limit * 3; i += 1) {
      const health = await t.request({ url: '/health' });
      expect(health.statusCode).toBe(200);
      expect(health.headers['ratelimit-limit']).toBeUndefined();
      expect((await t.request({ url: '/ready' })).statusCode).toBe(200);
    }
  });

  it('lets the key through again once the one-second window has passed', async () => {
    const key = await freshKey();
    for (let i = 0; i < limit; i += 1) await list(key);
    expectRateLimited(await list(key));
    t.clock.advance(windowMs);
    const again = await list(key);
    expect(again.statusCode).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe(String(limit - 1));
  });
});

describe('rate limiting per client address, before authentication (RATE_LIMIT_PER_IP_PER_SECOND=3)', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: '100', RATE_LIMIT_PER_IP_PER_SECOND: String(limit) } });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  it('answers 429 to the 4th bad-key request within a second from one address, before looking at the key', async () => {
    const address = '198.51.100.7';
    for (let i = 0; i < limit; i += 1) expect((await t.request({ url: '/fiat-accounts', key: 'sk_test_wrong', remoteAddress: address })).statusCode).toBe(401);
    const limited = await t.request({ url: '/fiat-accounts', key: 'sk_test_wrong', remoteAddress: address });
    expectRateLimited(limited);
    expect(limited.json().error.message).toMatch(/address/);
    // A valid key from the same address is limited too: the address is over its budget.
    expectRateLimited(await t.request({ url: '/fiat-accounts', key: alice.key, remoteAddress: address }));
    // Another address is not.
    expect((await t.request({ url: '/fiat-accounts', key: alice.key, remoteAddress: '198.51.100.8' })).statusCode).toBe(200);
  });

  it('counts requests without any key, and leaves /health and /ready alone', async () => {
    const address = '198.51.100.9';
    for (let i = 0; i < limit; i += 1) expect((await t.request({ url: '/payees', remoteAddress: address })).statusCode).toBe(401);
    expectRateLimited(await t.request({ url: '/payees', remoteAddress: address }));
    expect((await t.request({ url: '/health', remoteAddress: address })).statusCode).toBe(200);
    expect((await t.request({ url: '/ready', remoteAddress: address })).statusCode).toBe(200);
  });
});

describe('refused authentications per client address (RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE=3)', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: '100', RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: String(limit) } });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  it('past 3 refused authentications this minute, refuses further ones with 429 while a valid key from the address keeps working', async () => {
    const address = '203.0.113.20';
    const refusals = [
      await t.request({ url: '/fiat-accounts', key: 'sk_test_guess', remoteAddress: address }),
      await t.request({ url: '/fiat-accounts', remoteAddress: address }),
      await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, body: { accountName: 'x', currency: 'EUR' }, remoteAddress: address }),
    ];
    expect(refusals.map((response) => response.statusCode)).toEqual([401, 401, 403]);
    // Behind a load balancer or a NAT one address is many clients: the good ones are not refused for the bad one.
    for (let i = 0; i < limit + 2; i += 1) expect((await t.request({ url: '/fiat-accounts', key: alice.key, remoteAddress: address })).statusCode).toBe(200);
    const csrf = await t.csrfToken(alice.key);
    const write = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: { accountName: 'From the NAT', currency: 'EUR' }, remoteAddress: address });
    expect(write.statusCode).toBe(201);
    for (const refused of [
      await t.request({ url: '/fiat-accounts', key: 'sk_test_guess', remoteAddress: address }),
      await t.request({ url: '/fiat-accounts', remoteAddress: address }),
      await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, body: { accountName: 'x', currency: 'EUR' }, remoteAddress: address }),
    ]) {
      expectRateLimited(refused, 60);
      expect(refused.json().error.message).toMatch(/refused authentications/);
    }
  });

  it('lets exactly 3 of 12 concurrent refusals from one address through, and answers the other 9 with 429', async () => {
    const address = '203.0.113.30';
    const responses = await Promise.all(Array.from({ length: 12 }, () => t.request({ url: '/payees', key: 'sk_test_guess', remoteAddress: address })));
    const statuses = responses.map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - limit);
  });

  it('counts an IPv6 client by its /64: rotating addresses inside it does not reset the count', async () => {
    for (let i = 1; i <= limit; i += 1) {
      expect((await t.request({ url: '/payees', key: 'sk_test_guess', remoteAddress: `2001:db8:1:2::${i}` })).statusCode).toBe(401);
    }
    expect((await t.request({ url: '/payees', key: 'sk_test_guess', remoteAddress: '2001:db8:1:2:ffff::9' })).statusCode).toBe(429);
    expect((await t.request({ url: '/payees', key: alice.key, remoteAddress: '2001:db8:1:2:ffff::9' })).statusCode).toBe(200);
    expect((await t.request({ url: '/payees', key: 'sk_test_guess', remoteAddress: '2001:db8:1:3::1' })).statusCode).toBe(401);
  });
});

describe('browser pages, limited per client address (RATE_LIMIT_PER_SECOND=3)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: String(limit) } });
  });
  afterAll(async () => t.close());

  const page = (url: string, remoteAddress: string) => t.app.inject({ url, remoteAddress });

  it.each(['/dashboard/sign-in', `/onboarding/${'a'.repeat(43)}`])('counts two IPv6 addresses of one /64 together on %s, and another /64 apart', async (url) => {
    // Each run its own /64s: the window is a real second, shared by the two pages' runs otherwise.
    const prefix = url.startsWith('/dashboard') ? '2001:db8:10' : '2001:db8:20';
    const first = [];
    for (let i = 1; i <= limit; i += 1) first.push((await page(url, `${prefix}:1::${i}`)).statusCode);
    expect(first.every((status) => status !== 429)).toBe(true);
    const sameSubnet = await page(url, `${prefix}:1:ffff:ffff:ffff:ffff`);
    expect(sameSubnet.statusCode).toBe(429);
    expect(sameSubnet.headers['content-type']).toMatch(/^text\/html/);
    expect(Number(sameSubnet.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await page(url, `${prefix}:2::1`)).statusCode).not.toBe(429);
  });
});

describe('rate limiting by default (RATE_LIMIT_PER_SECOND unset)', () => {
  it('is on by default and allows bursts well above 3 per second', async () => {
    const t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: '' } });
    try {
      const customer = await t.createCustomer();
      for (let i = 0; i < 10; i += 1) {
        const response = await t.request({ url: '/fiat-accounts', key: customer.key });
        expect(response.statusCode).toBe(200);
        expect(response.headers['ratelimit-limit']).toBe(String(t.config.rateLimitPerSecond));
      }
      expect(t.config.rateLimitPerSecond).toBeGreaterThan(10);
    } finally {
      await t.close();
    }
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!redisUrl)('rate limiting shared through Redis (TEST_REDIS_URL)', () => {
  let t: TestApp;
  let second: FastifyInstance;
  let redis: Redis;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: String(limit), RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: String(limit), REDIS_URL: redisUrl! } });
    // A second instance on the same database and Redis, as behind a load balancer. The storage view is
    // non-owning: closing the second app must not close the first app's database.
    const shared: Storage = { ...t.storage, close: async () => {} };
    second = await buildApp(t.config, { storage: shared, clock: t.clock });
    redis = new Redis(redisUrl!);
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
    await redis?.quit();
  });

  const listOn = (app: FastifyInstance, key: string) => app.inject({ method: 'GET', url: '/fiat-accounts', headers: { 'x-api-key': key } });

  it('shares one key’s limit between two app instances', async () => {
    const { key } = await t.createKey(alice.id);
    expect((await listOn(t.app, key)).statusCode).toBe(200);
    expect((await listOn(second, key)).statusCode).toBe(200);
    const third = await listOn(t.app, key);
    expect(third.statusCode).toBe(200);
    expect(third.headers['ratelimit-remaining']).toBe('0');
    expectRateLimited(await listOn(second, key));
    expectRateLimited(await listOn(t.app, key));
  });

  it('keeps the counter in Redis under the key id, expiring within the one-second window', async () => {
    const { key, id } = await t.createKey(alice.id);
    await listOn(t.app, key);
    await listOn(second, key);
    const redisKey = `customer-api-rate-limit:key:${id}`;
    expect(await redis.get(redisKey)).toBe('2');
    const ttl = await redis.pttl(redisKey);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(1000);
  });

  it('lets exactly 3 of 12 concurrent refusals from one address through, spread over both instances', async () => {
    // The count lives a minute in Redis, which other runs of this file share: an address of this run alone.
    const address = `198.18.${randomInt(256)}.${randomInt(1, 255)}`;
    const refusals = Array.from({ length: 12 }, (_, i) =>
      (i % 2 === 0 ? t.app : second).inject({ method: 'GET', url: '/payees', headers: { 'x-api-key': 'sk_test_guess' }, remoteAddress: address }),
    );
    const statuses = (await Promise.all(refusals)).map((response) => response.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - limit);
    const { key } = await t.createKey(alice.id);
    expect((await second.inject({ method: 'GET', url: '/payees', headers: { 'x-api-key': key }, remoteAddress: address })).statusCode).toBe(200);
  });

  it('lets the key through again on both instances after the window', async () => {
    const { key, id } = await t.createKey(alice.id);
    for (let i = 0; i < limit; i += 1) await listOn(t.app, key);
    expectRateLimited(await listOn(second, key));
    // Redis times the shared window by its own clock: wait (bounded) until it has dropped the key's counter.
    const redisKey = `customer-api-rate-limit:key:${id}`;
    await vi.waitFor(async () => expect(await redis.exists(redisKey)).toBe(0), { timeout: 5 * windowMs, interval: 25 });
    expect((await listOn(second, key)).statusCode).toBe(200);
    expect((await listOn(t.app, key)).statusCode).toBe(200);
  });
});
