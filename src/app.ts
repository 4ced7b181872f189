import cors from '@fastify/cors';
import Fastify, { type FastifyInstance, type FastifyLoggerOptions, type FastifyServerOptions } from 'fastify';
import { serverTimeOnly, systemClock, type Clock, type CustomerClocks } from './clock.js';
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
import { EventService, EventStreams, eventsPlugin } from './modules/events/index.js';
import { EndUserService, EndUserVerificationLifecycle, OnboardingLinks, endUsersPlugin, type EndUserRecord } from './modules/end-users/index.js';
import { feesPlugin } from './modules/fees/index.js';
import { FiatAccountService, fiatAccountStatuses, fiatAccountsPlugin } from './modules/fiat-accounts/index.js';
import { healthPlugin } from './modules/health/index.js';
import { sandboxTestClocks, testClocksPlugin, type TestClocks } from './modules/test-clocks/index.js';
import { SandboxVerification } from './providers/sandbox/verification.js';
import { noAnnouncedAnswers, sandboxTimersOf, type SandboxTimers } from './providers/sandbox/timers.js';
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
import type { MasterKeys } from './config/master-keys.js';
import { PollingWorker } from './workers/polling-worker.js';
import { Reaper } from './workers/reaper.js';
import { startupPhaseDone } from './startup-phases.js';
import { CustomerService } from './modules/customers/index.js';
import { DashboardReveals, DashboardUserService } from './modules/dashboard-users/index.js';
import { FormTokens } from './web/form-tokens.js';
import { registerWebPages } from './web/plugin.js';
import { reaperBatchRows, reaperIntervalMs, workerPollIntervalMs } from './config/limits.js';

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
  const masterKeys = await prepareStorage(config, storage, clock);
  const app = createServer(config, deps.logStream);
  const storageFaults = await installEdge(app, config, storage, clock);
  // Every read cache of the app keeps time by the injected clock, so tests expire entries by advancing it.
  const caches = new ReadCaches(clock);
  app.decorate('caches', caches);
  // Test clocks exist in the sandbox only (docs/test-clocks.md); the rules that follow them read customerClocks.
  const testClocks = config.apiEnvironment === 'sandbox' ? sandboxTestClocks(storage, clock, caches) : undefined;
  const customerClocks: CustomerClocks = testClocks ?? serverTimeOnly;
  const apiKeys = new ApiKeyService(storage, clock, config.apiEnvironment, caches, customerClocks);
  const serverSecrets = await openServerSecrets(app, storage, masterKeys, clock);
  const csrfTokens = new CsrfTokenService(await serverSecrets.get('csrf'), clock);
  startupPhaseDone('secrets');
  await installAccessChecks(app, config, { storage, storageFaults, clock, apiKeys, csrfTokens, observeResponse: deps.observeResponse });
  const files = deps.files ?? defaultFileStore(storage, config.dataDir, clock);
  // One worker deletes every kind of expired row the steps below register (docs/operations.md "Retention").
  const reaper = new Reaper(clock, reaperBatchRows);
  const base: Foundation = { app, config, storage, clock, customerClocks, testClocks, providers, caches, files, serverSecrets, storageFaults, workers: [], reaper };
  base.workers.push(new PollingWorker('reaper', () => reaper.pass(), reaperIntervalMs, app.log));
  // A deleted test clock's rows written after its own release (another instance remembered the clock) go back too.
  if (testClocks) reaper.add(() => testClocks.releaseDeletedClocks());

  await app.register(healthPlugin, { storage, dataDir: config.dataDir, faults: storageFaults });
  await app.register(csrfTokensPlugin, { csrfTokens });
  const platform = await platformServices(base);
  const modules = await moduleServices(platform.context, deps.resolveHost);
  app.decorate('webhookDeliveries', modules.deliveries);
  await registerModules(app, platform, modules);
  await registerDashboard(base, apiKeys, platform, modules);
  await finishStartup(base, platform.context.providerEvents);
  return app;
}

/** What the steps after the edge build on: the server, its storage, its shared state and its background loops. */
interface Foundation {
  readonly app: FastifyInstance;
  readonly config: Config;
  readonly storage: Storage;
  readonly clock: Clock;
  /** Each customer's time for the rules that follow sandbox test clocks; the server clock in production. */
  readonly customerClocks: CustomerClocks;
  /** The sandbox's test clocks; none in production. */
  readonly testClocks: TestClocks | undefined;
  readonly providers: Providers;
  readonly caches: ReadCaches;
  readonly files: FileStore;
  readonly serverSecrets: ServerSecrets;
  readonly storageFaults: StorageFaultState;
  /** Each step adds its workers here; server.ts starts them. */
  readonly workers: PollingWorker[];
  /** Each step adds how its expired rows are deleted here; the reaper worker deletes them. */
  readonly reaper: Reaper;
}

