import { createHash } from 'node:crypto';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorStatusByCode } from '../../src/errors.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** docs/architecture.md, Stack: OpenAPI 3.1 generated from the route schemas at /openapi.json, an interactive reference at /docs. */

type Json = Record<string, any>;
const httpMethods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
const publicPaths = new Set(['/health', '/ready']);

function operationsOf(doc: Json): { path: string; method: string; operation: Json }[] {
  const operations: { path: string; method: string; operation: Json }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
    for (const method of httpMethods) if (item[method]) operations.push({ path, method, operation: item[method] });
  }
  return operations;
}

function jsonSchemaOf(response: Json | undefined): Json {
  const schema = response?.content?.['application/json']?.schema;
  expect(schema, 'response documents an application/json schema').toBeDefined();
  return schema as Json;
}

/** The envelope of docs/spec.md §7 rule 1, as a schema: `error` an object requiring code, message and details. */
function isEnvelopeSchema(schema: Json): boolean {
  const error = schema.properties?.error;
  return error?.type === 'object' && ['code', 'message', 'details'].every((name) => error.required?.includes(name));
}

/** The flat body of docs/spec.md §7 rule 4: `error` a string. */
function isFlatVersionSchema(schema: Json): boolean {
  return schema.properties?.error?.type === 'string';
}

