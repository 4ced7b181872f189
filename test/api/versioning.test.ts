import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { rejectedVersionEchoLengthMax } from '../../src/config/limits.js';
import { createTestApp, type RequestOptions, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { expectNoLeaks } from '../helpers/leaks.js';

/** docs/spec.md §9 (versioning) and the version-related rules of docs/spec.md §7 (rules 4 and 6). */

const unknownAccountId = '3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b';
const origin = 'https://dashboard.example';


/** docs/spec.md §7 rule 4: HTTP 400, a flat `{ error: <string> }`, and the rejected token echoed in X-API-Version. */
function expectUnsupportedVersion(response: LightMyRequestResponse, token: string): void {
  expect(response.statusCode).toBe(400);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = response.json();
  expect(Object.keys(body)).toEqual(['error']);
  expect(typeof body.error).toBe('string');
  expect(body.error).toContain(token);
  expect(body.error).toContain('v1, v2');
  expect(response.headers['x-api-version']).toBe(token);
}

describe('API versioning (spec §9)', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let aliceCsrf: string;
  let accountId: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { CORS_ORIGINS: origin } });
    alice = await t.createCustomer('Alice Ltd');
    aliceCsrf = await t.csrfToken(alice.key);
    const created = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: aliceCsrf, body: { accountName: 'Versioned', currency: 'EUR' } });
    expect(created.statusCode).toBe(201);
    accountId = created.json().data.id;
    await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: aliceCsrf, body: { accountName: 'Second', currency: 'GBP' } });
  });
  afterAll(async () => t?.close());

  const list = (url: string, headers: Record<string, string> = {}) => t.request({ url, key: alice.key, headers });

  describe('selection (rule 2)', () => {
    it.each(['v1', 'v2'])('serves the path prefix /%s/ and reports that version', async (version) => {
      const response = await list(`/${version}/fiat-accounts`);
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe(version);
    });

    it('accepts a path prefix followed directly by a query string', async () => {
      const response = await t.request({ url: `/v2/fiat-accounts/${accountId}?expand=none`, key: alice.key });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe('v2');
    });

    it.each([
      ['v1', 'v1'],
      ['v2', 'v2'],
      ['V2', 'v2'],
      ['V1', 'v1'],
      [' V2 ', 'v2'],
      ['  v1', 'v1'],
      ['v2   ', 'v2'],
    ])('selects the version from header X-API-Version %j (case ignored, whitespace trimmed) when the path has no prefix', async (header, expected) => {
      const response = await list('/fiat-accounts', { 'x-api-version': header });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe(expected);
    });

    it('defaults to v1 when neither a path prefix nor a header names a version', async () => {
      const response = await list('/fiat-accounts');
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe('v1');
    });

    it.each(['', '   '])('treats a blank X-API-Version header %j as absent and defaults to v1 (docs/decisions/0003)', async (header) => {
      const response = await list('/fiat-accounts', { 'x-api-version': header });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe('v1');
    });

    it('does not mistake a resource path that merely starts with v for a version prefix', async () => {
      // "/v1x", "/vip-accounts" and "/vault" are resource paths (unknown ones), not versions: 404 under the default version.
      for (const url of ['/v1x/fiat-accounts', '/vip-accounts', '/vault']) {
        const response = await list(url);
        expect(response.statusCode).toBe(404);
        expect(response.json().error.code).toBe('ROUTE_NOT_FOUND');
        expect(response.headers['x-api-version']).toBe('v1');
      }
    });
  });

  describe('path wins over a disagreeing header (rule 3)', () => {
    it.each([
      ['/v1', 'v9', 'v1'],
      ['/v1', 'banana', 'v1'],
      ['/v1', 'v2', 'v1'],
      ['/v2', 'v1', 'v2'],
      ['/v2', 'V3', 'v2'],
    ])('serves path %s with header %j as %s', async (prefix, header, expected) => {
      const response = await list(`${prefix}/fiat-accounts`, { 'x-api-version': header });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe(expected);
      expect(Array.isArray(response.json().data)).toBe(true);
    });

    it('rejects an unsupported path version even when the header names a supported one', async () => {
      const response = await list('/v3/fiat-accounts', { 'x-api-version': 'v1' });
      expectUnsupportedVersion(response, 'v3');
    });
  });

  describe('v2 routes through v1: /v1/x, /v2/x and /x behave the same (rule 5)', () => {
    const same = async (build: (prefix: string) => RequestOptions) => {
      const responses = await Promise.all(['', '/v1', '/v2'].map((prefix) => t.request(build(prefix))));
      const byHeader = await t.request({ ...build(''), headers: { ...build('').headers, 'x-api-version': 'v2' } });
      for (const response of [...responses, byHeader]) {
        expect(response.statusCode).toBe(responses[0]?.statusCode);
        expect(response.body).toBe(responses[0]?.body);
        expect(response.headers['content-type']).toBe(responses[0]?.headers['content-type']);
      }
      return responses[0] as LightMyRequestResponse;
    };

    it('returns identical list bodies', async () => {
      const response = await same((prefix) => ({ url: `${prefix}/fiat-accounts`, key: alice.key }));
      expect(response.statusCode).toBe(200);
      expect(response.json().data.length).toBeGreaterThanOrEqual(2);
    });

    it('returns identical single-record bodies', async () => {
      const response = await same((prefix) => ({ url: `${prefix}/fiat-accounts/${accountId}`, key: alice.key }));
      expect(response.json().data.id).toBe(accountId);
    });

    it('returns identical error bodies for an unknown id, a malformed id, an unknown route and a missing key', async () => {
      expect((await same((prefix) => ({ url: `${prefix}/fiat-accounts/${unknownAccountId}`, key: alice.key }))).statusCode).toBe(404);
      expect((await same((prefix) => ({ url: `${prefix}/fiat-accounts/not-a-uuid`, key: alice.key }))).statusCode).toBe(400);
      expect((await same((prefix) => ({ url: `${prefix}/no-such-resource`, key: alice.key }))).statusCode).toBe(404);
      expect((await same((prefix) => ({ url: `${prefix}/fiat-accounts` }))).statusCode).toBe(401);
    });

    it('returns identical validation failures for the same invalid body', async () => {
      const response = await same((prefix) => ({
        method: 'POST',
        url: `${prefix}/fiat-accounts`,
        key: alice.key,
        csrf: aliceCsrf,
        body: { accountName: '', currency: 'JPY', extra: 1 },
      }));
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
    });

    it('creates the same record shape through every version', async () => {
      const shapes: string[][] = [];
      for (const [url, headers] of [
        ['/fiat-accounts', {}],
        ['/v1/fiat-accounts', {}],
        ['/v2/fiat-accounts', {}],
        ['/fiat-accounts', { 'x-api-version': 'v2' }],
      ] as const) {
        const response = await t.request({ method: 'POST', url, key: alice.key, csrf: aliceCsrf, headers, body: { accountName: `Shape ${url}`, currency: 'USD' } });
        expect(response.statusCode).toBe(201);
        const account = response.json().data;
        expect(account.account_name).toBe(`Shape ${url}`);
        shapes.push(Object.keys(account).sort());
        // The record created through one version is readable through the others.
        expect((await t.request({ url: `/v1/fiat-accounts/${account.id}`, key: alice.key })).json().data).toEqual(account);
        expect((await t.request({ url: `/v2/fiat-accounts/${account.id}`, key: alice.key })).json().data).toEqual(account);
      }
      for (const shape of shapes) expect(shape).toEqual(shapes[0]);
    });
  });

  describe('X-API-Version on every response after resolution (rule 4)', () => {
    type Case = [label: string, status: number, build: (prefix: string, headers: Record<string, string>) => RequestOptions];
    const cases: Case[] = [
      ['200 list', 200, (p, headers) => ({ url: `${p}/fiat-accounts`, key: alice.key, headers })],
      ['201 create', 201, (p, headers) => ({ method: 'POST', url: `${p}/fiat-accounts`, key: alice.key, csrf: aliceCsrf, headers, body: { accountName: 'Stamped', currency: 'EUR' } })],
      ['200 public health check', 200, (p, headers) => ({ url: `${p}/health`, headers })],
      ['401 missing key', 401, (p, headers) => ({ url: `${p}/fiat-accounts`, headers })],
      ['401 unknown key', 401, (p, headers) => ({ url: `${p}/fiat-accounts`, key: `sk_test_${'x'.repeat(43)}`, headers })],
      ['403 missing CSRF token', 403, (p, headers) => ({ method: 'POST', url: `${p}/fiat-accounts`, key: alice.key, headers, body: { accountName: 'x', currency: 'EUR' } })],
      ['404 unknown route', 404, (p, headers) => ({ url: `${p}/no-such-resource`, key: alice.key, headers })],
      ['405 another method on a known path', 405, (p, headers) => ({ method: 'DELETE', url: `${p}/fiat-accounts`, key: alice.key, headers })],
      ['405 OPTIONS that is not a preflight', 405, (p, headers) => ({ method: 'OPTIONS', url: `${p}/fiat-accounts`, headers: { ...headers, origin } })],
      ['404 unknown id', 404, (p, headers) => ({ url: `${p}/fiat-accounts/${unknownAccountId}`, key: alice.key, headers })],
      ['400 validation', 400, (p, headers) => ({ method: 'POST', url: `${p}/fiat-accounts`, key: alice.key, csrf: aliceCsrf, headers, body: { accountName: '', currency: 'EUR' } })],
      ['400 malformed JSON', 400, (p, headers) => ({ method: 'POST', url: `${p}/fiat-accounts`, key: alice.key, csrf: aliceCsrf, headers: { ...headers, 'content-type': 'application/json' }, body: '{"accountName":' })],
      ['413 body too large', 413, (p, headers) => ({ method: 'POST', url: `${p}/fiat-accounts`, key: alice.key, csrf: aliceCsrf, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify({ accountName: 'a'.repeat(70_000), currency: 'EUR' }) })],
      ['415 non-JSON body', 415, (p, headers) => ({ method: 'POST', url: `${p}/fiat-accounts`, key: alice.key, csrf: aliceCsrf, headers: { ...headers, 'content-type': 'text/plain' }, body: 'accountName=x' })],
    ];
    const selections: [label: string, prefix: string, headers: Record<string, string>, expected: string][] = [
      ['the default', '', {}, 'v1'],
      ['path /v1', '/v1', {}, 'v1'],
      ['path /v2', '/v2', {}, 'v2'],
      ['header v2', '', { 'x-api-version': 'v2' }, 'v2'],
      ['path /v1 over header v2', '/v1', { 'x-api-version': 'v2' }, 'v1'],
    ];

    describe.each(cases)('%s', (_label, status, build) => {
      it.each(selections)('carries the version selected by %s', async (_selection, prefix, headers, expected) => {
        const response = await t.request(build(prefix, headers));
        expect(response.statusCode).toBe(status);
        expect(response.headers['x-api-version']).toBe(expected);
      });
    });

    it('exposes X-API-Version to browsers on a cross-origin request', async () => {
      const response = await t.request({ url: '/v2/fiat-accounts', key: alice.key, headers: { origin } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-api-version']).toBe('v2');
      expect(String(response.headers['access-control-expose-headers']).toLowerCase().split(/\s*,\s*/)).toContain('x-api-version');
    });

    it('sends exactly one X-API-Version value', async () => {
      const response = await list('/v2/fiat-accounts', { 'x-api-version': 'v1' });
      expect(typeof response.headers['x-api-version']).toBe('string');
      expect(response.headers['x-api-version']).toBe('v2');
    });
  });

  describe('unsupported versions (spec §7 rule 4)', () => {
    it.each([
      ['/v3/fiat-accounts', 'v3'],
      ['/V3/fiat-accounts', 'V3'],
      ['/v0/fiat-accounts', 'v0'],
      ['/v10/fiat-accounts', 'v10'],
      ['/v9/no-such-resource', 'v9'],
      ['/v3', 'v3'],
    ])('answers path %s with the flat 400 body naming %s and v1, v2, and echoes the token', async (url, token) => {
      expectUnsupportedVersion(await list(url), token);
    });

    it.each([
      ['v9', 'v9'],
      ['V3', 'V3'],
      ['v10', 'v10'],
      ['banana', 'banana'],
      ['v1.0', 'v1.0'],
      ['2', '2'],
      [' v3 ', 'v3'],
    ])('answers an unsupported header version %j with the flat 400 body and echoes the token', async (header, token) => {
      expectUnsupportedVersion(await list('/fiat-accounts', { 'x-api-version': header }), token);
    });

    it('rejects an unsupported version before authentication, so no key is needed to learn the supported versions', async () => {
      expectUnsupportedVersion(await t.request({ url: '/v3/fiat-accounts' }), 'v3');
      expectUnsupportedVersion(await t.request({ url: '/fiat-accounts', headers: { 'x-api-version': 'banana' } }), 'banana');
      expectUnsupportedVersion(await t.request({ url: '/fiat-accounts', key: 'not-a-key', headers: { 'x-api-version': 'v9' } }), 'v9');
    });

    it('rejects an unsupported version of an unknown route with 400, not 404', async () => {
      expectUnsupportedVersion(await t.request({ url: '/v4/no-such-resource' }), 'v4');
      expectUnsupportedVersion(await t.request({ url: '/no-such-resource', headers: { 'x-api-version': 'v4' } }), 'v4');
    });

    it('does not run the operation of a request with an unsupported version', async () => {
      const before = (await list('/fiat-accounts')).json().data.length;
      const requests: { url: string; headers: Record<string, string> }[] = [
        { url: '/v3/fiat-accounts', headers: {} },
        { url: '/fiat-accounts', headers: { 'x-api-version': 'v3' } },
      ];
      for (const request of requests) {
        const response = await t.request({ method: 'POST', ...request, key: alice.key, csrf: aliceCsrf, body: { accountName: 'Must not exist', currency: 'EUR' } });
        expectUnsupportedVersion(response, 'v3');
      }
      expect((await list('/fiat-accounts')).json().data.length).toBe(before);
    });

    it('rejects an unsupported version even where the request would otherwise fail for another reason', async () => {
      // Version resolution comes first: a bad body, a non-JSON type or a missing CSRF token do not hide it.
      const malformed = await t.request({ method: 'POST', url: '/v3/fiat-accounts', key: alice.key, csrf: aliceCsrf, headers: { 'content-type': 'application/json' }, body: '{' });
      expectUnsupportedVersion(malformed, 'v3');
      const textBody = await t.request({ method: 'POST', url: '/v3/fiat-accounts', key: alice.key, csrf: aliceCsrf, headers: { 'content-type': 'text/plain' }, body: 'x' });
      expectUnsupportedVersion(textBody, 'v3');
      const noCsrf = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, headers: { 'x-api-version': 'v7' }, body: { accountName: 'x', currency: 'EUR' } });
      expectUnsupportedVersion(noCsrf, 'v7');
    });

    it('cuts an overlong rejected token in the echo instead of failing', async () => {
      const token = `v${'9'.repeat(200)}`;
      const response = await list('/fiat-accounts', { 'x-api-version': token });
      expect(response.statusCode).toBe(400);
      expect(typeof response.json().error).toBe('string');
      expect(response.json().error).toContain('v1, v2');
      const echoed = String(response.headers['x-api-version']);
      expect(echoed.length).toBeGreaterThan(0);
      expect(echoed.length).toBeLessThanOrEqual(rejectedVersionEchoLengthMax);
      expect(token.startsWith(echoed)).toBe(true);
    });

    it('is the only failure without the error envelope: a supported version never gets the flat body', async () => {
      const response = await list('/v1/fiat-accounts/not-a-uuid');
      expect(response.statusCode).toBe(400);
      expect(typeof response.json().error).toBe('object');
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
    });
  });

  describe('another method on a known path: 405 with Allow, after version resolution', () => {
    it.each([
      ['DELETE', '/fiat-accounts', 'GET, HEAD, POST', 'v1'],
      ['DELETE', '/v2/fiat-accounts', 'GET, HEAD, POST', 'v2'],
      ['PUT', `/v1/webhooks/${unknownAccountId}`, 'GET, HEAD, PATCH, DELETE', 'v1'],
      ['POST', `/v2/fiat-accounts/${unknownAccountId}`, 'GET, HEAD', 'v2'],
      ['GET', `/webhooks/${unknownAccountId}/test`, 'POST', 'v1'],
      ['HEAD', `/v2/webhooks/${unknownAccountId}/replay`, 'POST', 'v2'],
      ['DELETE', '/v2/health', 'GET, HEAD', 'v2'],
      ['POST', '/openapi.json', 'GET, HEAD', 'v1'],
    ] as const)('answers %s %s with 405, Allow: %s and X-API-Version %s, the same with or without a key', async (method, url, allow, version) => {
      const withKey = await t.request({ method, url, key: alice.key, csrf: aliceCsrf });
      const withoutKey = await t.request({ method, url });
      for (const response of [withKey, withoutKey]) {
        expect(response.statusCode).toBe(405);
        expect(response.headers.allow).toBe(allow);
        expect(response.headers['x-api-version']).toBe(version);
        if (method !== 'HEAD') expect(response.json()).toEqual({ error: { code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining(method), details: { allowed: allow.split(', ') } } });
      }
      expect(withoutKey.body).toBe(withKey.body);
    });

    it('keeps 404 for a path no method serves, and the flat 400 for an unsupported version', async () => {
      for (const method of ['GET', 'DELETE', 'OPTIONS'] as const) {
        const response = await t.request({ method, url: '/v2/no-such-resource', key: alice.key });
        expect(response.statusCode, method).toBe(404);
        expect(response.headers.allow).toBeUndefined();
        expect(response.headers['x-api-version']).toBe('v2');
      }
      expectUnsupportedVersion(await t.request({ method: 'DELETE', url: '/v3/fiat-accounts' }), 'v3');
    });
  });

  describe('OPTIONS without Access-Control-Request-Method is not a preflight', () => {
    it.each([
      ['/fiat-accounts', {}, 'v1'],
      ['/v2/fiat-accounts', {}, 'v2'],
      ['/fiat-accounts', { 'x-api-version': 'v2' }, 'v2'],
      [`/v1/webhooks/${unknownAccountId}`, { origin }, 'v1'],
    ] as const)('answers OPTIONS %s %j with 405, Allow and X-API-Version %s, without a key', async (url, headers, version) => {
      const response = await t.request({ method: 'OPTIONS', url, headers });
      expect(response.statusCode).toBe(405);
      expect(response.headers['x-api-version']).toBe(version);
      expect(response.headers.allow).toMatch(/^GET, HEAD/);
      expect(response.json().error.code).toBe('METHOD_NOT_ALLOWED');
      expect(response.headers['access-control-allow-methods']).toBeUndefined();
    });

    it('answers OPTIONS of an unknown path with 404 and X-API-Version, and of an unsupported version with the flat 400', async () => {
      const unknown = await t.request({ method: 'OPTIONS', url: '/v2/no-such-resource' });
      expect(unknown.statusCode).toBe(404);
      expect(unknown.headers['x-api-version']).toBe('v2');
      expectUnsupportedVersion(await t.request({ method: 'OPTIONS', url: '/v3/fiat-accounts' }), 'v3');
    });
  });

  describe('CORS preflight carries no X-API-Version (rule 4)', () => {
    const preflight = (url: string, headers: Record<string, string> = {}) =>
      t.request({
        method: 'OPTIONS',
        url,
        headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-api-key, x-csrf-token', ...headers },
      });

    it.each(['/fiat-accounts', '/v1/fiat-accounts', '/v2/fiat-accounts', `/v2/fiat-accounts/${accountId}`, '/v3/fiat-accounts', '/V9/anything', '/no-such-resource'])(
      'answers a preflight of %s with 204 and no X-API-Version, without a key',
      async (url) => {
        const response = await preflight(url);
        expect(response.statusCode).toBe(204);
        expect(response.headers['x-api-version']).toBeUndefined();
        expect(response.headers['access-control-allow-origin']).toBe(origin);
        expect(String(response.headers['access-control-allow-methods'])).toContain('POST');
        expect(response.body).toBe('');
      },
    );

    it.each(['v1', 'v2', 'banana', 'v9'])('ignores X-API-Version %j on a preflight', async (header) => {
      const response = await preflight('/fiat-accounts', { 'x-api-version': header });
      expect(response.statusCode).toBe(204);
      expect(response.headers['x-api-version']).toBeUndefined();
    });

    it('lets browsers send X-API-Version on the actual request', async () => {
      const response = await preflight('/fiat-accounts', { 'access-control-request-headers': 'x-api-version' });
      expect(String(response.headers['access-control-allow-headers']).toLowerCase().split(/\s*,\s*/)).toContain('x-api-version');
    });
  });
});

