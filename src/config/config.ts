import path from 'node:path';
import { ConfigError } from './config-error.js';
import { masterKeysFromSettings, type MasterKeys } from './master-keys.js';
import {
  documentStorageQuotaBytesDefault,
  idempotencyLeaseSecondsDefault,
  idempotencyRetentionHoursDefault,
  idempotencyRetentionHoursMin,
  otcQuoteTtlSecondsDefault,
  otcSpreadBpsDefault,
  otcSpreadBpsMax,
  metricsPortDefault,
  uploadConcurrencyDefault, uploadConcurrencyPerCustomerDefault, uploadMinBytesPerSecondDefault, uploadRateWindowMsDefault, uploadRateWindowMsMin, requestTimeoutMs, webhookDisableAfterFailingMsDefault, webhookRetryDelaysDefault, webhookTimeoutMsDefault, rateLimitFailedAuthPerIpPerMinuteDefault, rateLimitPerIpPerSecondDefault, rateLimitPerSecondDefault, shutdownTimeoutMsDefault, dashboardSessionIdleMinutesDefault, dashboardSessionMaxHoursDefault } from './limits.js';

export type ApiEnvironment = 'sandbox' | 'production';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** PostgreSQL connection string; undefined means the embedded SQLite database in dataDir. */
  readonly databaseUrl: string | undefined;
  readonly databasePoolSize: number;
  /** PostgreSQL: one customer's money operations running at once per process; undefined = half the pool. */
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
  /** Browser origins other than this server's own that may call the API: true any, a list those (empty: none). */
  readonly corsOrigins: true | string[];
  readonly shutdownTimeoutMs: number;
  /** Sandbox: delay after which simulated decisions and settlements happen by themselves; undefined = never. */
  readonly sandboxAutoSettleMs: number | undefined;
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
  /** Where browsers reach this server (sign-in and onboarding links start with it); no trailing slash. */
  readonly publicUrl: string;
  /** Dashboard sessions end after this long without a request, and this long after sign-in whatever happens. */
  readonly dashboardSessionIdleMs: number;
  readonly dashboardSessionMaxMs: number;
  /**
   * SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE: the keys that wrap the server secrets, newest first; undefined
   * when neither is set (storage/server-secrets.ts decides what that means).
   */
  readonly secretsMasterKeys: MasterKeys | undefined;
}

export { ConfigError };

type Env = Record<string, string | undefined>;

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integerSetting(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

function parseDatabaseUrl(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError('DATABASE_URL is not a valid URL (expected postgres://user:password@host:5432/database)');
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://, got "${url.protocol}//"`);
  }
  return value;
}

function parseTrustProxy(raw: string | undefined): Config['trustProxy'] {
  const value = raw?.trim();
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  if (/^[0-9]+$/.test(value)) return Number(value);
  return value.split(',').map((entry) => entry.trim()).filter(Boolean);
}

function parseRateLimit(name: string, raw: string | undefined, fallback: number): number | undefined {
  const value = raw?.trim();
  if (!value) return fallback;
  if (value === 'off') return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) < 1 || Number(value) > 1_000_000) {
    throw new ConfigError(`${name} must be a whole number from 1 to 1000000 or "off", got "${value}"`);
  }
  return Number(value);
}

function parseAutoSettle(raw: string | undefined): number | undefined {
  const value = raw?.trim();
  if (!value) return 2000;
  if (value === 'off') return undefined;
  if (!/^[0-9]+$/.test(value) || Number(value) > 86_400_000) {
    throw new ConfigError(`SANDBOX_AUTO_SETTLE_MS must be a whole number of milliseconds up to 86400000 or "off", got "${value}"`);
  }
  return Number(value);
}

function parseMetricsPort(env: Env): number | undefined {
  if (env.METRICS_PORT?.trim() === 'off') return undefined;
  return integerSetting(env, 'METRICS_PORT', metricsPortDefault, 0, 65535);
}

/**
 * CORS_ORIGINS: unset, no other origin (pages of this server's own origin need no CORS); `*`, any; otherwise origins
 * as a browser sends them, each checked so that a path or a trailing slash, which would never match, stops start-up.
 */
