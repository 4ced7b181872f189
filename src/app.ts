import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyLoggerOptions, type FastifyServerOptions } from 'fastify';
import { systemClock, type Clock } from './clock.js';
import type { Config } from './config/config.js';
import { bodyLimitDefaultBytes, requestTimeoutMs } from './config/limits.js';
import { installApiVersioning, isPreflight, stripVersionPrefix } from './http/api-version.js';
import { installAuthentication } from './http/auth.js';
import { installCsrfProtection } from './http/csrf.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './http/error-handler.js';
import { IdempotencyKeys, installIdempotency } from './http/idempotency.js';
import { installStrictJsonParser } from './http/json-body.js';
import { loggedHeaders, loggedUrl } from './http/log-redaction.js';
import { installMetrics } from './http/metrics.js';
import { installOpenApi } from './http/openapi.js';
import { installRateLimit } from './http/rate-limit.js';
import { installRequestIdHeader, requestIdFor } from './http/request-id.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { installShutdownRefusal } from './http/shutdown-refusal.js';
import { installUploadGate } from './http/upload-gate.js';
import { installValidators } from './http/validation.js';
import { ApiKeyService } from './modules/api-keys/index.js';
import { CsrfTokenService, csrfTokensPlugin } from './modules/csrf-tokens/index.js';
import { depositServices, depositsPlugin } from './modules/deposits/index.js';
import { documentServices, documentsPlugin } from './modules/documents/index.js';
import { EventService, eventsPlugin } from './modules/events/index.js';
import { EndUserService, EndUserVerificationLifecycle, OnboardingLinks, endUsersPlugin, type EndUserRecord } from './modules/end-users/index.js';
import { feesPlugin } from './modules/fees/index.js';
import { FiatAccountService, fiatAccountStatuses, fiatAccountsPlugin } from './modules/fiat-accounts/index.js';
import { healthPlugin } from './modules/health/index.js';
import { SandboxVerification } from './providers/sandbox/verification.js';
import type { ModuleContext } from './modules/module-context.js';
import { otcPlugin, otcServices } from './modules/otc/index.js';
import { payeeServices, payeesPlugin } from './modules/payees/index.js';
import { paymentServices, paymentsPlugin } from './modules/payments/index.js';
import { TransactionService, transactionsPlugin } from './modules/transactions/index.js';
import { virtualAccountServices, virtualAccountsPlugin } from './modules/virtual-accounts/index.js';
import { walletServices, walletsPlugin } from './modules/wallets/index.js';
import { type HostResolver, type WebhookDeliveryWorker, webhookServices, webhooksPlugin } from './modules/webhooks/index.js';
import { ReadCaches } from './storage/cache.js';
import { SecretBox } from './storage/secret-box.js';
import { configuredProviders, type Providers } from './providers/providers.js';
import { providerEventRoutes } from './providers/http/events-route.js';
import { ProviderEventInbox } from './providers/inbox.js';
import { Provisioning } from './providers/provisioning.js';
import type { Storage } from './storage/database.js';
import { migrateToLatest } from './storage/migrate.js';
import { recordDeploymentSetting } from './storage/deployment-settings.js';
import { defaultFileStore, type FileStore } from './storage/files.js';
import { StorageFaultState } from './storage/fault-state.js';
import { masterKeysFor, ServerSecrets } from './storage/server-secrets.js';
import { PollingWorker } from './workers/polling-worker.js';
import { startupPhaseDone } from './startup-phases.js';
import { CustomerService } from './modules/customers/index.js';
import { DashboardUserService } from './modules/dashboard-users/index.js';
import { FormTokens } from './web/form-tokens.js';
import { registerWebPages } from './web/plugin.js';
import { dashboardReaperBatchSize, dashboardReaperIntervalMs, idempotencyReaperBatchSize, idempotencyReaperIntervalMs, workerPollIntervalMs } from './config/limits.js';