describe('OpenAPI document and reference', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let response: LightMyRequestResponse;
  let doc: Json;
  let resolved: Json;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    response = await t.request({ url: '/openapi.json' });
    doc = response.json();
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors, 'OpenAPI validation errors').toBeUndefined();
    resolved = validator.resolveRefs();
  });
  afterAll(async () => t?.close());

  const responseSchema = (path: string, method: string, status: number | string): Json =>
    jsonSchemaOf(resolved.paths[path][method].responses[String(status)]);
  const validates = (schema: Json, body: unknown) => {
    const validate = ajv.compile(schema);
    const valid = validate(body);
    return { valid, errors: validate.errors };
  };

  describe('GET /openapi.json', () => {
    it('answers 200 JSON without an API key', async () => {
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
    });

    it('is an OpenAPI 3.1 document', () => {
      expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
      expect(typeof doc.info.title).toBe('string');
      expect(typeof doc.info.version).toBe('string');
    });

    it('passes the OpenAPI 3.1 schema validator', async () => {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      expect(result.errors).toBeUndefined();
      expect(result.valid).toBe(true);
      expect(validator.version).toMatch(/^3\.1/);
    });

    it('is served identically under /v1 and /v2, and ignores an invalid key', async () => {
      for (const request of [{ url: '/v1/openapi.json' }, { url: '/v2/openapi.json' }, { url: '/openapi.json', key: 'not-a-key' }]) {
        const other = await t.request(request);
        expect(other.statusCode).toBe(200);
        expect(other.json()).toEqual(doc);
      }
    });
  });

  describe('paths and operations', () => {
    it('documents the implemented routes with OpenAPI path templates', () => {
      const paths = Object.keys(doc.paths);
      for (const expected of ['/fiat-accounts', '/fiat-accounts/{id}', '/csrf-token', '/health']) expect(paths).toContain(expected);
      for (const path of paths) {
        expect(path).not.toMatch(/:/);
        expect(path).not.toMatch(/^\/v\d+\//);
      }
    });

    it('documents only routes the server answers', () => {
      for (const { path, method } of operationsOf(doc)) {
        const url = path.replace(/\{([^}]+)\}/g, ':$1');
        expect(t.app.hasRoute({ method: method.toUpperCase(), url }), `${method.toUpperCase()} ${path}`).toBe(true);
      }
    });

    it('lists a 2xx response and at least one 4xx error response on every operation', () => {
      const operations = operationsOf(doc);
      expect(operations.length).toBeGreaterThan(0);
      for (const { path, method, operation } of operations) {
        const statuses = Object.keys(operation.responses ?? {});
        expect(statuses.some((status) => /^2\d\d$/.test(status)), `${method.toUpperCase()} ${path} has a 2xx`).toBe(true);
        expect(statuses.some((status) => /^4\d\d$/.test(status)), `${method.toUpperCase()} ${path} has a 4xx`).toBe(true);
      }
    });

    it('documents every error response other than 400 in the error envelope (spec §7 rules 1 and 7)', () => {
      for (const { path, method, operation } of operationsOf(resolved)) {
        for (const [status, documented] of Object.entries(operation.responses as Record<string, Json>)) {
          if (!/^[45]\d\d$/.test(status) || status === '400') continue;
          const schema = jsonSchemaOf(documented);
          expect(isEnvelopeSchema(schema), `${method.toUpperCase()} ${path} ${status} is the envelope`).toBe(true);
          expect(typeof documented.description).toBe('string');
        }
      }
    });

    it('documents the flat unsupported-version body as a response of its own, and every other 400 as the envelope (spec §7 rule 4)', () => {
      const versionResponse = resolved.components.responses.UnsupportedApiVersion as Json;
      expect(isFlatVersionSchema(jsonSchemaOf(versionResponse))).toBe(true);
      expect(doc.components.parameters.ApiVersion.description).toMatch(/UnsupportedApiVersion/);
      let flat = 0;
      for (const { path, method, operation } of operationsOf(doc)) {
        const documented = operation.responses['400'] as Json;
        expect(documented, `${method.toUpperCase()} ${path} documents a 400`).toBeDefined();
        if (documented.$ref === '#/components/responses/UnsupportedApiVersion') {
          flat += 1;
          continue;
        }
        const schema = jsonSchemaOf(resolved.paths[path][method].responses['400']);
        expect(schema.anyOf ?? schema.oneOf, `${method.toUpperCase()} ${path} 400 is one schema, not a union`).toBeUndefined();
        expect(isEnvelopeSchema(schema), `${method.toUpperCase()} ${path} 400 is the envelope`).toBe(true);
      }
      // /health and /ready take no input: an unsupported version is the only 400 they can answer.
      expect(flat).toBe(2);
    });

    it('lists exactly the catalogue of error codes in the envelope schema', () => {
      const schema = responseSchema('/fiat-accounts', 'post', 401);
      expect([...schema.properties.error.properties.code.enum].sort()).toEqual(Object.keys(errorStatusByCode).sort());
    });

    it('marks the public routes as needing no key and every other operation as needing one', () => {
      for (const { path, method, operation } of operationsOf(doc)) {
        const security = (operation.security ?? doc.security) as Json[] | undefined;
        if (publicPaths.has(path)) {
          expect(security, `${path} is public`).toEqual([]);
        } else {
          expect(security?.length ?? 0, `${method.toUpperCase()} ${path} needs a key`).toBeGreaterThan(0);
          for (const requirement of security ?? []) {
            const schemes = Object.keys(requirement);
            expect(schemes.some((scheme) => scheme === 'apiKey' || scheme === 'bearer')).toBe(true);
            for (const scheme of schemes) expect(doc.components.securitySchemes[scheme], `security scheme ${scheme}`).toBeDefined();
          }
        }
      }
    });

    it('requires X-CSRF-Token with the key on every write operation, and not on reads (spec §5 rules 3 and 4)', () => {
      const csrfScheme = Object.entries(doc.components.securitySchemes as Record<string, Json>).find(
        ([, scheme]) => scheme.type === 'apiKey' && scheme.in === 'header' && String(scheme.name).toLowerCase() === 'x-csrf-token',
      )?.[0];
      expect(csrfScheme).toBeDefined();
      let writes = 0;
      for (const { path, method, operation } of operationsOf(doc)) {
        if (publicPaths.has(path)) continue;
        const security = (operation.security ?? doc.security) as Json[];
        const isWrite = ['post', 'put', 'patch', 'delete'].includes(method);
        if (isWrite) writes += 1;
        for (const requirement of security) {
          expect(Object.keys(requirement).includes(csrfScheme as string), `${method.toUpperCase()} ${path}`).toBe(isWrite);
        }
      }
      expect(writes).toBeGreaterThan(0);
    });

    it('documents both ways of presenting a key (spec §5 rule 1)', () => {
      const schemes = doc.components.securitySchemes as Record<string, Json>;
      expect(Object.values(schemes)).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ type: 'apiKey', in: 'header', name: 'x-api-key' }),
          expect.objectContaining({ type: 'http', scheme: 'bearer' }),
        ]),
      );
    });
  });

  describe('POST /fiat-accounts', () => {
    it.each([201, 400, 401, 403, 413, 415, 429])('documents response %i', (status) => {
      expect(doc.paths['/fiat-accounts'].post.responses[String(status)]).toBeDefined();
    });

    it('documents the request body of spec §4 with its constraints', () => {
      const body = resolved.paths['/fiat-accounts'].post.requestBody;
      expect(body.required).toBe(true);
      const schema = body.content['application/json'].schema as Json;
      expect([...schema.required].sort()).toEqual(['accountName', 'currency']);
      expect(schema.additionalProperties).toBe(false);
      expect(schema.properties.accountName).toMatchObject({ type: 'string', minLength: 1, maxLength: 200 });
      expect([...schema.properties.currency.enum].sort()).toEqual(['EUR', 'GBP', 'USD']);
      expect([...schema.properties.ibanCountry.enum].sort()).toEqual(['DE', 'DK', 'GB', 'LU']);
      expect(schema.properties.linkedBusinessId).toMatchObject({ type: 'string', format: 'uuid' });
      expect(schema.properties.umbrellaLinkId).toMatchObject({ type: 'string', format: 'uuid' });
    });

    it('documents a 201 schema that the real response satisfies', async () => {
      const created = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { accountName: 'Documented', currency: 'GBP' } });
      expect(created.statusCode).toBe(201);
      const result = validates(responseSchema('/fiat-accounts', 'post', 201), created.json());
      expect(result.errors).toBeNull();
    });

    it('documents error schemas that the real 400, 401, 403 and 415 responses satisfy', async () => {
      const validation = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { currency: 'JPY' } });
      const version = await t.request({ method: 'POST', url: '/v3/fiat-accounts', key: alice.key, csrf: true, body: {} });
      const unauthenticated = await t.request({ method: 'POST', url: '/fiat-accounts', body: {} });
      const csrf = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, body: {} });
      const mediaType = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: 'x', headers: { 'content-type': 'text/plain' } });
      for (const [status, real] of [[400, validation], [401, unauthenticated], [403, csrf], [415, mediaType]] as const) {
        expect(real.statusCode).toBe(status);
        const result = validates(responseSchema('/fiat-accounts', 'post', status), real.json());
        expect(result.errors, `${status}: ${real.body}`).toBeNull();
      }
      expect(version.statusCode).toBe(400);
      expect(validates(jsonSchemaOf(resolved.components.responses.UnsupportedApiVersion), version.json()).errors).toBeNull();
    });
  });

  describe('GET /fiat-accounts and GET /fiat-accounts/{id}', () => {
    it('documents 404 on GET /fiat-accounts/{id}, and the real 404 satisfies it', async () => {
      expect(doc.paths['/fiat-accounts/{id}'].get.responses['404']).toBeDefined();
      const missing = await t.request({ url: '/fiat-accounts/3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b', key: alice.key });
      expect(missing.statusCode).toBe(404);
      expect(validates(responseSchema('/fiat-accounts/{id}', 'get', 404), missing.json()).errors).toBeNull();
    });

    it('documents the id path parameter as a required UUID', () => {
      const parameters = resolved.paths['/fiat-accounts/{id}'].get.parameters as Json[];
      const id = parameters.find((parameter) => parameter.name === 'id');
      expect(id).toMatchObject({ in: 'path', required: true, schema: { type: 'string', format: 'uuid' } });
    });

    it('documents a 200 list schema that the real response satisfies', async () => {
      const listed = await t.request({ url: '/fiat-accounts', key: alice.key });
      expect(listed.statusCode).toBe(200);
      expect(listed.json().data.length).toBeGreaterThan(0);
      expect(validates(responseSchema('/fiat-accounts', 'get', 200), listed.json()).errors).toBeNull();
    });
  });

  describe('/docs interactive reference', () => {
    /** Follows up to three redirects, as a browser would. */
    const open = async (url: string) => {
      let current = await t.request({ url });
      for (let hops = 0; hops < 3 && current.statusCode >= 300 && current.statusCode < 400; hops += 1) {
        const location = String(current.headers.location);
        current = await t.request({ url: new URL(location, `http://localhost${url}`).pathname });
      }
      return current;
    };

    it.each(['/docs', '/docs/'])('answers %s with an HTML page without an API key', async (url) => {
      const page = await open(url);
      expect(page.statusCode).toBe(200);
      expect(page.headers['content-type']).toMatch(/^text\/html/);
      expect(page.body).toMatch(/<html/i);
    });

    it('renders the same document that /openapi.json serves', async () => {
      const rendered = await t.request({ url: '/docs/json' });
      expect(rendered.statusCode).toBe(200);
      expect(rendered.json()).toEqual(doc);
    });

    /** The directives of a Content-Security-Policy header, by name. */
    const directives = (header: unknown) =>
      new Map(String(header).split(';').map((directive) => directive.trim().split(/\s+/)).filter((parts) => parts[0]).map(([name, ...values]) => [name!, values]));

    it('serves the reference and every file it loads with a strict CSP, no framing, nosniff and no Referer', async () => {
      const page = await open('/docs');
      // Everything the page loads is a file of its own ('self'): no inline script or style to allow.
      expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/i);
      expect(page.body).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
      const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => new URL(match[1]!, 'http://localhost/docs/').pathname);
      expect(assets.length).toBeGreaterThanOrEqual(5);
      // The scripts' only inline style: <style> elements React creates (the logo's SVG), allowed by their hashes.
      const scripts = await Promise.all(assets.filter((asset) => asset.endsWith('.js')).map(async (asset) => (await t.request({ url: asset })).body));
      const inlineStyles = scripts.flatMap((script) => [...script.matchAll(/createElement\("style",null,"([^"]*)"\)/g)].map((match) => match[1]!));
      expect(inlineStyles.length).toBeGreaterThan(0);
      const inlineStyleHashes = inlineStyles.map((style) => `'sha256-${createHash('sha256').update(style).digest('base64')}'`);
      expect(assets.every((asset) => asset.startsWith('/docs/'))).toBe(true);
      for (const url of ['/docs', '/docs/', '/v1/docs/', ...assets, '/docs/json', '/docs/static/swagger-initializer.js']) {
        const response = await t.request({ url });
        expect(response.statusCode, url).toBe(200);
        const csp = directives(response.headers['content-security-policy']);
        expect(csp.get('default-src'), url).toEqual(["'none'"]);
        expect(csp.get('script-src'), url).toEqual(["'self'"]);
        expect(csp.get('style-src'), url).toEqual(["'self'", ...inlineStyleHashes]);
        expect(csp.get('img-src'), url).toEqual(["'self'", 'data:']);
        expect(csp.get('connect-src'), url).toEqual(["'self'"]);
        expect(csp.get('frame-ancestors'), url).toEqual(["'none'"]);
        expect(csp.get('base-uri'), url).toEqual(["'none'"]);
        expect(response.headers['x-frame-options'], url).toBe('DENY');
        expect(response.headers['x-content-type-options'], url).toBe('nosniff');
        expect(response.headers['referrer-policy'], url).toBe('no-referrer');
      }
    });

    it('serves the reference page assets without an API key', async () => {
      const page = await open('/docs');
      const asset = /(?:src|href)="([^"]+\.(?:js|css))"/.exec(page.body)?.[1];
      expect(asset).toBeDefined();
      const assetResponse = await t.request({ url: new URL(asset as string, 'http://localhost/docs/').pathname });
      expect(assetResponse.statusCode).toBe(200);
    });
  });
});