function parseCorsOrigins(raw: string | undefined): Config['corsOrigins'] {
  const value = raw?.trim();
  if (!value) return [];
  if (value === '*') return true;
  return value.split(',').map((entry) => entry.trim()).filter(Boolean).map((origin) => {
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS must be * or comma-separated origins such as https://app.example.com (scheme, host and port, lower case, no path), got "${origin}"`);
    }
    return origin;
  });
}

const durationUnitsMs: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** "5s,5m,30m,2h": each a whole number with a unit (ms, s, m, h, d), at most 7 days each, 1-20 of them. */
function parseRetryDelays(raw: string | undefined): number[] {
  const value = raw?.trim() || webhookRetryDelaysDefault;
  const delays = value.split(',').map((entry) => {
    const match = /^([0-9]{1,9})(ms|s|m|h|d)$/.exec(entry.trim());
    const delayMs = match ? Number(match[1]) * durationUnitsMs[match[2]!]! : NaN;
    if (!(delayMs >= 0 && delayMs <= 7 * 86_400_000)) {
      throw new ConfigError(`WEBHOOK_RETRY_DELAYS must be a comma-separated list of durations such as 5s,5m,30m,2h (each at most 7d), got "${value}"`);
    }
    return delayMs;
  });
  if (delays.length > 20) throw new ConfigError(`WEBHOOK_RETRY_DELAYS lists at most 20 delays, got ${delays.length}`);
  return delays;
}

/**
 * WEBHOOK_DISABLE_AFTER=N disables after N consecutive failed attempts. Unset: once a whole retry schedule has
 * failed in a row and the failures have lasted at least five days, so a receiver down for a weekend is not dropped.
 */
function parseDisableAfter(env: Env, retryDelaysMs: readonly number[]): Config['webhookDisableAfter'] {
  if (!env.WEBHOOK_DISABLE_AFTER?.trim()) return { failures: retryDelaysMs.length + 1, failingMs: webhookDisableAfterFailingMsDefault };
  return { failures: integerSetting(env, 'WEBHOOK_DISABLE_AFTER', 1, 1, 1_000_000), failingMs: 0 };
}

/** PUBLIC_URL: an absolute http(s) URL without query or fragment; by default this machine's PORT on localhost. */
function parsePublicUrl(raw: string | undefined, port: number): string {
  const value = raw?.trim();
  if (!value) return `http://localhost:${port}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(`PUBLIC_URL must be an absolute URL such as https://api.example.com, got "${value}"`);
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.search || url.hash || url.username || url.password) {
    throw new ConfigError(`PUBLIC_URL must be an http(s) URL without credentials, query or fragment, got "${value}"`);
  }
  return url.toString().replace(/\/+$/, '');
}