export interface AppDependencies {
  /** Owned by the app from here on: closing the app closes it. */
  storage: Storage;
  clock?: Clock;
  /** Defaults to the sandbox simulator; production has no default and refuses to start without one. */
  providers?: Providers;
  /** Where uploaded files go; defaults to `<DATA_DIR>/documents` on SQLite, the database on PostgreSQL. */
  files?: FileStore;
  /** Where logs go (tests capture them); standard output otherwise. */
  logStream?: FastifyLoggerOptions['stream'];
  /** Sees every response's route and status (tests check each against the OpenAPI document). */
  observeResponse?: (method: string, routeUrl: string | undefined, statusCode: number) => void;
  /** How webhook receivers' names resolve; the system resolver unless a test stubs it. */
  resolveHost?: HostResolver;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Background loops; server.ts starts them, tests run single passes with runOnce(). */
    workers: PollingWorker[];
    /** Faults of the database or disk that requests and workers met (docs/operations.md "Faults"). */
    storageFaults: StorageFaultState;
    /** The provider events inbox: where adapters write the outcomes their provider reports (docs/providers.md). */
    providerEvents: ProviderEventInbox;
    /** The read caches every service of this app shares (storage/cache.ts); tests change data through them too. */
    caches: ReadCaches;
    /** The webhook delivery worker, for tests: idle() waits for the attempts started so far. */
    webhookDeliveries: WebhookDeliveryWorker;
  }
}

/** Headers that carry secrets are never logged. */
const redactedLogPaths = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["proxy-authorization"]',
  'req.headers["x-csrf-token"]',
  'req.headers.cookie',
];

