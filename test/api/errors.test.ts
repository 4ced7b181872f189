import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bodyLimitDefaultBytes } from '../../src/config/limits.js';
import { errorStatusByCode, type ErrorCode } from '../../src/errors.js';
import { createTestApp, type RequestOptions, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { expectNoLeaks } from '../helpers/leaks.js';

/** docs/spec.md §7 (errors): one envelope for every failure, a closed catalogue of codes, nothing internal in a body. */

const unknownAccountId = '3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b';


/** docs/spec.md §7 rule 1: `{ error: { code, message, details } }`, with the status the catalogue gives the code. */
function expectEnvelope(response: LightMyRequestResponse, status: number, code: ErrorCode) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
  expect(body.error.code).toBe(code);
  expect(errorStatusByCode[code]).toBe(status);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.length).toBeGreaterThan(0);
  expect(body.error.details).not.toBeNull();
  expect(typeof body.error.details).toBe('object');
  expectNoLeaks(response.body);
  return body.error as { code: string; message: string; details: Record<string, unknown> };
}

interface FieldError {
  location: string;
  path: string;
  reason: string;
}

describe('error envelope and catalogue (spec §7)', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let csrf: string;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    csrf = await t.csrfToken(alice.key);
  });
  afterAll(async () => t?.close());

  const accountCount = async () => (await t.request({ url: '/fiat-accounts', key: alice.key })).json().data.length as number;
  const post = (body: string | Readable, contentType?: string, url = '/fiat-accounts') =>
    t.request({ method: 'POST', url, key: alice.key, csrf, headers: contentType === undefined ? {} : { 'content-type': contentType }, body });
  const validBody = JSON.stringify({ accountName: 'Valid', currency: 'EUR' });

  describe('malformed JSON → 400 INVALID_JSON', () => {
    it.each([
      ['a truncated object', '{"accountName": "x",'],
      ['unquoted names', '{accountName: "x", currency: "EUR"}'],
      ['single quotes', "{'accountName': 'x'}"],
      ['trailing garbage', `${validBody}x`],
      ['a bare word', 'hello'],
      ['NaN', 'NaN'],
      ['a trailing comma', '{"accountName": "x", "currency": "EUR",}'],
    ])('refuses %s with INVALID_JSON in the envelope, without the parser message', async (_label, raw) => {
      const before = await accountCount();
      expectEnvelope(await post(raw, 'application/json'), 400, 'INVALID_JSON');
      expect(await accountCount()).toBe(before);
    });

    it('reads an empty body declared as JSON as {}: VALIDATION_ERROR naming the required fields', async () => {
      const error = expectEnvelope(await post('', 'application/json'), 400, 'VALIDATION_ERROR');
      expect((error.details.fields as FieldError[]).map((field) => field.path).sort()).toEqual(['/accountName', '/currency']);
    });

    it('refuses a body that smuggles __proto__ or constructor.prototype, writing nothing', async () => {
      const before = await accountCount();
      for (const raw of [
        '{"accountName":"x","currency":"EUR","__proto__":{"isAdmin":true}}',
        '{"accountName":"x","currency":"EUR","constructor":{"prototype":{"isAdmin":true}}}',
      ]) {
        const response = await post(raw, 'application/json');
        expect(response.statusCode).toBe(400);
        expectEnvelope(response, 400, response.json().error.code);
        expect(['INVALID_JSON', 'VALIDATION_ERROR']).toContain(response.json().error.code);
      }
      expect(await accountCount()).toBe(before);
      expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    });
  });

  describe('unknown routes → 404 ROUTE_NOT_FOUND', () => {
    it.each([
      ['GET', '/no-such-resource'],
      ['GET', '/v1/no-such-resource'],
      ['POST', '/no-such-resource'],
      ['GET', '/fiat-accounts/00000000-0000-4000-8000-000000000000/children'],
      ['GET', '/'],
    ] as const)('answers %s %s with ROUTE_NOT_FOUND', async (method, url) => {
      const error = expectEnvelope(await t.request({ method, url, key: alice.key }), 404, 'ROUTE_NOT_FOUND');
      expect(error.message).not.toContain('?');
    });

    it.each([
      ['DELETE', '/fiat-accounts', ['GET', 'HEAD', 'POST']],
      ['PUT', '/fiat-accounts', ['GET', 'HEAD', 'POST']],
      ['PATCH', '/fiat-accounts', ['GET', 'HEAD', 'POST']],
      ['DELETE', `/fiat-accounts/${unknownAccountId}`, ['GET', 'HEAD']],
      ['POST', `/fiat-accounts/${unknownAccountId}`, ['GET', 'HEAD']],
      ['POST', '/csrf-token', ['GET', 'HEAD']],
      ['POST', '/health', ['GET', 'HEAD']],
    ] as const)('answers another method on a known path (%s %s) with 405 METHOD_NOT_ALLOWED naming the allowed ones', async (method, url, allowed) => {
      const response = await t.request({ method, url, key: alice.key, csrf, body: {} });
      const error = expectEnvelope(response, 405, 'METHOD_NOT_ALLOWED');
      expect(error.details).toEqual({ allowed });
      expect(response.headers.allow).toBe(allowed.join(', '));
    });

    it.each([
      ['malformed JSON', '{"a":', 'application/json'],
      ['a non-JSON content type', 'a=1', 'application/x-www-form-urlencoded'],
      ['an oversized body', 'x'.repeat(bodyLimitDefaultBytes + 1), 'application/json'],
    ])('answers a known path with another method with 405 even when its body has %s', async (_label, raw, contentType) => {
      const response = await t.request({ method: 'PUT', url: '/v1/fiat-accounts', key: alice.key, csrf, headers: { 'content-type': contentType }, body: raw });
      expectEnvelope(response, 405, 'METHOD_NOT_ALLOWED');
      expect(response.headers.allow).toBe('GET, HEAD, POST');
    });

    it.each([
      ['malformed JSON', '{"a":', 'application/json'],
      ['an empty JSON body', '', 'application/json'],
      ['a non-JSON content type', 'a=1', 'application/x-www-form-urlencoded'],
      ['an oversized body', 'x'.repeat(bodyLimitDefaultBytes + 1), 'application/json'],
    ])('answers an unknown route with ROUTE_NOT_FOUND even when its body has %s (docs/errors.md, order of checks)', async (_label, raw, contentType) => {
      const response = await t.request({ method: 'POST', url: '/v1/no-such-resource', key: alice.key, csrf, headers: { 'content-type': contentType }, body: raw });
      expectEnvelope(response, 404, 'ROUTE_NOT_FOUND');
      expect(response.headers['x-api-version']).toBe('v1');
    });

    it('answers an unknown route the same with or without a key', async () => {
      const withKey = await t.request({ url: '/no-such-resource', key: alice.key });
      const withoutKey = await t.request({ url: '/no-such-resource' });
      expectEnvelope(withoutKey, 404, 'ROUTE_NOT_FOUND');
      expect(withoutKey.body).toBe(withKey.body);
    });

    it('does not echo the query string of an unknown route', async () => {
      const response = await t.request({ url: '/no-such-resource?secret=hunter2', key: alice.key });
      expectEnvelope(response, 404, 'ROUTE_NOT_FOUND');
      expect(response.body).not.toContain('hunter2');
    });

    it('tells an unknown route (ROUTE_NOT_FOUND) from an unknown id (NOT_FOUND)', async () => {
      expectEnvelope(await t.request({ url: `/fiat-accounts/${unknownAccountId}`, key: alice.key }), 404, 'NOT_FOUND');
    });
  });

  describe(`bodies over the route limit (${bodyLimitDefaultBytes} bytes by default) → 413 PAYLOAD_TOO_LARGE`, () => {
    /** A valid-JSON body of exactly `bytes` bytes whose accountName is too long for validation. */
    const bodyOfBytes = (bytes: number) => {
      const skeleton = JSON.stringify({ accountName: '', currency: 'EUR' });
      const raw = JSON.stringify({ accountName: 'a'.repeat(bytes - skeleton.length), currency: 'EUR' });
      expect(Buffer.byteLength(raw)).toBe(bytes);
      return raw;
    };

    it('refuses a body one byte over the limit with 413, and writes nothing', async () => {
      const before = await accountCount();
      expectEnvelope(await post(bodyOfBytes(bodyLimitDefaultBytes + 1), 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
      expect(await accountCount()).toBe(before);
    });

    it('reads a body of exactly the limit (and then refuses it for validation, not size)', async () => {
      const error = expectEnvelope(await post(bodyOfBytes(bodyLimitDefaultBytes), 'application/json'), 400, 'VALIDATION_ERROR');
      expect(error.details.fields).toEqual([expect.objectContaining({ location: 'body', path: '/accountName' })]);
    });

    it('counts bytes, not characters: multi-byte text over the limit is refused', async () => {
      // 30,000 three-byte characters are 90,000 bytes although the string has fewer characters than the limit.
      const raw = JSON.stringify({ accountName: '€'.repeat(30_000), currency: 'EUR' });
      expect(raw.length).toBeLessThan(bodyLimitDefaultBytes);
      expectEnvelope(await post(raw, 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
    });

    it('refuses an oversized body sent without Content-Length (chunked)', async () => {
      const chunks = Array.from({ length: 20 }, (_, index) => (index === 0 ? '{"accountName":"' : 'a'.repeat(5000)));
      const response = await post(Readable.from(chunks), 'application/json');
      expectEnvelope(response, 413, 'PAYLOAD_TOO_LARGE');
    });

    it('refuses an oversized body that is not even JSON by size first', async () => {
      expectEnvelope(await post('x'.repeat(bodyLimitDefaultBytes * 2), 'application/json'), 413, 'PAYLOAD_TOO_LARGE');
    });
  });

  describe('non-JSON request bodies → 415 UNSUPPORTED_MEDIA_TYPE', () => {
    it.each([
      ['text/plain', 'accountName=x&currency=EUR'],
      ['text/plain; charset=utf-8', validBody],
      ['application/x-www-form-urlencoded', 'accountName=x&currency=EUR'],
      ['multipart/form-data; boundary=XyZ', '--XyZ\r\nContent-Disposition: form-data; name="accountName"\r\n\r\nx\r\n--XyZ--\r\n'],
      ['application/xml', '<account><accountName>x</accountName></account>'],
      ['application/octet-stream', validBody],
      ['application/jsonx', validBody],
      ['text/json', validBody],
    ])('refuses Content-Type %s with 415, and writes nothing', async (contentType, raw) => {
      const before = await accountCount();
      expectEnvelope(await post(raw, contentType), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expect(await accountCount()).toBe(before);
    });

    it('checks the content type before the size: an oversized non-JSON body is 415 (docs/errors.md, order of checks)', async () => {
      expectEnvelope(await post('x'.repeat(bodyLimitDefaultBytes * 2), 'text/plain'), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it('refuses a body sent without any Content-Type with 415', async () => {
      expectEnvelope(await post(validBody), 415, 'UNSUPPORTED_MEDIA_TYPE');
    });

    it.each(['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'Application/JSON'])(
      'accepts Content-Type %s',
      async (contentType) => {
        const response = await post(validBody, contentType);
        expect(response.statusCode, response.body).toBe(201);
        expect(response.json().data.account_name).toBe('Valid');
      },
    );
  });

  describe('validation errors → 400 VALIDATION_ERROR listing every failing field', () => {
    it('lists every failing body field once, each with location, path and reason', async () => {
      const error = expectEnvelope(
        await post(JSON.stringify({ accountName: 'a'.repeat(201), currency: 'JPY', ibanCountry: 'FR', linkedBusinessId: 'nope', umbrellaLinkId: 7, surprise: true }), 'application/json'),
        400,
        'VALIDATION_ERROR',
      );
      const fields = error.details.fields as FieldError[];
      expect(fields.map((field) => field.path).sort()).toEqual(['/accountName', '/currency', '/ibanCountry', '/linkedBusinessId', '/surprise', '/umbrellaLinkId']);
      for (const field of fields) {
        expect(Object.keys(field).sort()).toEqual(['location', 'path', 'reason']);
        expect(field.location).toBe('body');
        expect(field.path.startsWith('/')).toBe(true);
        expect(typeof field.reason).toBe('string');
        expect(field.reason.length).toBeGreaterThan(0);
        expectNoLeaks(field.reason);
      }
    });

    it('names missing fields by their own path with a reason saying they are required', async () => {
      const error = expectEnvelope(await post('{}', 'application/json'), 400, 'VALIDATION_ERROR');
      const fields = error.details.fields as FieldError[];
      expect(fields).toEqual(
        expect.arrayContaining([
          { location: 'body', path: '/accountName', reason: expect.stringMatching(/required/i) },
          { location: 'body', path: '/currency', reason: expect.stringMatching(/required/i) },
        ]),
      );
      expect(fields).toHaveLength(2);
    });

    it('names the allowed values of an enum in its reason', async () => {
      const error = expectEnvelope(await post(JSON.stringify({ accountName: 'x', currency: 'JPY' }), 'application/json'), 400, 'VALIDATION_ERROR');
      const [field] = error.details.fields as FieldError[];
      expect(field?.path).toBe('/currency');
      for (const currency of ['USD', 'EUR', 'GBP']) expect(field?.reason).toContain(currency);
    });

    it('reports path parameters with location params', async () => {
      const error = expectEnvelope(await t.request({ url: '/fiat-accounts/not-a-uuid', key: alice.key }), 400, 'VALIDATION_ERROR');
      expect(error.details.fields).toEqual([{ location: 'params', path: '/id', reason: expect.any(String) }]);
    });

    it('does not coerce body types: a number where a string belongs is refused', async () => {
      const error = expectEnvelope(await post(JSON.stringify({ accountName: 12345, currency: 'EUR' }), 'application/json'), 400, 'VALIDATION_ERROR');
      expect((error.details.fields as FieldError[]).map((field) => field.path)).toEqual(['/accountName']);
    });

    it.each([
      ['an array', '[]'],
      ['a string', '"text"'],
      ['a number', '42'],
      ['null', 'null'],
    ])('refuses %s as the body with VALIDATION_ERROR', async (_label, raw) => {
      expectEnvelope(await post(raw, 'application/json'), 400, 'VALIDATION_ERROR');
    });
  });

  describe('authentication, authorisation and lookups use the same envelope', () => {
    it('answers a missing, malformed, unknown or mis-schemed key with one identical 401 body', async () => {
      const responses = await Promise.all([
        t.request({ url: '/fiat-accounts' }),
        t.request({ url: '/fiat-accounts', key: 'not-a-key' }),
        t.request({ url: '/fiat-accounts', key: `sk_test_${'A'.repeat(43)}` }),
        t.request({ url: '/fiat-accounts', headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } }),
        t.request({ url: '/fiat-accounts', headers: { authorization: 'Bearer sk_test_unknown' } }),
      ]);
      for (const response of responses) {
        expectEnvelope(response, 401, 'UNAUTHENTICATED');
        expect(response.body).toBe(responses[0]?.body);
      }
    });

    it('answers a missing scope with 403 INSUFFICIENT_SCOPE', async () => {
      const readOnly = await t.createKey(alice.id, { scopes: ['payments:read'] });
      expectEnvelope(await t.request({ url: '/fiat-accounts', key: readOnly.key }), 403, 'INSUFFICIENT_SCOPE');
    });

    it('answers a write without a valid CSRF token with 403 CSRF_TOKEN_INVALID', async () => {
      const body = { accountName: 'x', currency: 'EUR' };
      expectEnvelope(await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, body }), 403, 'CSRF_TOKEN_INVALID');
      expectEnvelope(await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: 'f'.repeat(64), body }), 403, 'CSRF_TOKEN_INVALID');
      expectEnvelope(await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: 'short', body }), 403, 'CSRF_TOKEN_INVALID');
    });

    it('answers a key used from an address outside its allow-list with 403 IP_NOT_ALLOWED', async () => {
      const fenced = await t.createKey(alice.id, { allowedIps: ['10.0.0.0/8'] });
      expectEnvelope(await t.request({ url: '/fiat-accounts', key: fenced.key, remoteAddress: '192.0.2.7' }), 403, 'IP_NOT_ALLOWED');
      expect((await t.request({ url: '/fiat-accounts', key: fenced.key, remoteAddress: '10.1.2.3' })).statusCode).toBe(200);
    });

    it('answers an unknown id with 404 NOT_FOUND', async () => {
      expectEnvelope(await t.request({ url: `/fiat-accounts/${unknownAccountId}`, key: alice.key }), 404, 'NOT_FOUND');
    });
  });

  it('never shows stack traces, SQL, file paths, node_modules or framework codes in any error body', async () => {
    const requests: RequestOptions[] = [
      { url: '/fiat-accounts' },
      { url: '/fiat-accounts', key: `sk_live_${'z'.repeat(43)}` },
      { url: '/no-such-resource', key: alice.key },
      { url: '/fiat-accounts/not-a-uuid', key: alice.key },
      { url: `/fiat-accounts/${unknownAccountId}`, key: alice.key },
      { url: "/fiat-accounts/' OR 1=1 --", key: alice.key },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, body: {} },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: '{"a":', headers: { 'content-type': 'application/json' } },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: '', headers: { 'content-type': 'application/json' } },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: 'x', headers: { 'content-type': 'text/plain' } },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: 'x'.repeat(bodyLimitDefaultBytes + 10), headers: { 'content-type': 'application/json' } },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: { accountName: '\u0000', currency: "EUR'; drop table fiat_accounts; --", extra: { nested: [1] } } },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: '{"__proto__":{}}', headers: { 'content-type': 'application/json' } },
      { method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
    ];
    for (const request of requests) {
      const response = await t.request(request);
      expect(response.statusCode, `${request.method ?? 'GET'} ${request.url}`).toBeGreaterThanOrEqual(400);
      const body = response.json();
      expect(typeof body.error.code).toBe('string');
      expect(body.error.code in errorStatusByCode).toBe(true);
      expect(errorStatusByCode[body.error.code as ErrorCode]).toBe(response.statusCode);
      expectNoLeaks(response.body);
    }
  });
});

