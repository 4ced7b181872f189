import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import type { DestinationStream } from 'pino';
import { systemClock, type Clock } from './clock.js';
import { ConfigError, type Config } from './config/config.js';
import { bodyLimitDefaultBytes } from './config/limits.js';
import { installApiVersioning, stripVersionPrefix } from './http/api-version.js';
import { installAuthentication } from './http/auth.js';
import { installCsrfProtection } from './http/csrf.js';
import { installErrorHandling } from './http/error-handler.js';
import { installMetrics } from './http/metrics.js';
import { installOpenApi } from './http/openapi.js';
import { installRateLimit } from './http/rate-limit.js';
import { installRequestIdHeader, requestIdFor } from './http/request-id.js';
import { installValidators } from './http/validation.js';
import { ApiKeyService } from './modules/api-keys/service.js';
import { csrfTokenRoutes } from './modules/csrf-tokens/routes.js';
import { CsrfTokenService } from './modules/csrf-tokens/service.js';
import { fiatAccountRoutes } from './modules/fiat-accounts/routes.js';
import { FiatAccountService } from './modules/fiat-accounts/service.js';
import { healthRoutes } from './modules/health/routes.js';
import { sandboxProviders, type Providers } from './providers/providers.js';
import type { Storage } from './storage/database.js';
import { migrateToLatest } from './storage/migrate.js';
import { serverSecret } from './storage/server-secrets.js';

export interface AppDependencies {
  /** Owned by the app from here on: closing the app closes it. */
  storage: Storage;
  clock?: Clock;
  /** Defaults to the sandbox simulator; production has no default and refuses to start without one. */
  providers?: Providers;
  /** Where logs go (tests capture them); standard output otherwise. */
  logStream?: DestinationStream;
}

/** Headers that carry secrets are never logged. */
export const redactedLogPaths = ['req.headers["x-api-key"]', 'req.headers.authorization', 'req.headers["x-csrf-token"]', 'req.headers.cookie'];

const allowedCorsHeaders = ['content-type', 'x-api-key', 'authorization', 'x-csrf-token', 'x-api-version', 'idempotency-key', 'x-request-id'];
const exposedCorsHeaders = ['x-api-version', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'];

function providersFor(config: Config, given: Providers | undefined): Providers {
  if (given) return given;
  if (config.apiEnvironment === 'sandbox') return sandboxProviders();
  throw new ConfigError('API_ENVIRONMENT=production needs a real banking provider, and this build ships only the sandbox simulator');
}

/** Builds the HTTP application on a migrated database; tests call it too (DESIGN §4). */
export async function buildApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const providers = providersFor(config, deps.providers);
  const { storage } = deps;
  await migrateToLatest(storage);

  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: redactedLogPaths, censor: '[redacted]' },
      serializers: {
        req: (request) => ({ method: request.method, url: request.url, remoteAddress: request.ip, headers: request.headers }),
      },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: requestIdFor,
    requestIdHeader: false,
    rewriteUrl: stripVersionPrefix,
    // Fastify accepts a hop count at run time; its type declaration omits numbers.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    bodyLimit: bodyLimitDefaultBytes,
    forceCloseConnections: 'idle',
  });

  // Bodies are JSON only; Fastify's default text/plain parser would let other content types through.
  app.removeContentTypeParser('text/plain');
  installValidators(app);
  installErrorHandling(app);
  // CORS first: a preflight is answered before version resolution and authentication, so it carries neither.
  await app.register(cors, {
    origin: config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: allowedCorsHeaders, exposedHeaders: exposedCorsHeaders,
    maxAge: 600,
  });
  installApiVersioning(app);
  installRequestIdHeader(app);

  const apiKeys = new ApiKeyService(storage, clock, config.apiEnvironment);
  const csrfTokens = new CsrfTokenService(await serverSecret(storage, 'csrf', clock.now()), clock);
  installAuthentication(app, apiKeys);
  installCsrfProtection(app, csrfTokens);
  await installRateLimit(app, { perSecond: config.rateLimitPerSecond, redisUrl: config.redisUrl });
  installMetrics(app);
  await installOpenApi(app);

  healthRoutes(app, storage);
  csrfTokenRoutes(app, csrfTokens);
  fiatAccountRoutes(app, new FiatAccountService(storage, providers, clock));
  app.addHook('onClose', async () => storage.close());

  await app.ready();
  return app;
}