/** The database migrated and the deployment's settings recorded; the master keys the server secrets are wrapped with. */
async function prepareStorage(config: Config, storage: Storage, clock: Clock): Promise<MasterKeys | undefined> {
  // A master key that is missing (production) or cannot be made refuses start-up before the database changes.
  const masterKeys = masterKeysFor(config, storage.dialect);
  await migrateToLatest(storage);
  // The CLI runs in another process, often without PORT or PUBLIC_URL: the links it prints start with this.
  await recordDeploymentSetting(storage, 'public_url', config.publicUrl, clock);
  startupPhaseDone('migrations');
  return masterKeys;
}

/** The Fastify instance: its logger (secrets redacted), request ids, URL rewriting, body and time limits. */
function createServer(config: Config, logStream: AppDependencies['logStream']): FastifyInstance {
  return Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: redactedLogPaths, censor: '[redacted]' },
      serializers: {
        // Headers that carry secrets are redacted above; credentials elsewhere in the URL and headers here.
        req: (request) => ({ method: request.method, url: loggedUrl(request.url), remoteAddress: request.ip, headers: loggedHeaders(request.headers) }),
      },
      ...(logStream ? { stream: logStream } : {}),
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
}

/**
 * What every request meets before its key is looked at: strict JSON bodies, error answers, CORS, the API version,
 * the request id and security headers, and the refusal while stopping. Returns where storage faults are kept.
 */
async function installEdge(app: FastifyInstance, config: Config, storage: Storage, clock: Clock): Promise<StorageFaultState> {
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
  await installCors(app, config);
  installApiVersioning(app);
  installRequestIdHeader(app);
  installSecurityHeaders(app);
  // Before the rate limits and the key: a request refused while stopping costs nothing.
  installShutdownRefusal(app);
  return storageFaults;
}

/** CORS first: a preflight is answered before version resolution and authentication, so it carries neither. */
async function installCors(app: FastifyInstance, config: Config): Promise<void> {
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
}

/** The deployment's secrets, unwrapped with the master keys; without any, a warning that they are stored in the clear. */
async function openServerSecrets(app: FastifyInstance, storage: Storage, masterKeys: MasterKeys | undefined, clock: Clock): Promise<ServerSecrets> {
  const serverSecrets = await ServerSecrets.open(storage, masterKeys, clock);
  if (serverSecrets.keys === undefined) {
    app.log.warn('SECRETS_MASTER_KEY is not set: the server secrets are stored unwrapped in the database, so a backup of it forges tokens, decrypts webhook signing secrets and opens hosted onboarding links (docs/operations.md "Server secrets")');
  }
  return serverSecrets;
}

/**
 * Metrics, rate limits, the key and its CSRF token, the OpenAPI document and the upload gate: what a request passes
 * before its route runs.
 */
async function installAccessChecks(
  app: FastifyInstance,
  config: Config,
  { storage, storageFaults, clock, apiKeys, csrfTokens, observeResponse }: {
    storage: Storage;
    storageFaults: StorageFaultState;
    clock: Clock;
    apiKeys: ApiKeyService;
    csrfTokens: CsrfTokenService;
    observeResponse: AppDependencies['observeResponse'];
  },
): Promise<void> {
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
  if (observeResponse) app.addHook('onResponse', async (request, reply) => observeResponse(request.method, request.routeOptions.url, reply.statusCode));
  await installOpenApi(app);
  installUploadGate(app, {
    concurrency: config.uploadConcurrency,
    concurrencyPerCustomer: config.uploadConcurrencyPerCustomer,
    minBytesPerSecond: config.uploadMinBytesPerSecond,
    rateWindowMs: config.uploadRateWindowMs,
  });
}

/** What the modules are built on (their context), and what the end users' routes and pages take beside it. */
interface Platform {
  context: ModuleContext;
  /** The sandbox's test clocks; none in production. */
  testClocks: TestClocks | undefined;
  onboardingLinks: OnboardingLinks;
  verification: SandboxVerification<EndUserRecord>;
}