describe('last-resort 500 (spec §7 rule 6, §9 rule 4)', () => {
  let t: TestApp;
  let key: string;
  /** What the database driver says once closed; the client must never see it. */
  let driverMessage: string;

  beforeAll(async () => {
    // Its own app: the test breaks the database under it.
    t = await createTestApp();
    key = (await t.createCustomer('Doomed')).key;
    expect((await t.request({ url: '/fiat-accounts', key })).statusCode).toBe(200);
    await t.storage.close();
    driverMessage = await t.storage.db
      .selectFrom('api_keys')
      .select('id')
      .execute()
      .then(() => '', (error: Error) => error.message);
    expect(driverMessage).not.toBe('');
  });
  // The storage is closed already; closing the app closes it again, which must not fail (or the schema would stay).
  afterAll(async () => t?.close());

  it.each([
    ['no version', '/fiat-accounts', {}],
    ['path /v1', '/v1/fiat-accounts', {}],
    ['path /v2', '/v2/fiat-accounts', {}],
    ['header v2', '/fiat-accounts', { 'x-api-version': 'v2' }],
  ])('answers a catastrophic failure (%s) with 500 INTERNAL_ERROR in the envelope and no X-API-Version', async (_label, url, headers) => {
    const response = await t.request({ url, key, headers });
    expect(response.statusCode).toBe(500);
    expect(response.headers['x-api-version']).toBeUndefined();
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const body = response.json();
    expect(Object.keys(body)).toEqual(['error']);
    expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
    expect(body.error.code).toBe('INTERNAL_ERROR');
    expect(typeof body.error.message).toBe('string');
    expect(response.body).not.toContain(driverMessage);
    expectNoLeaks(response.body);
  });

  it('still identifies the failed request by X-Request-Id', async () => {
    const response = await t.request({ url: '/fiat-accounts', key, headers: { 'x-request-id': 'trace-500-abc' } });
    expect(response.statusCode).toBe(500);
    expect(response.headers['x-request-id']).toBe('trace-500-abc');
  });

  it('still rejects an unsupported version with the flat 400, which needs no database', async () => {
    expectUnsupportedVersion(await t.request({ url: '/v3/fiat-accounts', key }), 'v3');
  });

  it('keeps X-API-Version on a handled failure of the same database (readiness 503 is not the last resort)', async () => {
    const response = await t.request({ url: '/v2/ready' });
    expect(response.statusCode).toBe(503);
    expect(response.json().error.code).toBe('NOT_READY');
    expect(response.headers['x-api-version']).toBe('v2');
    expectNoLeaks(response.body);
  });
});

