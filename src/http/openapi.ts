import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, FastifySchema, RouteOptions } from 'fastify';
import { contentSecurityPolicy, installPageHeaders } from '../web/page-headers.js';
import { finishDocument, type OpenApiDocument } from './openapi-document.js';
import { ErrorEnvelope, VersionErrorBody, errorResponses } from './schemas.js';

const writeMethods = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/**
 * Swagger UI's top-bar logo is an inline SVG carrying a <style> element of its own (swagger-ui-standalone-preset.js),
 * the one inline style the reference needs: allowed by its hash, which a test recomputes from the served file, so an
 * upgrade of Swagger UI that changes it fails there rather than showing a colourless logo.
 */
const swaggerLogoStyleHash = "'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='";

/**
 * Completes each operation with what the edge guarantees for every route but a route's own schema may not list.
 * Version resolution runs before any route (docs/spec.md §9), so every operation can answer the flat 400 of docs/spec.md §7
 * rule 4, the last-resort 500 of rule 6 exists everywhere, and so does the 503 of an instance shutting down
 * (http/shutdown-refusal.ts); without this, /health and /ready documented no 4xx at all. Every operation behind an
 * API key reads the database, so it can answer 503 while the database is away and 507 while the storage is full
 * (docs/operations.md "Faults"). Writes also need X-CSRF-Token (docs/spec.md §5 rule 4), which the document declared as a
 * scheme but required nowhere, so a generated client would not send it.
 */
function documentEdgeBehaviour({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }) {
  if (schema === undefined || schema === null || (schema as { hide?: boolean }).hide) return { schema, url };
  const response: Record<string, unknown> = { ...(schema.response as Record<string, unknown> | undefined) };
  if (!('400' in response)) response['400'] = { ...VersionErrorBody, description: 'Unsupported API version (flat body)' };
  if (!('500' in response)) response['500'] = { ...ErrorEnvelope, description: 'Internal error' };
  if (!route.config?.public) {
    for (const [status, body] of Object.entries(errorResponses(503, 507))) if (!(status in response)) response[status] = body;
  }
  if (!('503' in response)) response['503'] = { ...ErrorEnvelope, description: 'The instance is shutting down (SHUTTING_DOWN); retry after Retry-After' };
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((method) => method.toUpperCase());
  const needsCsrf = !route.config?.public && schema.security === undefined && methods.some((method) => writeMethods.has(method));
  const security = needsCsrf ? [{ apiKey: [], csrfToken: [] }, { bearer: [], csrfToken: [] }] : schema.security;
  return { schema: { ...schema, response, ...(security === undefined ? {} : { security }) }, url };
}

/**
 * OpenAPI 3.1 generated from the route schemas, served at /openapi.json, with an interactive reference at /docs.
 * Must be registered before the routes so it sees them.
 */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  // The reference is public like the document it renders; its routes are registered by the UI plugin.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...route.config, public: true, rateLimit: false };
  });
  await app.register(swagger, {
    transform: documentEdgeBehaviour,
    transformObject: (generated) => {
      if (!('openapiObject' in generated)) throw new Error('the document is OpenAPI 3.1');
      return finishDocument(generated.openapiObject as unknown as OpenApiDocument);
    },
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Customer API',
        version: '1.0.0',
        description:
          'Customer-facing API of a payments and digital-asset platform. Every path may carry a /v1 or /v2 prefix ' +
          '(spec §9); the X-API-Version header selects a version when the path has none. Errors use the envelope ' +
          '`{ error: { code, message, details } }`; codes are listed in docs/errors.md. A path answers a method it does ' +
          'not serve with 405 METHOD_NOT_ALLOWED and an `Allow` header (OPTIONS included, unless it is a CORS ' +
          'preflight); a path that does not exist answers 404 ROUTE_NOT_FOUND. Neither is listed under an operation.\n\n' +
          'Request rules that hold for every operation (docs/decisions/0005-request-input-rules.md): enum values match ' +
          'regardless of case and are answered in the spelling listed here; an optional request field sent as `null` ' +
          'is taken as absent; request timestamps may be any RFC 3339 date-time (any offset, `t`/`z` in either case, ' +
          'a leap second) and are stored and answered in UTC with milliseconds; unknown query parameters are ignored; ' +
          'strings must be well-formed Unicode without control characters other than tab, CR and LF.',
        license: { name: 'Proprietary: the terms of your agreement with the operator of this server', identifier: 'LicenseRef-Proprietary' },
      },
      // Relative to this document, so it holds wherever the server is deployed; a version in the path pins it.
      servers: [
        { url: '/v1', description: 'This server, version v1' },
        { url: '/v2', description: 'This server, version v2 (currently answers as v1)' },
      ],
      tags: [
        { name: 'Authentication', description: 'CSRF tokens for write requests (docs/authentication.md)' },
        { name: 'Fiat accounts', description: 'Accounts with IBANs (docs/spec.md §2)' },
        { name: 'Virtual accounts', description: 'Accounts under a master fiat account (docs/virtual-accounts.md)' },
        { name: 'Payees', description: 'Beneficiaries of payments (docs/payees.md)' },
        { name: 'End users', description: 'Individuals and businesses, and their identity verification (docs/end-users.md)' },
        { name: 'Documents', description: 'Verification documents (docs/documents.md)' },
        { name: 'Fees', description: 'What a payment will cost (docs/fees.md)' },
        { name: 'Payments', description: 'Payments out of fiat accounts (docs/payments.md)' },
        { name: 'Transactions', description: 'The history of every money movement (docs/transactions.md)' },
        { name: 'Wallets', description: 'Crypto wallets and on-chain transfers (docs/wallets.md)' },
        { name: 'OTC exchange', description: 'EUR into USDC: quotes and orders (docs/otc.md)' },
        { name: 'Webhooks', description: 'Subscriptions, deliveries and events (docs/webhooks.md)' },
        { name: 'Sandbox', description: 'Simulations that drive lifecycles in the sandbox environment only' },
        { name: 'Operations', description: 'Liveness and readiness probes' },
      ],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
          csrfToken: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'Required on POST, PATCH and DELETE; from GET /csrf-token' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
  });
  // The reference is a browser page like the dashboard's, with its headers. Swagger UI loads only its own files (no
  // inline script: static/index.html and swagger-initializer.js of @fastify/swagger-ui) and calls only this server
  // ("Try it out"); its style sheet draws icons as data: images; no validator badge (validatorUrl null).
  const referencePolicy = contentSecurityPolicy({ 'style-src': `'self' ${swaggerLogoStyleHash}`, 'img-src': "'self' data:" });
  await app.register(async (reference) => {
    installPageHeaders(reference, referencePolicy);
    await reference.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true }, uiHooks: {} });
  });
  app.get('/openapi.json', { config: { public: true, rateLimit: false }, schema: { hide: true } }, async () => app.swagger());
}