describe('429 RATE_LIMITED uses the envelope', () => {
  let t: TestApp;
  afterAll(async () => t?.close());

  it('answers requests over the per-key rate with 429 RATE_LIMITED and Retry-After', async () => {
    t = await createTestApp({ env: { RATE_LIMIT_PER_SECOND: '2' } });
    const { key } = await t.createCustomer('Busy');
    const responses = await Promise.all(Array.from({ length: 6 }, () => t.request({ url: '/fiat-accounts', key })));
    const limited = responses.filter((response) => response.statusCode === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const response of limited) {
      expectEnvelope(response, 429, 'RATE_LIMITED');
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(response.headers['x-api-version']).toBe('v1');
    }
  });
});

describe('the error catalogue agrees with docs/errors.md', () => {
  const docsPath = path.resolve(import.meta.dirname, '../../docs/errors.md');
  /** Rows like "| `VALIDATION_ERROR` | 400 | … |". */
  const rowPattern = /^\|\s*`([A-Z][A-Z0-9_]*)`\s*\|\s*(\d{3})\s*\|/gm;
  const documented = () => {
    const text = fs.readFileSync(docsPath, 'utf8');
    const rows = new Map<string, number[]>();
    for (const match of text.matchAll(rowPattern)) {
      const [, code, status] = match;
      rows.set(code as string, [...(rows.get(code as string) ?? []), Number(status)]);
    }
    return rows;
  };

  it('documents every code of errorStatusByCode with its HTTP status, once', () => {
    const rows = documented();
    for (const [code, status] of Object.entries(errorStatusByCode)) {
      expect(rows.get(code), `docs/errors.md row for ${code}`).toEqual([status]);
    }
  });

  it('documents no code that the catalogue does not have', () => {
    const rows = documented();
    expect(rows.size).toBeGreaterThan(0);
    for (const code of rows.keys()) expect(Object.keys(errorStatusByCode), `stale code ${code} in docs/errors.md`).toContain(code);
  });

  it('gives every code an error status (4xx or 5xx)', () => {
    for (const status of Object.values(errorStatusByCode)) {
      expect(status).toBeGreaterThanOrEqual(400);
      expect(status).toBeLessThan(600);
    }
  });
});
