import path from 'node:path';
import { ConfigError } from './config-error.js';
import type { MasterKeys } from './master-keys.js';
import { webhookDisableAfterFailingMsDefault } from './limits.js';
import { readSettings, type SettingValues } from './settings.js';

export type ApiEnvironment = 'sandbox' | 'production';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** PostgreSQL connection string; undefined means the embedded SQLite database in dataDir. */
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /** PostgreSQL: one customer's money operations running at once per process (always set by loadConfig). */
  readonly moneyOperationsPerCustomer: number | undefined;
  readonly apiEnvironment: ApiEnvironment;
  readonly logLevel: string;
  /** Fastify trustProxy value: false (socket address), true, a hop count, or a list of addresses/CIDRs. */
  readonly trustProxy: boolean | number | string[];
  /** Per API key; undefined turns all rate limiting off (benchmarks). */
  readonly rateLimitPerSecond: number | undefined;
  /** Per client address, before authentication; undefined = no address limit. */
  readonly rateLimitPerIpPerSecond: number | undefined;
  /** Refused authentications per client address per minute; undefined = not limited. */
  readonly rateLimitFailedAuthPerIpPerMinute: number | undefined;
  readonly redisUrl: string | undefined;
  /** How long a rate-limit call waits for Redis before the instance counts on its own. */
  readonly rateLimitRedisTimeoutMs: number;
  /** Browser origins other than this server's own that may call the API: true any, a list those (empty: none). */
  readonly corsOrigins: true | string[];
  readonly shutdownTimeoutMs: number;
  /** Sandbox: delay after which simulated decisions and settlements happen by themselves; undefined = never. */
  readonly sandboxAutoSettleMs: number | undefined;
  /** Sandbox: how long a claimed settlement is its instance's before another may take it (workers/claim.ts). */
  readonly settlementLeaseMs: number;
  /** How long a claimed batch of outbox events is this instance's before another may fan it out (a crash mid-batch). */
  readonly webhookFanOutLeaseMs: number;
  /** The metrics listener (http/metrics.ts); undefined port = no listener. */
  readonly metricsHost: string;
  readonly metricsPort: number | undefined;
  /** When set, scrapers must send `Authorization: Bearer <token>`. */
  readonly metricsToken: string | undefined;
  /** Idempotency-Key: how long a reservation belongs to its request, and how long keys and answers are kept. */
  readonly idempotencyLeaseMs: number;
  readonly idempotencyRetentionMs: number;
  /** OTC exchange (docs/otc.md): how long a quote can be confirmed, and the spread taken from the mid rate. */
  readonly otcQuoteTtlSeconds: number;
  readonly otcSpreadBps: number;
  /** Large-body requests (documents, end users with reports) one process reads at once, and of one customer (http/upload-gate.ts). */
  readonly uploadConcurrency: number;
  readonly uploadConcurrencyPerCustomer: number;
  /** A large body arriving slower than this many bytes a second over the last rate window is cut (408). */
  readonly uploadMinBytesPerSecond: number;
  readonly uploadRateWindowMs: number;
  /** Bytes of document files (uploads and end-user reports) one customer may have stored. */
  readonly documentStorageQuotaBytes: number;
  /** Webhooks (docs/webhooks.md): receivers on loopback/private addresses allowed (development and tests only). */
  readonly webhookAllowPrivateUrls: boolean;
  /** The wait after each failed attempt; a delivery fails for good after delays.length + 1 attempts. */
  readonly webhookRetryDelaysMs: readonly number[];
  /** Consecutive failed attempts that disable a subscription, and for how long it must have been failing. */
  readonly webhookDisableAfter: { readonly failures: number; readonly failingMs: number };
  readonly webhookTimeoutMs: number;
  /** Events, webhook deliveries and their attempts older than this are deleted (docs/operations.md "Retention"). */
  readonly eventRetentionMs: number;
  /** Where browsers reach this server (sign-in and onboarding links start with it); no trailing slash. */
  readonly publicUrl: string;
  /** The https origins a customer's onboarding logo may be loaded from (none: no logos). */
  readonly onboardingLogoOrigins: readonly string[];
  /** Dashboard sessions end after this long without a request, and this long after sign-in whatever happens. */
  readonly dashboardSessionIdleMs: number;
  readonly dashboardSessionMaxMs: number;
  /**
   * SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE: the keys that wrap the server secrets, newest first; undefined
   * when neither is set (storage/server-secrets.ts decides what that means).
   */
  readonly secretsMasterKeys: MasterKeys | undefined;
  /** The HTTP payment adapter (docs/providers.md "The HTTP adapter"); undefined: the sandbox bank settles payments. */
  readonly paymentProvider: { readonly url: string; readonly secret: string } | undefined;
}

export { ConfigError };