describe('CORS origins (CORS_ORIGINS)', () => {
  const other = 'https://elsewhere.example';
  let sameOriginOnly: TestApp;
  let listed: TestApp;
  let anyOrigin: TestApp;
  let key: string;

  beforeAll(async () => {
    sameOriginOnly = await createTestApp();
    listed = await createTestApp({ env: { CORS_ORIGINS: ` ${origin}, https://admin.example:8443 ` } });
    anyOrigin = await createTestApp({ env: { CORS_ORIGINS: '*' } });
    key = (await sameOriginOnly.createCustomer('Alice Ltd')).key;
  });
  afterAll(async () => {
    await sameOriginOnly?.close();
    await listed?.close();
    await anyOrigin?.close();
  });

  const preflight = (t: TestApp, from: string) =>
    t.request({ method: 'OPTIONS', url: '/fiat-accounts', headers: { origin: from, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-api-key' } });

  it('allows no other origin by default: a cross-origin request and its preflight get no Access-Control-Allow-Origin', async () => {
    for (const from of [origin, other, 'null']) {
      const response = await sameOriginOnly.request({ url: '/fiat-accounts', key, headers: { origin: from } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['access-control-allow-origin'], from).toBeUndefined();
      const answer = await preflight(sameOriginOnly, from);
      expect(answer.statusCode).toBe(204);
      expect(answer.headers['access-control-allow-origin'], from).toBeUndefined();
      expect(answer.headers['x-api-version']).toBeUndefined();
    }
  });

  it('allows exactly the listed origins when configured, telling caches that the answer varies by Origin', async () => {
    for (const from of [origin, 'https://admin.example:8443']) {
      const response = await listed.request({ url: '/health', headers: { origin: from } });
      expect(response.headers['access-control-allow-origin']).toBe(from);
      expect(String(response.headers.vary).toLowerCase()).toContain('origin');
      expect((await preflight(listed, from)).headers['access-control-allow-origin']).toBe(from);
    }
    for (const from of [other, 'https://admin.example', `${origin}.evil.example`]) {
      expect((await listed.request({ url: '/health', headers: { origin: from } })).headers['access-control-allow-origin'], from).toBeUndefined();
      expect((await preflight(listed, from)).headers['access-control-allow-origin'], from).toBeUndefined();
    }
  });

  it('allows any origin with CORS_ORIGINS=*', async () => {
    expect((await anyOrigin.request({ url: '/health', headers: { origin: other } })).headers['access-control-allow-origin']).toBe(other);
  });

  it('refuses to start with an entry that is not an origin, which no browser would ever send', () => {
    for (const entry of ['https://app.example/', 'https://app.example/path', 'app.example', 'https://App.example', 'ftp://app.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: entry }), entry).toThrow(ConfigError);
    }
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: `${origin},https://b.example` }).corsOrigins).toEqual([origin, 'https://b.example']);
  });
});
