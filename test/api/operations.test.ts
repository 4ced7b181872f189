import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveMetrics } from '../../src/http/metrics.js';
import { DashboardUserService } from '../../src/modules/dashboard-users/service.js';
import { createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const unknownAccountId = '3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b';

/** The value of one Prometheus sample line, or 0 when the series does not exist yet. */
function sample(metricsText: string, name: string, labels: Record<string, string>): number {
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.lastIndexOf('}'));
    const parsed = Object.fromEntries([...labelText.matchAll(/(\w+)="([^"]*)"/g)].map((match) => [match[1], match[2]]));
    const wanted = Object.entries(labels);
    if (wanted.length === Object.keys(parsed).length && wanted.every(([label, value]) => parsed[label] === value)) {
      return Number(line.slice(line.lastIndexOf(' ') + 1));
    }
  }
  return 0;
}

describe('operations', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  const metricsText = () => t.metrics();

  describe('X-Request-Id', () => {
    const expectGeneratedId = (response: LightMyRequestResponse) => expect(response.headers['x-request-id']).toMatch(uuidPattern);

    it('is on every response: success, 401, 403, 404 (route and resource) and the 400 version error', async () => {
      const responses: Array<[number, LightMyRequestResponse]> = [
        [200, await t.request({ url: '/fiat-accounts', key: alice.key })],
        [201, await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { accountName: 'x', currency: 'EUR' } })],
        [401, await t.request({ url: '/fiat-accounts' })],
        [403, await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, body: { accountName: 'x', currency: 'EUR' } })],
        [404, await t.request({ url: '/no-such-route' })],
        [404, await t.request({ url: `/fiat-accounts/${unknownAccountId}`, key: alice.key })],
        [400, await t.request({ url: '/v3/fiat-accounts', key: alice.key })],
        [400, await t.request({ url: '/fiat-accounts', key: alice.key, headers: { 'x-api-version': 'v9' } })],
        [200, await t.request({ url: '/health' })],
      ];
      for (const [status, response] of responses) {
        expect(response.statusCode).toBe(status);
        expectGeneratedId(response);
      }
      const ids = responses.map(([, response]) => response.headers['x-request-id']);
      expect(new Set(ids).size).toBe(ids.length);
    });

    it('echoes a sane client X-Request-Id, on success and on errors', async () => {
      for (const response of [
        await t.request({ url: '/fiat-accounts', key: alice.key, headers: { 'x-request-id': 'req-123' } }),
        await t.request({ url: '/fiat-accounts', headers: { 'x-request-id': 'req-123' } }),
        await t.request({ url: '/v3/fiat-accounts', headers: { 'x-request-id': 'req-123' } }),
      ]) {
        expect(response.headers['x-request-id']).toBe('req-123');
      }
      const uuid = '0b7c3c3e-1f7a-4b9e-8d2a-5c6e7f8a9b0c';
      expect((await t.request({ url: '/health', headers: { 'x-request-id': uuid } })).headers['x-request-id']).toBe(uuid);
      const dotted = 'trace.abc:123_x-Y';
      expect((await t.request({ url: '/health', headers: { 'x-request-id': dotted } })).headers['x-request-id']).toBe(dotted);
    });

    it('echoes an id of 128 characters and replaces one of 129', async () => {
      const max = 'a'.repeat(128);
      expect((await t.request({ url: '/health', headers: { 'x-request-id': max } })).headers['x-request-id']).toBe(max);
      expectGeneratedId(await t.request({ url: '/health', headers: { 'x-request-id': `${max}a` } }));
    });

    it.each([
      ['300 characters', 'r'.repeat(300)],
      ['spaces', 'req 123'],
      ['an empty value', ''],
      ['a newline-like control character', 'req\u0001123'],
      ['markup', '<script>alert(1)</script>'],
      ['non-ASCII letters', 'req-é'],
    ])('replaces a client id with %s by a generated one', async (_label, unsafe) => {
      const response = await t.request({ url: '/fiat-accounts', key: alice.key, headers: { 'x-request-id': unsafe } });
      expect(response.statusCode).toBe(200);
      expectGeneratedId(response);
    });
  });

  describe('response headers for customer data', () => {
    it('sends Cache-Control: no-store and X-Content-Type-Options: nosniff on data, writes and errors', async () => {
      const responses = [
        await t.request({ url: '/fiat-accounts', key: alice.key }),
        await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { accountName: 'h', currency: 'EUR' } }),
        await t.request({ url: '/csrf-token', key: alice.key }),
        await t.request({ url: '/fiat-accounts' }),
        await t.request({ url: `/fiat-accounts/${unknownAccountId}`, key: alice.key }),
        await t.request({ url: '/no-such-route' }),
        await t.request({ url: '/v3/fiat-accounts', key: alice.key }),
        await t.request({ url: '/health' }),
      ];
      for (const response of responses) {
        expect(response.headers['cache-control'], `${response.statusCode} ${response.body.slice(0, 60)}`).toBe('no-store');
        expect(response.headers['x-content-type-options']).toBe('nosniff');
      }
    });

    it('lets the public API reference be cached, still with nosniff', async () => {
      const document = await t.request({ url: '/openapi.json' });
      expect(document.headers['cache-control']).toBeUndefined();
      expect(document.headers['x-content-type-options']).toBe('nosniff');
    });
  });

  describe('health and readiness', () => {
    it('answers GET /health with 200 without a key', async () => {
      const response = await t.request({ url: '/health' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ok' });
    });

    it('answers GET /ready with 200 { status: "ready" } without a key', async () => {
      const response = await t.request({ url: '/ready' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ready' });
    });

    it('ignores a bad key on the public endpoints', async () => {
      const bad = `sk_test_${randomBytes(32).toString('base64url')}`;
      expect((await t.request({ url: '/health', key: bad })).statusCode).toBe(200);
      expect((await t.request({ url: '/ready', key: 'hello' })).statusCode).toBe(200);
    });

    it('answers through the version prefixes too', async () => {
      expect((await t.request({ url: '/v1/health' })).json()).toEqual({ status: 'ok' });
      expect((await t.request({ url: '/v2/ready' })).json()).toEqual({ status: 'ready' });
    });
  });

  describe('metrics', () => {
    it('are not served on the API port: GET /metrics there is an unknown route', async () => {
      const response = await t.request({ url: '/metrics' });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('ROUTE_NOT_FOUND');
    });

    it('are served as Prometheus text by the metrics listener, which answers nothing else', async () => {
      const text = await metricsText();
      expect(text).toContain('# TYPE http_requests_total counter');
      expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    });

    it('the listener sends nosniff and no-store, 405 to other methods, 404 elsewhere, and with a token asks for it', async () => {
      const listener = await serveMetrics(t.app, { host: '127.0.0.1', port: 0, token: 's3cret' });
      try {
        const base = `http://127.0.0.1:${listener.address.port}`;
        expect((await fetch(`${base}/metrics`)).status).toBe(401);
        expect((await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
        const answered = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer s3cret' } });
        expect(answered.status).toBe(200);
        expect(answered.headers.get('x-content-type-options')).toBe('nosniff');
        expect(answered.headers.get('cache-control')).toBe('no-store');
        expect((await fetch(`${base}/metrics`, { method: 'POST' })).status).toBe(405);
        expect((await fetch(`${base}/other`)).status).toBe(404);
      } finally {
        await listener.close();
      }
    });

    it('counts requests by method, route pattern and status code', async () => {
      const labels = { method: 'GET', route: '/fiat-accounts/:id', status_code: '404' };
      const before = sample(await metricsText(), 'http_requests_total', labels);
      for (const prefix of ['', '/v1', '/v2']) {
        expect((await t.request({ url: `${prefix}/fiat-accounts/${unknownAccountId}`, key: alice.key })).statusCode).toBe(404);
      }
      const text = await metricsText();
      expect(sample(text, 'http_requests_total', labels)).toBe(before + 3);
      expect(sample(text, 'http_request_duration_seconds_count', labels)).toBe(before + 3);
      expect(sample(text, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(before + 3);
    });

    it('labels by the route pattern, never the raw id or path', async () => {
      const created = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { accountName: 'm', currency: 'EUR' } });
      const id = created.json().data.id as string;
      expect((await t.request({ url: `/fiat-accounts/${id}`, key: alice.key })).statusCode).toBe(200);
      const randomPath = `/nothing-here-${randomBytes(4).toString('hex')}`;
      expect((await t.request({ url: randomPath })).statusCode).toBe(404);
      const text = await metricsText();
      expect(text).toMatch(/http_requests_total\{[^}]*route="\/fiat-accounts\/:id"[^}]*status_code="200"[^}]*\} [1-9]/);
      expect(text).toMatch(/http_request_duration_seconds_bucket\{[^}]*route="\/fiat-accounts\/:id"[^}]*status_code="200"[^}]*\}/);
      expect(sample(text, 'http_requests_total', { method: 'POST', route: '/fiat-accounts', status_code: '201' })).toBeGreaterThanOrEqual(1);
      expect(text).not.toContain(id);
      expect(text).not.toContain(randomPath);
    });

    it('records refused requests under their route with their status', async () => {
      const labels = { method: 'GET', route: '/fiat-accounts', status_code: '401' };
      const before = sample(await metricsText(), 'http_requests_total', labels);
      await t.request({ url: '/fiat-accounts' });
      expect(sample(await metricsText(), 'http_requests_total', labels)).toBe(before + 1);
    });
  });
});

