import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { businessBody, individualBody } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import type { LightMyRequestResponse } from 'fastify';

/**
 * Requests that fail before a route is found, or in the body decoder, are answered like every other error: the
 * envelope, X-Request-Id and the security headers (docs/errors.md "Before routing").
 */
describe('errors before routing', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let port: number;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => t.close());

  const expectEnveloped = (response: LightMyRequestResponse, status: number, code: string) => {
    expect(response.statusCode).toBe(status);
    expect(response.json()).toEqual({ error: { code, message: expect.any(String), details: expect.anything() } });
    expect(response.headers['x-request-id']).toEqual(expect.any(String));
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-content-type-options']).toBe('nosniff');
  };

  /** What the server answers to raw bytes on a socket, as text. */
  const raw = (bytes: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
      socket.setTimeout(5000, () => socket.destroy());
    });

  it('answers a path segment longer than any id with 400 VALIDATION_ERROR in the envelope, not the router’s 414', async () => {
    for (const key of [undefined, alice.key]) {
      expectEnveloped(await t.request({ url: `/payees/${'a'.repeat(101)}`, key }), 400, 'VALIDATION_ERROR');
    }
  });

  it.each([
    ['a path segment longer than any id', `/v2/payees/${'a'.repeat(101)}`, {}, 'v2'],
    ['a path that cannot be decoded', '/v1/payees/%E0%A4%A', {}, 'v1'],
    ['a header-selected version', `/payees/${'a'.repeat(101)}`, { 'x-api-version': ' V2 ' }, 'v2'],
    ['no version (the default)', '/payees/%E0%A4%A', {}, 'v1'],
    ['the path over a disagreeing header', '/v1/payees/%E0%A4%A', { 'x-api-version': 'v2' }, 'v1'],
  ])('carries X-API-Version on a 400 raised before routing: %s', async (_label, url, headers, version) => {
    const response = await t.request({ url, headers });
    expectEnveloped(response, 400, 'VALIDATION_ERROR');
    expect(response.headers['x-api-version']).toBe(version);
  });

  it('answers an unsupported version before looking at a malformed path, with the flat 400 and its echo', async () => {
    for (const [url, headers] of [[`/v3/payees/${'a'.repeat(101)}`, {}], ['/payees/%E0%A4%A', { 'x-api-version': 'v9' }]] as const) {
      const response = await t.request({ url, headers });
      expect(response.statusCode).toBe(400);
      expect(typeof response.json().error).toBe('string');
      expect(response.headers['x-api-version']).toBe(url.startsWith('/v3') ? 'v3' : 'v9');
    }
  });

  it('carries X-API-Version on a request Node cannot parse when its request line or header names a version', async () => {
    const answers = [
      ['GET /v2/health HTTP/1.1\r\nHost: x\r\nthis header has no colon\r\n\r\n', 'v2'],
      ['GET /health HTTP/1.1\r\nHost: x\r\nX-API-Version: v2\r\nthis header has no colon\r\n\r\n', 'v2'],
      ['GET /health HTTP/1.1\r\nHost: x\r\nthis header has no colon\r\n\r\n', 'v1'],
      ['GET /v9/health HTTP/1.1\r\nHost: x\r\nthis header has no colon\r\n\r\n', undefined],
    ] as const;
    for (const [bytes, version] of answers) {
      const answer = await raw(bytes);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      const header = /^x-api-version: (\S+)\r$/im.exec(answer)?.[1];
      expect(header, bytes).toBe(version);
    }
  });

  it('answers a request Node cannot parse with 400 in the envelope, and one with oversized headers with 431', async () => {
    const malformed = await raw('GET /health HTTP/1.1\r\nHost: x\r\nthis header has no colon\r\n\r\n');
    expect(malformed).toMatch(/^HTTP\/1\.1 400 /);
    expect(malformed).toMatch(/x-request-id: \S+/i);
    expect(malformed).toMatch(/cache-control: no-store/i);
    expect(JSON.parse(malformed.slice(malformed.indexOf('\r\n\r\n') + 4)).error.code).toBe('VALIDATION_ERROR');

    const oversized = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nx-filler: ${'a'.repeat(20 * 1024)}\r\n\r\n`);
    expect(oversized).toMatch(/^HTTP\/1\.1 431 /);
    expect(JSON.parse(oversized.slice(oversized.indexOf('\r\n\r\n') + 4)).error.code).toBe('HEADERS_TOO_LARGE');
  });

  it('refuses a JSON body that is not UTF-8 with 400 INVALID_JSON, storing nothing', async () => {
    const before = (await t.request({ url: '/fiat-accounts', key: alice.key })).json().data.length;
    for (const bytes of [Buffer.from([0xff, 0xfe]), Buffer.from([0xed, 0xa0, 0x80])]) {
      const body = Buffer.concat([Buffer.from('{"accountName":"ab'), bytes, Buffer.from('","currency":"GBP"}')]);
      const response = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body, headers: { 'content-type': 'application/json' } });
      expectEnveloped(response, 400, 'INVALID_JSON');
      expect(response.json().error.message).toMatch(/UTF-8/);
    }
    expect((await t.request({ url: '/fiat-accounts', key: alice.key })).json().data.length).toBe(before);
  });

  it('reads a trailing slash as no slash: GET /fiat-accounts/ is the list', async () => {
    const response = await t.request({ url: '/v1/fiat-accounts/', key: alice.key });
    expect(response.statusCode).toBe(200);
    expect(Array.isArray(response.json().data)).toBe(true);
  });

  it('ignores an unknown query parameter whatever it holds, on routes with and without a query schema', async () => {
    for (const url of ['/transactions?foo=%00', '/payments?foo=%01', '/payees?foo=%00']) {
      expect((await t.request({ url, key: alice.key })).statusCode, url).toBe(200);
    }
    const known = await t.request({ url: '/transactions?status=%00', key: alice.key });
    expect(known.statusCode).toBe(400);
    expect(known.json().error.details.fields[0]).toMatchObject({ location: 'query', path: '/status', reason: expect.stringMatching(/control characters/) });
  });
});

describe('end users: sums the schema cannot see', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  it('refuses business persons owning more than 100 % together, and accepts exactly 100 %', async () => {
    const person = (businessBody().businessPersons as Array<Record<string, unknown>>)[0]!;
    const persons = (ownerships: number[]) => ownerships.map((ownership) => ({ ...person, ownership }));
    const over = await t.request({ method: 'POST', url: '/end-users/businesses', key: alice.key, csrf: true, body: businessBody({ businessPersons: persons([75, 75]) }) });
    expect(over.statusCode).toBe(400);
    expect(over.json().error.details.fields).toEqual([{ location: 'body', path: '/businessPersons', reason: expect.stringContaining('150') }]);
    const exact = await t.request({ method: 'POST', url: '/end-users/businesses', key: alice.key, csrf: true, body: businessBody({ businessPersons: persons([60, 40]) }) });
    expect(exact.statusCode, exact.body).toBe(201);
    expect((await t.request({ method: 'POST', url: '/end-users', key: alice.key, csrf: true, body: individualBody() })).statusCode).toBe(201);
  });
});