/**
 * Reads the environment once into a frozen Config. Every variable, its default and its bounds are declared in
 * settings.ts (listed in the README); here each Config field is made of them.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const settings = readSettings(env);
  return Object.freeze({
    port: settings.PORT,
    host: settings.HOST,
    dataDir: path.resolve(settings.DATA_DIR),
    databaseUrl: settings.DATABASE_URL,
    databasePoolSize: settings.DATABASE_POOL_SIZE,
    moneyOperationsPerCustomer: settings.MONEY_OPERATIONS_PER_CUSTOMER,
    apiEnvironment: settings.API_ENVIRONMENT,
    logLevel: settings.LOG_LEVEL,
    trustProxy: settings.TRUST_PROXY,
    rateLimitPerSecond: settings.RATE_LIMIT_PER_SECOND,
    rateLimitPerIpPerSecond: settings.RATE_LIMIT_PER_IP_PER_SECOND,
    rateLimitFailedAuthPerIpPerMinute: settings.RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE,
    redisUrl: settings.REDIS_URL,
    rateLimitRedisTimeoutMs: settings.RATE_LIMIT_REDIS_TIMEOUT_MS,
    corsOrigins: settings.CORS_ORIGINS,
    shutdownTimeoutMs: settings.SHUTDOWN_TIMEOUT_MS,
    sandboxAutoSettleMs: settings.SANDBOX_AUTO_SETTLE_MS,
    settlementLeaseMs: settings.SETTLEMENT_LEASE_SECONDS * 1000,
    webhookFanOutLeaseMs: settings.WEBHOOK_FAN_OUT_LEASE_SECONDS * 1000,
    metricsHost: settings.METRICS_HOST,
    metricsPort: settings.METRICS_PORT,
    metricsToken: settings.METRICS_TOKEN,
    idempotencyLeaseMs: settings.IDEMPOTENCY_LEASE_SECONDS * 1000,
    idempotencyRetentionMs: settings.IDEMPOTENCY_RETENTION_HOURS * 3_600_000,
    otcQuoteTtlSeconds: settings.OTC_QUOTE_TTL_SECONDS,
    otcSpreadBps: settings.OTC_SPREAD_BPS,
    uploadConcurrency: settings.UPLOAD_CONCURRENCY,
    uploadConcurrencyPerCustomer: settings.UPLOAD_CONCURRENCY_PER_CUSTOMER,
    uploadMinBytesPerSecond: settings.UPLOAD_MIN_BYTES_PER_SECOND,
    uploadRateWindowMs: settings.UPLOAD_RATE_WINDOW_MS,
    documentStorageQuotaBytes: settings.DOCUMENT_STORAGE_QUOTA_BYTES,
    webhookAllowPrivateUrls: settings.WEBHOOK_ALLOW_PRIVATE_URLS,
    webhookRetryDelaysMs: Object.freeze([...settings.WEBHOOK_RETRY_DELAYS]),
    webhookDisableAfter: Object.freeze(disableAfter(settings)),
    webhookTimeoutMs: settings.WEBHOOK_TIMEOUT_MS,
    eventRetentionMs: settings.EVENT_RETENTION_DAYS * 86_400_000,
    publicUrl: settings.PUBLIC_URL ?? `http://localhost:${settings.PORT}`,
    onboardingLogoOrigins: Object.freeze([...settings.ONBOARDING_LOGO_ORIGINS]),
    dashboardSessionIdleMs: settings.DASHBOARD_SESSION_IDLE_MINUTES * 60_000,
    dashboardSessionMaxMs: settings.DASHBOARD_SESSION_MAX_HOURS * 3_600_000,
    secretsMasterKeys: masterKeys(settings),
    paymentProvider: paymentProvider(settings),
  });
}

/** The HTTP payment adapter is selected by its URL, and cannot work without the secret both sides sign with. */
function paymentProvider(settings: SettingValues): Config['paymentProvider'] {
  const url = settings.PAYMENT_PROVIDER_URL;
  const secret = settings.PAYMENT_PROVIDER_SECRET;
  if (url === undefined && secret === undefined) return undefined;
  if (url === undefined) throw new ConfigError('PAYMENT_PROVIDER_SECRET is set without PAYMENT_PROVIDER_URL');
  if (secret === undefined) throw new ConfigError('PAYMENT_PROVIDER_URL needs PAYMENT_PROVIDER_SECRET, the secret the payment provider signs with');
  return Object.freeze({ url, secret });
}

/**
 * WEBHOOK_DISABLE_AFTER=N disables after N consecutive failed attempts. Unset: once a whole retry schedule has
 * failed in a row and the failures have lasted at least five days, so a receiver down for a weekend is not dropped.
 */
function disableAfter(settings: SettingValues): Config['webhookDisableAfter'] {
  if (settings.WEBHOOK_DISABLE_AFTER === undefined) return { failures: settings.WEBHOOK_RETRY_DELAYS.length + 1, failingMs: webhookDisableAfterFailingMsDefault };
  return { failures: settings.WEBHOOK_DISABLE_AFTER, failingMs: 0 };
}

/** The master keys come from SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE, never from two sources that could differ. */
function masterKeys(settings: SettingValues): MasterKeys | undefined {
  if (settings.SECRETS_MASTER_KEY && settings.SECRETS_MASTER_KEY_FILE) throw new ConfigError('set SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE, not both');
  return settings.SECRETS_MASTER_KEY ?? settings.SECRETS_MASTER_KEY_FILE;
}