describe('readiness failures', () => {
  it('answers GET /ready with 503 NOT_READY naming a pending migration, while /health stays 200', async () => {
    const t = await createTestApp();
    try {
      // Forget the newest applied migration, as if the code were newer than the database.
      const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name desc`.execute(t.storage.db);
      const last = rows[0]!.name;
      await sql`delete from kysely_migration where name = ${last}`.execute(t.storage.db);
      const response = await t.request({ url: '/ready' });
      expect(response.statusCode).toBe(503);
      expect(response.json()).toEqual({
        error: { code: 'NOT_READY', message: expect.any(String), details: { reason: 'migrations_pending', pending_migrations: [last] } },
      });
      expect((await t.request({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });

  it('answers GET /ready with 503 NOT_READY when the database does not answer, while /health stays 200', async () => {
    const t = await createTestApp();
    try {
      await t.storage.db.destroy();
      const response = await t.request({ url: '/ready' });
      expect(response.statusCode).toBe(503);
      expect(response.json().error.code).toBe('NOT_READY');
      expect((await t.request({ url: '/health' })).json()).toEqual({ status: 'ok' });
    } finally {
      await t.close();
    }
  });
});

describe('log redaction', () => {
  let t: TestApp;
  const chunks: string[] = [];
  const logStream = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      chunks.push(chunk.toString());
      callback();
    },
  });

  beforeAll(async () => {
    t = await createTestApp({ env: { LOG_LEVEL: 'info' }, logStream });
  });
  afterAll(async () => t.close());

  it('never writes API keys or CSRF tokens to the logs, and marks where they were', async () => {
    const customer = await t.createCustomer('Logged Ltd');
    const csrf = await t.csrfToken(customer.key);
    const body = { accountName: 'Logged', currency: 'EUR' };
    const unknownKey = `sk_test_${randomBytes(32).toString('base64url')}`;
    const responses = [
      await t.request({ url: '/fiat-accounts', key: customer.key, headers: { 'x-request-id': 'log-req-1' } }),
      await t.request({ url: '/fiat-accounts', headers: { authorization: `Bearer ${customer.key}` } }),
      await t.request({ method: 'POST', url: '/fiat-accounts', key: customer.key, csrf, body }),
      await t.request({ method: 'POST', url: '/fiat-accounts', headers: { authorization: `Bearer ${customer.key}`, 'x-csrf-token': csrf }, body }),
      await t.request({ url: '/fiat-accounts', key: unknownKey }),
      await t.request({ method: 'POST', url: '/fiat-accounts', key: customer.key, csrf: csrf.toUpperCase(), body }),
    ];
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200, 201, 201, 401, 201]);

    const logText = chunks.join('');
    // The logs are really there: the request was logged, with its id and headers.
    expect(logText).toContain('log-req-1');
    expect(logText).toContain('/fiat-accounts');
    expect(logText).toContain('[redacted]');
    for (const secret of [customer.key, customer.key.slice('sk_test_'.length), csrf, csrf.toUpperCase(), unknownKey]) {
      expect(logText).not.toContain(secret);
    }
    const lines = logText.trim().split('\n').map((line) => JSON.parse(line) as { req?: { headers?: Record<string, string> } });
    const loggedHeaders = lines.flatMap((line) => (line.req?.headers ? [line.req.headers] : []));
    expect(loggedHeaders.length).toBeGreaterThanOrEqual(responses.length);
    for (const headers of loggedHeaders) {
      for (const name of ['x-api-key', 'authorization', 'x-csrf-token']) {
        if (name in headers) expect(headers[name]).toBe('[redacted]');
      }
    }
    expect(loggedHeaders.some((headers) => headers.authorization === '[redacted]')).toBe(true);
    expect(loggedHeaders.some((headers) => headers['x-api-key'] === '[redacted]')).toBe(true);
    expect(loggedHeaders.some((headers) => headers['x-csrf-token'] === '[redacted]')).toBe(true);
  });

  it('never writes the tokens of sign-in links or hosted onboarding links, which are in their URLs', async () => {
    const customer = await t.createCustomer('Linked Ltd');
    const users = new DashboardUserService(t.storage, t.clock, { publicUrl: t.config.publicUrl, idleMs: t.config.dashboardSessionIdleMs, maxMs: t.config.dashboardSessionMaxMs });
    const signInPath = new URL((await users.create(customer.id, 'logged@example.com')).sign_in_url).pathname;
    const endUser = await createIndividual(t, customer, { verificationMethod: 'hosted_kyc' });
    const onboardingPath = new URL((await t.request({ url: `/end-users/${endUser.id}/onboarding-link`, key: customer.key })).json().data.url).pathname;
    for (const url of [signInPath, onboardingPath, `${onboardingPath}/documents?x=1`]) await t.app.inject({ url });

    const logText = chunks.join('');
    for (const path of [signInPath, onboardingPath]) expect(logText).not.toContain(path.split('/').pop());
    expect(logText).toContain('"url":"/dashboard/link/[redacted]"');
    expect(logText).toContain('"url":"/onboarding/[redacted]"');
    expect(logText).toContain('"url":"/onboarding/[redacted]/documents?x=1"');
  });

  /** The URLs the request log wrote since `from` (an index into the captured chunks). */
  const loggedUrls = (from: number) =>
    chunks
      .slice(from)
      .join('')
      .trim()
      .split('\n')
      .flatMap((line) => {
        const url = (JSON.parse(line) as { req?: { url?: string } }).req?.url;
        return url === undefined ? [] : [url];
      });

  it('never writes a credential sent in the query string, whatever its name’s case or encoding', async () => {
    const customer = await t.createCustomer('Query Ltd');
    const secret = () => `s3cr3t${randomBytes(12).toString('hex')}`;
    const names = ['api_key', 'API_KEY', 'apikey', 'apiKey', 'api-key', 'x-api-key', 'key', 'token', 'access_token', 'refresh_token', 'secret', 'client_secret', 'password', 'signature', 'sig', 'csrf', '_csrf', 'X-CSRF-Token', 'authorization', 'api%5Fkey', '%61pi_key', 'api_key[]'];
    const sent: string[] = [];
    const from = chunks.length;
    for (const name of names) {
      const value = secret();
      sent.push(value);
      await t.request({ url: `/fiat-accounts?page=2&${name}=${value}&limit=5` });
    }
    // A key is a key under any name, and even as a bare parameter.
    for (const query of [`q=${customer.key}`, customer.key, `filter=${encodeURIComponent(customer.key)}`]) await t.request({ url: `/no-such-route?${query}` });

    const logText = chunks.slice(from).join('');
    for (const value of [...sent, customer.key, customer.key.slice('sk_test_'.length)]) expect(logText).not.toContain(value);
    const urls = loggedUrls(from);
    expect(urls).toContain('/fiat-accounts?page=2&api_key=[redacted]&limit=5');
    expect(urls).toContain('/fiat-accounts?page=2&api%5Fkey=[redacted]&limit=5');
    expect(urls).toContain('/no-such-route?q=[redacted]');
    // Other parameters stay readable.
    await t.request({ url: '/fiat-accounts?page=3&limit=7&status=active' });
    expect(loggedUrls(from)).toContain('/fiat-accounts?page=3&limit=7&status=active');
  });

  it('never writes a sign-in or onboarding token in any segment, however the path spells it', async () => {
    const token = () => `Tok${randomBytes(24).toString('base64url')}`;
    const [a, b, c] = [token(), token(), token()];
    const spellings: Array<[sent: string, logged: string]> = [
      [`/onboarding/${a}`, '/onboarding/[redacted]'],
      [`/v1/onboarding/${a}/documents`, '/onboarding/[redacted]/documents'],
      [`/v2/dashboard/link/${a}`, '/dashboard/link/[redacted]'],
      [`/onboarding//${a}`, '/onboarding/[redacted]'],
      [`/onboarding/x/${a}`, '/onboarding/[redacted]/[redacted]'],
      [`/onboarding/${a}/${b}/${c}`, '/onboarding/[redacted]/[redacted]/[redacted]'],
      [`/dashboard/link/${a}/${b}`, '/dashboard/link/[redacted]/[redacted]'],
      [`/dashboard/reveal/${a}`, '/dashboard/reveal/[redacted]'],
      [`/dashboard/%72eveal/${a}`, '/dashboard/%72eveal/[redacted]'],
      [`/onboarding%2F${a}`, '/onboarding/[redacted]'],
      [`/onboarding%2f${a}%2Fsubmit`, '/onboarding/[redacted]/submit'],
      [`/dashboard%2Flink%2F${a}`, '/dashboard%2Flink/[redacted]'],
      [`/dashboard//link/${a}`, '/dashboard//link/[redacted]'],
      [`/%6Fnboarding/${a}`, '/%6Fnboarding/[redacted]'],
      [`/Onboarding/${a}`, '/Onboarding/[redacted]'],
      [`/onboarding%252F${a}`, '/onboarding/[redacted]'],
      [`/onboarding/${a}?token=${b}`, '/onboarding/[redacted]?token=[redacted]'],
    ];
    const from = chunks.length;
    for (const [url] of spellings) await t.app.inject({ url });
    for (const [url] of spellings) await t.app.inject({ method: 'POST', url });

    const logText = chunks.slice(from).join('');
    for (const value of [a, b, c]) expect(logText).not.toContain(value);
    const urls = loggedUrls(from);
    for (const [sent, logged] of spellings) expect(urls, sent).toContain(logged);
  });

  it('never writes an API key or a link token put anywhere else: a path segment, a ; parameter, a link in a query value, a header', async () => {
    const customer = await t.createCustomer('Elsewhere Ltd');
    const token = `Tok${randomBytes(24).toString('base64url')}`;
    const from = chunks.length;
    const sent: Array<[url: string, headers: Record<string, string>]> = [
      [`/fiat-accounts/${customer.key}`, {}],
      [`/fiat-accounts;api_key=${customer.key}`, {}],
      [`/x/${encodeURIComponent(customer.key).replace(/_/g, '%5F')}`, {}],
      [`/dashboard/sign-in?next=/dashboard/link/${token}`, {}],
      [`/x?r=${encodeURIComponent(`/onboarding/${token}`)}`, {}],
      [`/onboarding\\${token}`, {}],
      ['/fiat-accounts', { 'user-agent': `script ${customer.key}`, 'x-forwarded-host': customer.key, referer: `http://localhost:3000/onboarding/${token}?page=1` }],
    ];
    for (const [url, headers] of sent) await t.app.inject({ url, headers });

    const logText = chunks.slice(from).join('');
    for (const value of [customer.key, customer.key.slice('sk_test_'.length), token]) expect(logText).not.toContain(value);
    const urls = loggedUrls(from);
    expect(urls).toContain('/fiat-accounts/[redacted]');
    expect(urls).toContain('/fiat-accounts;api_key=[redacted]');
    expect(urls).toContain('/dashboard/sign-in?next=[redacted]');
    const lines = logText.trim().split('\n').map((line) => JSON.parse(line) as { req?: { headers?: Record<string, string> } });
    const headers = lines.flatMap((line) => (line.req?.headers?.referer ? [line.req.headers] : []));
    expect(headers[0]).toMatchObject({ 'user-agent': 'script [redacted]', 'x-forwarded-host': '[redacted]', referer: 'http://localhost:3000/onboarding/[redacted]?page=1' });
  });
});