const allowedCorsHeaders = ['content-type', 'x-api-key', 'authorization', 'x-csrf-token', 'x-api-version', 'idempotency-key', 'x-request-id'];
const exposedCorsHeaders = ['x-api-version', 'x-request-id', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'];

/** Builds the HTTP application on a migrated database; tests call it too (docs/architecture.md, Modules). */
export async function buildApp(config: Config, deps: AppDependencies): Promise<FastifyInstance> {
  const clock = deps.clock ?? systemClock;
  const providers = deps.providers ?? configuredProviders(config, clock);
  const { storage } = deps;
  // A master key that is missing (production) or cannot be made refuses start-up before the database changes.
  const masterKeys = masterKeysFor(config, storage.dialect);
  await migrateToLatest(storage);
  // The CLI runs in another process, often without PORT or PUBLIC_URL: the links it prints start with this.
  await recordDeploymentSetting(storage, 'public_url', config.publicUrl, clock);
  startupPhaseDone('migrations');

  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: redactedLogPaths, censor: '[redacted]' },
      serializers: {
        // Headers that carry secrets are redacted above; credentials elsewhere in the URL and headers here.
        req: (request) => ({ method: request.method, url: loggedUrl(request.url), remoteAddress: request.ip, headers: loggedHeaders(request.headers) }),
      },
      ...(deps.logStream ? { stream: deps.logStream } : {}),
    },
    genReqId: requestIdFor,
    requestIdHeader: false,
    rewriteUrl: stripVersionPrefix,
    // Fastify accepts a hop count at run time; its type declaration omits numbers.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    bodyLimit: bodyLimitDefaultBytes,
    // A request (its body included) that has not fully arrived by then is cut off: no connection is held forever.
    // Node's own default. Large uploads must also keep a minimum rate (http/upload-gate.ts).
    requestTimeout: requestTimeoutMs,
    // /fiat-accounts/ is /fiat-accounts, not a request for an account with an empty id.
    routerOptions: { ignoreTrailingSlash: true },
    frameworkErrors: frameworkErrorHandler,
    clientErrorHandler,
    forceCloseConnections: 'idle',
  });

  // Bodies are JSON only; Fastify's default text/plain parser would let other content types through.
  app.removeContentTypeParser('text/plain');
  installStrictJsonParser(app);
  installValidators(app);
  const storageFaults = new StorageFaultState(storage.dialect, clock, app.log);
  app.decorate('storageFaults', storageFaults);
  installErrorHandling(app, storageFaults);
  // A committed write, of a request or a worker, shows the storage works again (a read may have come from a cache, a
  // replay or a preview wrote nothing).
  storage.committed.listen(() => storageFaults.recovered());
  // CORS first: a preflight is answered before version resolution and authentication, so it carries neither.
  const corsOptions = {
    origin: config.corsOrigins,
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: allowedCorsHeaders, exposedHeaders: exposedCorsHeaders,
    maxAge: 600,
  };
  // The plugin's catch-all OPTIONS route only hands what is not a preflight to the not-found handler (405 on a known
  // path, 404 elsewhere), which like every unknown route needs no key and counts against no rate limit.
  app.addHook('onRoute', (route) => {
    if (route.method === 'OPTIONS' && route.url === '*') route.config = { ...route.config, public: true, rateLimit: false };
  });
  await app.register(cors, {
    // The plugin would answer every OPTIONS request as a preflight; one without Access-Control-Request-Method is an
    // ordinary request, which goes through version resolution (docs/spec.md §9 rule 4: it carries X-API-Version).
    delegator: (request, callback) => callback(null, { ...corsOptions, preflight: isPreflight(request) }),
  });
  installApiVersioning(app);
  installRequestIdHeader(app);
  installSecurityHeaders(app);
  // Before the rate limits and the key: a request refused while stopping costs nothing.
  installShutdownRefusal(app);

  // Every read cache of the app keeps time by the injected clock, so tests expire entries by advancing it.
  const caches = new ReadCaches(clock);
  app.decorate('caches', caches);
  const apiKeys = new ApiKeyService(storage, clock, config.apiEnvironment, caches);
  const serverSecrets = await ServerSecrets.open(storage, masterKeys, clock);
  if (serverSecrets.keys === undefined) {
    app.log.warn('SECRETS_MASTER_KEY is not set: the server secrets are stored unwrapped in the database, so a backup of it forges tokens, decrypts webhook signing secrets and opens hosted onboarding links (docs/operations.md "Server secrets")');
  }
  const csrfTokens = new CsrfTokenService(await serverSecrets.get('csrf'), clock);
  startupPhaseDone('secrets');
  // Metrics before the rate limits, which report on their Redis there.
  installMetrics(app, storage.groupCommits, storageFaults);
  // Rate limits first: the per-address limit must run before the key is looked at (http/rate-limit.ts).
  const limitRefusal = await installRateLimit(app, {
    perSecond: config.rateLimitPerSecond,
    perIpPerSecond: config.rateLimitPerIpPerSecond,
    failedAuthPerIpPerMinute: config.rateLimitFailedAuthPerIpPerMinute,
    redisUrl: config.redisUrl,
    redisTimeoutMs: config.rateLimitRedisTimeoutMs,
    clock,
  });
  installAuthentication(app, apiKeys, limitRefusal);
  installCsrfProtection(app, csrfTokens, limitRefusal);
  const observeResponse = deps.observeResponse;
  if (observeResponse) app.addHook('onResponse', async (request, reply) => observeResponse(request.method, request.routeOptions.url, reply.statusCode));
  await installOpenApi(app);

  installUploadGate(app, {
    concurrency: config.uploadConcurrency,
    concurrencyPerCustomer: config.uploadConcurrencyPerCustomer,
    minBytesPerSecond: config.uploadMinBytesPerSecond,
    rateWindowMs: config.uploadRateWindowMs,
  });
  const files = deps.files ?? defaultFileStore(storage, config.dataDir);
  const workers: PollingWorker[] = [];

  await app.register(healthPlugin, { storage, dataDir: config.dataDir, faults: storageFaults });
  await app.register(csrfTokensPlugin, { csrfTokens });
  const provisioning = new Provisioning(storage, providers, clock, app.log);
  workers.push(new PollingWorker('provider-operation-reaper', () => provisioning.undoAbandoned(), workerPollIntervalMs, app.log));
  const onboardingLinks = new OnboardingLinks(await serverSecrets.get('onboarding-links'), config.publicUrl);
  const endUsers = new EndUserService(storage, provisioning, files, clock, onboardingLinks, config.sandboxAutoSettleMs, config.documentStorageQuotaBytes);
  const fiatAccounts = new FiatAccountService(storage, provisioning, clock, endUsers);
  const idempotency = new IdempotencyKeys(
    storage,
    clock,
    { leaseMs: config.idempotencyLeaseMs, retentionMs: config.idempotencyRetentionMs },
    // Answers that hold a secret (a new webhook's signing secret) are stored encrypted with a key of the deployment.
    new SecretBox(await serverSecrets.get('idempotency-answers')),
  );
  // Before any route: the routes that declare config.idempotency run under it.
  installIdempotency(app, idempotency);
  const sandbox = config.apiEnvironment === 'sandbox';
  workers.push(new PollingWorker('idempotency-key-reaper', () => idempotency.deleteExpired(idempotencyReaperBatchSize), idempotencyReaperIntervalMs, app.log));
  // Provider outcomes, whoever reports them, are applied by one claimed worker (docs/providers.md "Reporting outcomes").
  const providerEvents = new ProviderEventInbox(storage, clock, app.log);
  workers.push(new PollingWorker('provider-events', () => providerEvents.applyDue(), workerPollIntervalMs, app.log));
  if (config.paymentProvider) await providerEventRoutes(app, providerEvents, clock, config.paymentProvider.secret);
  const verificationLifecycle = new EndUserVerificationLifecycle(storage, clock);
  providerEvents.register(verificationLifecycle);
  const verification = new SandboxVerification<EndUserRecord>(storage, clock, providerEvents, verificationLifecycle);
  if (sandbox) workers.push(new PollingWorker('sandbox-kyc-decisions', () => verification.applyDueSandboxDecisions(), workerPollIntervalMs, app.log));
  const context: ModuleContext = { config, storage, providers, provisioning, providerEvents, clock, caches, files, endUsers, workers, log: app.log, serverSecrets };
  const fiatAccountSimulation = fiatAccountStatuses(context);
  const payees = payeeServices(context);
  const virtualAccounts = virtualAccountServices(context);
  const { documents } = documentServices(context);
  const { deposits } = depositServices(context);
  const transactions = new TransactionService(storage);
  const payments = paymentServices(context);
  const wallets = walletServices(context);
  const otc = otcServices(context);
  const { webhooks, deliveries } = await webhookServices(context, deps.resolveHost);
  app.decorate('webhookDeliveries', deliveries);

  // Each module's routes in its own encapsulated plugin (docs/modules.md).
  await app.register(fiatAccountsPlugin, { fiatAccounts, sandbox: fiatAccountSimulation });
  await app.register(endUsersPlugin, { endUsers, onboardingLinks, sandboxVerification: sandbox ? verification : undefined });
  await app.register(payeesPlugin, payees);
  await app.register(virtualAccountsPlugin, virtualAccounts);
  await app.register(documentsPlugin, { documents });
  await app.register(depositsPlugin, { deposits });
  // The fee preview resolves a payment's scheme and payee as the payment does: the payments service previews it.
  await app.register(feesPlugin, { feePreview: payments.feePreview });
  await app.register(paymentsPlugin, payments);
  await app.register(transactionsPlugin, { transactions });
  await app.register(walletsPlugin, wallets);
  await app.register(otcPlugin, otc);
  await app.register(webhooksPlugin, { webhooks });
  const events = new EventService(storage);
  await app.register(eventsPlugin, { events });

  const dashboardUsers = new DashboardUserService(storage, clock, { publicUrl: config.publicUrl, idleMs: config.dashboardSessionIdleMs, maxMs: config.dashboardSessionMaxMs });
  workers.push(new PollingWorker('dashboard-session-reaper', () => dashboardUsers.deleteExpired(dashboardReaperBatchSize), dashboardReaperIntervalMs, app.log));
  await registerWebPages(app, {
    config,
    clock,
    customers: new CustomerService(storage, clock),
    formTokens: new FormTokens(await serverSecrets.get('dashboard-forms')),
    users: dashboardUsers,
    apiKeys,
    endUsers,
    onboardingLinks,
    verification,
    documents,
    fiatAccounts,
    virtualAccounts: virtualAccounts.virtualAccounts,
    wallets,
    payments,
    transactions,
    deposits,
    webhooks,
    events,
  });

  for (const worker of workers) worker.reportStorageFaults(storageFaults);
  app.decorate('workers', workers);
  app.decorate('providerEvents', providerEvents);
  // Workers finish their pass before the database they use is closed.
  app.addHook('onClose', async () => {
    await Promise.all(workers.map((worker) => worker.stop()));
    await storage.close();
  });

  await app.ready();
  startupPhaseDone('routes');
  return app;
}