function parseBoolean(name: string, raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase();
  if (!value || value === 'false') return false;
  if (value === 'true') return true;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

/** Reads the environment once into a frozen Config; every setting and default is listed in the README. */
export function loadConfig(env: Env = process.env): Config {
  const apiEnvironment = (env.API_ENVIRONMENT?.trim() || 'sandbox') as ApiEnvironment;
  if (apiEnvironment !== 'sandbox' && apiEnvironment !== 'production') {
    throw new ConfigError(`API_ENVIRONMENT must be "sandbox" or "production", got "${env.API_ENVIRONMENT}"`);
  }
  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!logLevels.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${logLevels.join(', ')}, got "${logLevel}"`);
  }
  const retryDelaysMs = parseRetryDelays(env.WEBHOOK_RETRY_DELAYS);
  const port = integerSetting(env, 'PORT', 3000, 0, 65535);
  return Object.freeze({
    port,
    host: env.HOST?.trim() || '0.0.0.0',
    dataDir: path.resolve(env.DATA_DIR?.trim() || './data'),
    databaseUrl: parseDatabaseUrl(env.DATABASE_URL),
    databasePoolSize: integerSetting(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    moneyOperationsPerCustomer: env.MONEY_OPERATIONS_PER_CUSTOMER?.trim() ? integerSetting(env, 'MONEY_OPERATIONS_PER_CUSTOMER', 1, 1, 1000) : undefined,
    apiEnvironment,
    logLevel,
    trustProxy: parseTrustProxy(env.TRUST_PROXY),
    rateLimitPerSecond: parseRateLimit('RATE_LIMIT_PER_SECOND', env.RATE_LIMIT_PER_SECOND, rateLimitPerSecondDefault),
    rateLimitPerIpPerSecond: parseRateLimit('RATE_LIMIT_PER_IP_PER_SECOND', env.RATE_LIMIT_PER_IP_PER_SECOND, rateLimitPerIpPerSecondDefault),
    rateLimitFailedAuthPerIpPerMinute: parseRateLimit('RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE', env.RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE, rateLimitFailedAuthPerIpPerMinuteDefault),
    redisUrl: env.REDIS_URL?.trim() || undefined,
    corsOrigins: parseCorsOrigins(env.CORS_ORIGINS),
    shutdownTimeoutMs: integerSetting(env, 'SHUTDOWN_TIMEOUT_MS', shutdownTimeoutMsDefault, 0, 600_000),
    sandboxAutoSettleMs: parseAutoSettle(env.SANDBOX_AUTO_SETTLE_MS),
    metricsHost: env.METRICS_HOST?.trim() || '127.0.0.1',
    metricsPort: parseMetricsPort(env),
    metricsToken: env.METRICS_TOKEN?.trim() || undefined,
    idempotencyLeaseMs: integerSetting(env, 'IDEMPOTENCY_LEASE_SECONDS', idempotencyLeaseSecondsDefault, 1, 86_400) * 1000,
    idempotencyRetentionMs:
      integerSetting(env, 'IDEMPOTENCY_RETENTION_HOURS', idempotencyRetentionHoursDefault, idempotencyRetentionHoursMin, 24 * 365) * 60 * 60 * 1000,
    otcQuoteTtlSeconds: integerSetting(env, 'OTC_QUOTE_TTL_SECONDS', otcQuoteTtlSecondsDefault, 1, 3600),
    otcSpreadBps: integerSetting(env, 'OTC_SPREAD_BPS', otcSpreadBpsDefault, 0, otcSpreadBpsMax),
    uploadConcurrency: integerSetting(env, 'UPLOAD_CONCURRENCY', uploadConcurrencyDefault, 1, 1000),
    uploadConcurrencyPerCustomer: integerSetting(env, 'UPLOAD_CONCURRENCY_PER_CUSTOMER', uploadConcurrencyPerCustomerDefault, 1, 1000),
    uploadMinBytesPerSecond: integerSetting(env, 'UPLOAD_MIN_BYTES_PER_SECOND', uploadMinBytesPerSecondDefault, 1, 1_000_000_000),
    uploadRateWindowMs: integerSetting(env, 'UPLOAD_RATE_WINDOW_MS', uploadRateWindowMsDefault, uploadRateWindowMsMin, requestTimeoutMs),
    documentStorageQuotaBytes: integerSetting(env, 'DOCUMENT_STORAGE_QUOTA_BYTES', documentStorageQuotaBytesDefault, 0, Number.MAX_SAFE_INTEGER),
    webhookAllowPrivateUrls: parseBoolean('WEBHOOK_ALLOW_PRIVATE_URLS', env.WEBHOOK_ALLOW_PRIVATE_URLS),
    webhookRetryDelaysMs: Object.freeze(retryDelaysMs),
    webhookDisableAfter: Object.freeze(parseDisableAfter(env, retryDelaysMs)),
    webhookTimeoutMs: integerSetting(env, 'WEBHOOK_TIMEOUT_MS', webhookTimeoutMsDefault, 100, 120_000),
    publicUrl: parsePublicUrl(env.PUBLIC_URL, port),
    dashboardSessionIdleMs: integerSetting(env, 'DASHBOARD_SESSION_IDLE_MINUTES', dashboardSessionIdleMinutesDefault, 1, 7 * 24 * 60) * 60_000,
    dashboardSessionMaxMs: integerSetting(env, 'DASHBOARD_SESSION_MAX_HOURS', dashboardSessionMaxHoursDefault, 1, 30 * 24) * 3_600_000,
    secretsMasterKeys: masterKeysFromSettings(env.SECRETS_MASTER_KEY, env.SECRETS_MASTER_KEY_FILE),
  });
}