/**
 * Provisioning at the provider, end users, the Idempotency-Key hook and the provider events inbox (with the end users'
 * verification lifecycle, the first it applies), each with its workers.
 */
async function platformServices(base: Foundation): Promise<Platform> {
  const { app, config, storage, clock, customerClocks, testClocks, providers, workers, reaper, serverSecrets } = base;
  const provisioning = new Provisioning(storage, providers, clock, app.log);
  workers.push(new PollingWorker('provider-operation-reaper', () => provisioning.undoAbandoned(), workerPollIntervalMs, app.log));
  reaper.add(async (now, limit) => provisioning.deleteFinished(now, limit));
  const onboardingLinks = new OnboardingLinks(await serverSecrets.get('onboarding-links'), config.publicUrl);
  // A deleted test clock's timers go back to the server clock.
  const sandboxTimers = sandboxTimersOf(config, storage, clock, customerClocks);
  if (sandboxTimers) customerClocks.onDetach((clockId) => sandboxTimers.releaseClock(clockId));
  const announcedDecisions = sandboxTimers?.announcedAnswers('end_user') ?? noAnnouncedAnswers;
  const endUsers = new EndUserService(storage, provisioning, base.files, clock, onboardingLinks, announcedDecisions, config.documentStorageQuotaBytes, customerClocks);
  await installIdempotencyKeys(base);
  // Provider outcomes, whoever reports them, are applied by one claimed worker (docs/providers.md "Reporting outcomes").
  const providerEvents = new ProviderEventInbox(storage, clock, app.log);
  workers.push(new PollingWorker('provider-events', () => providerEvents.applyDue(), workerPollIntervalMs, app.log));
  if (config.paymentProvider) await providerEventRoutes(app, providerEvents, clock, config.paymentProvider.secret);
  const verification = endUserVerification(base, providerEvents, sandboxTimers);
  const context: ModuleContext = { config, storage, providers, provisioning, providerEvents, clock, customerClocks, caches: base.caches, files: base.files, endUsers, workers, reaper, log: app.log, metrics: app.metricsRegistry, serverSecrets };
  return { context, testClocks, onboardingLinks, verification };
}

/** The Idempotency-Key hook (docs/idempotency.md), and its expired keys handed to the reaper. */
async function installIdempotencyKeys({ app, config, storage, clock, customerClocks, serverSecrets, reaper }: Foundation): Promise<void> {
  const idempotency = new IdempotencyKeys(
    storage,
    clock,
    { leaseMs: config.idempotencyLeaseMs, retentionMs: config.idempotencyRetentionMs },
    // Answers that hold a secret (a new webhook's signing secret) are stored encrypted with a key of the deployment.
    new SecretBox(await serverSecrets.get('idempotency-answers')),
    customerClocks,
  );
  // Before any route: the routes that declare config.idempotency run under it.
  installIdempotency(app, idempotency);
  reaper.add(async (now, limit) => idempotency.deleteExpired(now, limit));
  customerClocks.onAdvance((testClock) => idempotency.deleteExpiredOnClock(testClock));
  customerClocks.onDetach((clockId) => idempotency.releaseClock(clockId));
}

/** The end users' verification lifecycle, and the simulated KYC provider that decides in the sandbox. */
function endUserVerification({ app, storage, clock, customerClocks, workers }: Foundation, providerEvents: ProviderEventInbox, sandboxTimers: SandboxTimers | undefined): SandboxVerification<EndUserRecord> {
  const verificationLifecycle = new EndUserVerificationLifecycle(storage, clock);
  providerEvents.register(verificationLifecycle);
  const verification = new SandboxVerification<EndUserRecord>(providerEvents, verificationLifecycle, sandboxTimers);
  if (sandboxTimers) {
    workers.push(new PollingWorker('sandbox-kyc-decisions', () => verification.applyDueSandboxDecisions(), workerPollIntervalMs, app.log));
    customerClocks.onAdvance((testClock) => verification.applyDueSandboxDecisionsOnClock(testClock));
  }
  return verification;
}

type ModuleServices = Awaited<ReturnType<typeof moduleServices>>;

