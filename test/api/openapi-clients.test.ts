import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** docs/openapi.md: the document is written for generators — names, headers, examples — and linted by Redocly. */

type Json = Record<string, any>;
const httpMethods = ['get', 'put', 'post', 'delete', 'patch'] as const;

function operationsOf(doc: Json): { path: string; method: string; operation: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    httpMethods.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] as Json })),
  );
}

/** The §2 records of docs/spec.md and the error envelope, by their component names. */
const recordNames = [
  'EndUser',
  'Payee',
  'FiatAccount',
  'VirtualAccount',
  'Transaction',
  'WebhookSubscription',
  'FeePreview',
  'PaymentCreated',
  'Payment',
  'Wallet',
  'WalletTransfer',
  'WalletAddress',
  'OtcQuote',
  'OtcOrder',
  'OtcEligibleAccount',
  'OtcEligibleWallet',
  'DocumentUploadResult',
  'Error',
  'UnsupportedApiVersionError',
];

describe('OpenAPI document as a source for generated clients', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let doc: Json;
  let resolved: Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addFormat('iso-3166-1-alpha-2', /^[A-Za-z]{2}$/);

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    doc = (await t.request({ url: '/openapi.json' })).json();
    const validator = new Validator();
    await validator.validate(structuredClone(doc));
    resolved = validator.resolveRefs();
  });
  afterAll(async () => t?.close());

  it('gives every operation a unique camelCase operationId and a declared tag', () => {
    const ids = new Set<string>();
    const declared = new Set((doc.tags as Json[]).map((tag) => tag.name as string));
    for (const { path, method, operation } of operationsOf(doc)) {
      const label = `${method.toUpperCase()} ${path}`;
      expect(operation.operationId, label).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(ids.has(operation.operationId), `${label}: ${operation.operationId} is unique`).toBe(false);
      ids.add(operation.operationId);
      expect(operation.tags?.length, label).toBeGreaterThan(0);
      for (const tag of operation.tags) expect(declared.has(tag), `${label}: tag ${tag} is declared`).toBe(true);
    }
    expect(doc.paths['/payments'].post.operationId).toBe('createPayment');
    expect(doc.paths['/transactions'].get.operationId).toBe('listTransactions');
  });

  it('names the records and the error envelope as component schemas and references them instead of repeating them', () => {
    for (const name of recordNames) expect(doc.components.schemas[name], name).toBeDefined();
    // A named schema left inline would carry its title in the paths.
    expect(JSON.stringify(doc.paths)).not.toMatch(/"title":/);
    expect(doc.paths['/payments/{id}'].get.responses['200'].content['application/json'].schema.properties.data).toEqual({ $ref: '#/components/schemas/Payment' });
    expect(doc.components.responses.NotFound.content['application/json'].schema.$ref).toBe('#/components/schemas/Error');
  });

  it('declares its servers relative to itself, both ways of presenting a key and the CSRF header', () => {
    expect(doc.servers).toEqual([expect.objectContaining({ url: '/v1' }), expect.objectContaining({ url: '/v2' })]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer', 'csrfToken']);
    expect(doc.components.securitySchemes.csrfToken).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-CSRF-Token' });
  });

  it('documents the headers the API reads and sends', () => {
    const idempotent = new Set(['createEndUser', 'createFiatAccount', 'createWebhook']);
    for (const { path, method, operation } of operationsOf(doc)) {
      const label = `${method.toUpperCase()} ${path}`;
      const references = (operation.parameters as Json[]).map((parameter) => parameter.$ref as string | undefined);
      expect(references, label).toContain('#/components/parameters/ApiVersion');
      expect(references, label).toContain('#/components/parameters/RequestId');
      if (idempotent.has(operation.operationId)) expect(references, label).toContain('#/components/parameters/IdempotencyKey');
      for (const [status, response] of Object.entries(resolved.paths[path][method].responses as Record<string, Json>)) {
        expect(Object.keys(response.headers ?? {}), `${label} ${status}`).toContain('X-Request-Id');
        if (status === '429') expect(Object.keys(response.headers), `${label} 429`).toContain('Retry-After');
        if (idempotent.has(operation.operationId) && status.startsWith('2')) expect(Object.keys(response.headers), `${label} ${status}`).toContain('Idempotent-Replayed');
      }
    }
    // POST /payments takes no Idempotency-Key (docs/spec.md §4), so it documents none.
    expect(JSON.stringify(doc.paths['/payments'].post)).not.toMatch(/IdempotencyKey|Idempotent-Replayed/);
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ name: 'Idempotency-Key', in: 'header', required: false });
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining(['X-Request-Id', 'X-API-Version', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After', 'Idempotent-Replayed']),
    );
  });

  it('gives every operation an example request and response that its schemas accept', () => {
    let checked = 0;
    for (const { path, method, operation } of operationsOf(resolved)) {
      const label = `${method.toUpperCase()} ${path}`;
      const media = [
        ...Object.values((operation.requestBody?.content ?? {}) as Record<string, Json>),
        ...Object.entries(operation.responses as Record<string, Json>)
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([, response]) => Object.values((response.content ?? {}) as Record<string, Json>)),
      ];
      const bodiless = Object.keys(operation.responses).every((status) => !status.startsWith('2') || status === '204');
      if (!bodiless) expect(media.length, `${label} has a documented body`).toBeGreaterThan(0);
      for (const { schema, example } of media) {
        expect(example, `${label} has an example`).toBeDefined();
        const validate = ajv.compile(schema);
        expect(validate(example) ? null : validate.errors, `${label}: ${JSON.stringify(example)}`).toBeNull();
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(60);
  });

  it('documents request examples that the server accepts as they are', async () => {
    const example = (path: string) => doc.paths[path].post.requestBody.content['application/json'].example as Json;
    const account = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: example('/fiat-accounts') });
    expect(account.statusCode, account.body).toBe(201);
    const payee = await t.request({ method: 'POST', url: '/payees', key: alice.key, csrf: true, body: example('/payees') });
    expect(payee.statusCode, payee.body).toBe(201);
    const user = await t.request({ method: 'POST', url: '/end-users', key: alice.key, csrf: true, body: example('/end-users') });
    expect(user.statusCode, user.body).toBe(201);
  });

  it("passes Redocly's recommended rules with no error and no warning", async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openapi-lint-'));
    try {
      const file = path.join(directory, 'openapi.json');
      fs.writeFileSync(file, JSON.stringify(doc));
      const redocly = path.resolve('node_modules/.bin/redocly');
      const run = await promisify(execFile)(redocly, ['lint', file, '--extends=recommended', '--format=json'], { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } }).catch(
        (failure: { stdout: string; stderr: string }) => failure,
      );
      const report = JSON.parse(run.stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
      expect(report.problems.map((problem) => `${problem.ruleId}: ${problem.message}`)).toEqual([]);
      expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