/** Each module's services (and its workers, added to the context's), which its plugin and the dashboard share. */
async function moduleServices(context: ModuleContext, resolveHost: HostResolver | undefined) {
  const fiatAccounts = { fiatAccounts: new FiatAccountService(context.storage, context.provisioning, context.clock, context.endUsers), sandbox: fiatAccountStatuses(context) };
  const payees = payeeServices(context);
  const virtualAccounts = virtualAccountServices(context);
  const { documents } = documentServices(context);
  const { deposits } = depositServices(context);
  const transactions = new TransactionService(context.storage);
  const payments = paymentServices(context);
  const wallets = walletServices(context);
  const otc = otcServices(context);
  const { webhooks, deliveries, eventDeliveries } = await webhookServices(context, resolveHost);
  const events = new EventService(context.storage);
  const eventStreams = new EventStreams(context.storage);
  return { fiatAccounts, payees, virtualAccounts, documents, deposits, transactions, payments, wallets, otc, webhooks, deliveries, events, eventDeliveries, eventStreams };
}

/** Each module's routes in its own encapsulated plugin (docs/modules.md); the OpenAPI document lists them in this order. */
async function registerModules(app: FastifyInstance, { context, testClocks, onboardingLinks, verification }: Platform, modules: ModuleServices): Promise<void> {
  const { endUsers, config } = context;
  await app.register(fiatAccountsPlugin, modules.fiatAccounts);
  await app.register(endUsersPlugin, { endUsers, onboardingLinks, sandboxVerification: config.apiEnvironment === 'sandbox' ? verification : undefined });
  await app.register(payeesPlugin, modules.payees);
  await app.register(virtualAccountsPlugin, modules.virtualAccounts);
  await app.register(documentsPlugin, { documents: modules.documents });
  await app.register(depositsPlugin, { deposits: modules.deposits });
  // The fee preview resolves a payment's scheme and payee as the payment does: the payments service previews it.
  await app.register(feesPlugin, { feePreview: modules.payments.feePreview });
  await app.register(paymentsPlugin, modules.payments);
  await app.register(transactionsPlugin, { transactions: modules.transactions });
  await app.register(walletsPlugin, modules.wallets);
  await app.register(otcPlugin, modules.otc);
  await app.register(webhooksPlugin, { webhooks: modules.webhooks });
  // An event lists its deliveries, which are the webhooks module's: it hands in their record and their read.
  await app.register(eventsPlugin, { events: modules.events, deliveries: modules.eventDeliveries, streams: modules.eventStreams });
  if (testClocks) await app.register(testClocksPlugin, { clocks: testClocks });
}

/** The dashboard and hosted onboarding pages, on the same services as the API (docs/dashboard.md). */
async function registerDashboard(base: Foundation, apiKeys: ApiKeyService, { context, onboardingLinks, verification }: Platform, modules: ModuleServices): Promise<void> {
  const { app, config, storage, clock } = base;
  const dashboardUsers = new DashboardUserService(storage, clock, { publicUrl: config.publicUrl, idleMs: config.dashboardSessionIdleMs, maxMs: config.dashboardSessionMaxMs });
  base.reaper.add(async (now, limit) => dashboardUsers.deleteExpired(now, limit));
  await registerWebPages(app, {
    config,
    clock,
    customers: new CustomerService(storage, clock),
    formTokens: new FormTokens(await base.serverSecrets.get('dashboard-forms')),
    users: dashboardUsers,
    reveals: new DashboardReveals(storage, clock, new SecretBox(await base.serverSecrets.get('dashboard-reveals'))),
    apiKeys,
    endUsers: context.endUsers,
    onboardingLinks,
    verification,
    documents: modules.documents,
    fiatAccounts: modules.fiatAccounts.fiatAccounts,
    virtualAccounts: modules.virtualAccounts.virtualAccounts,
    accountStatuses: accountStatusesOf(modules),
    payees: modules.payees,
    otc: modules.otc,
    wallets: modules.wallets,
    payments: modules.payments,
    transactions: modules.transactions,
    deposits: modules.deposits,
    webhooks: modules.webhooks,
    events: modules.events,
  });
}

/** The sandbox bank's status changes of both kinds of account, for the dashboard; none outside the sandbox. */
function accountStatusesOf({ fiatAccounts, virtualAccounts }: ModuleServices) {
  return fiatAccounts.sandbox && virtualAccounts.sandbox ? { fiat: fiatAccounts.sandbox, virtual: virtualAccounts.sandbox } : undefined;
}

/** The workers handed to server.ts, the close order, and the application made ready. */
async function finishStartup({ app, storage, storageFaults, workers }: Foundation, providerEvents: ProviderEventInbox): Promise<void> {
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
}
