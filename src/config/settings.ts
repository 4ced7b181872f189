import { ConfigError } from './config-error.js';
import {
  dashboardSessionIdleMinutesDefault,
  dashboardSessionIdleMinutesMax,
  dashboardSessionMaxHoursDefault,
  dashboardSessionMaxHoursMax,
  databasePoolSizeDefault,
  databasePoolSizeMax,
  documentStorageQuotaBytesDefault,
  eventRetentionDays,
  eventRetentionDaysMax,
  eventRetentionDaysMin,
  idempotencyLeaseSecondsDefault,
  idempotencyRetentionHoursDefault,
  idempotencyLeaseSecondsMax,
  idempotencyRetentionHoursMax,
  idempotencyRetentionHoursMin,
  leaseSecondsMax,
  metricsPortDefault,
  moneyOperationsPerCustomerDefault,
  moneyOperationsPerCustomerMax,
  otcQuoteTtlSecondsDefault,
  otcQuoteTtlSecondsMax,
  portDefault,
  otcSpreadBpsDefault,
  otcSpreadBpsMax,
  rateLimitFailedAuthPerIpPerMinuteDefault,
  rateLimitMax,
  rateLimitPerIpPerSecondDefault,
  rateLimitPerSecondDefault,
  rateLimitRedisTimeoutMsDefault,
  rateLimitRedisTimeoutMsMax,
  sandboxAutoSettleMsDefault,
  sandboxAutoSettleMsMax,
  settlementLeaseSecondsDefault,
  webhookFanOutLeaseSecondsDefault,
  requestTimeoutMs,
  shutdownTimeoutMsDefault,
  shutdownTimeoutMsMax,
  tcpPortMax,
  uploadConcurrencyDefault,
  uploadConcurrencyMax,
  uploadConcurrencyPerCustomerDefault,
  uploadMinBytesPerSecondDefault,
  uploadMinBytesPerSecondMax,
  uploadRateWindowMsDefault,
  uploadRateWindowMsMin,
  webhookDisableAfterAttemptsMax,
  webhookRetryDelayMsMax,
  webhookRetryDelaysMax,
  webhookRetryDelaysMsDefault,
  webhookTimeoutMsDefault,
  webhookTimeoutMsMax,
  webhookTimeoutMsMin,
} from './limits.js';
import { boolean, durations, httpsOrigins, httpUrl, integer, InvalidValue, masterKeyFile, masterKeys, oneOf, orOff, origins, postgresUrl, standardWebhooksSecret, text, trustProxy, type SettingType } from './setting-types.js';

/**
 * Every environment variable the server and the CLI read, declared once: its kind of value (parser, bounds), its
 * default, one line of documentation and where it is listed. loadConfig (config.ts) reads them through
 * readSettings; the README's settings table and .env.example are generated from here (`npm run docs:settings`,
 * settings-docs.ts), and a test fails when either is stale. Decision: docs/decisions/0011-settings-schema.md.
 */

/** The groups of the generated docs, in their order. */
export const settingSections = ['Server', 'Database', 'Server secrets', 'Rate limits', 'Metrics', 'Requests and uploads', 'Providers', 'Sandbox and OTC', 'Webhooks', 'Dashboard'] as const;

export interface SettingDeclaration<T, Value extends T | undefined> {
  readonly section: (typeof settingSections)[number];
  readonly type: SettingType<T>;
  /** The value when the variable is unset or empty; undefined: none (the setting is off, or derived in loadConfig). */
  readonly default: Value;
  /** The default in words, where the value alone does not say it (derived from other settings, or what unset means). */
  readonly defaultText?: string;
  /** One line: what it does. Markdown code spans are fine; links go in `see`. */
  readonly doc: string;
  /** The page of docs/ (and its heading) that tells more. */
  readonly see?: { readonly page: string; readonly heading?: string };
  /** Never shown: not in a refusal's message, and never given a value in .env.example. */
  readonly secret?: true;
}

type Described = Omit<SettingDeclaration<unknown, undefined>, 'type' | 'default'>;

function setting<T>(declaration: Described & { type: SettingType<T>; default: NoInfer<T> }): SettingDeclaration<T, T>;
function setting<T>(declaration: Described & { type: SettingType<T>; default?: undefined }): SettingDeclaration<T, T | undefined>;
function setting<T>(declaration: Described & { type: SettingType<T>; default?: NoInfer<T> }): SettingDeclaration<T, T | undefined> {
  return { ...declaration, default: declaration.default };
}

export const settings = {
  PORT: setting({ section: 'Server', type: integer({ min: 0, max: tcpPortMax }), default: portDefault, doc: 'HTTP port of the API, the dashboard and the onboarding pages.' }),
  HOST: setting({ section: 'Server', type: text('an address'), default: '0.0.0.0', doc: 'Interface to listen on.' }),
  PUBLIC_URL: setting({
    section: 'Server',
    type: httpUrl,
    defaultText: '`http://localhost:$PORT`',
    doc: 'Where browsers reach the server (e.g. `https://api.example.com`); dashboard sign-in links and hosted onboarding links start with it.',
  }),
  API_ENVIRONMENT: setting({
    section: 'Server',
    type: oneOf(['sandbox', 'production']),
    default: 'sandbox',
    doc: '`sandbox`: `sk_test_` keys and the built-in simulated provider. `production`: `sk_live_` keys; refuses to start without a real provider (none ships yet).',
  }),
  LOG_LEVEL: setting({
    section: 'Server',
    type: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    doc: 'JSON log lines (pino); keys, authorization, CSRF and cookie headers, credentials in query strings and the tokens of links are redacted.',
    see: { page: 'docs/operations.md', heading: 'Logs' },
  }),
  TRUST_PROXY: setting({
    section: 'Server',
    type: trustProxy,
    default: false,
    doc: 'Take the client address from `X-Forwarded-For`: a hop count, or the proxies\' addresses/CIDRs (`true` trusts any client\'s header: avoid). `false`: the socket address.',
  }),
  CORS_ORIGINS: setting({
    section: 'Server',
    type: origins,
    default: [],
    defaultText: 'unset (none)',
    doc: 'Other browser origins that may call the API, as browsers send them (`https://app.example.com,https://admin.example.com:8443`), or `*` for any. Unset: same-origin only.',
    see: { page: 'docs/operations.md', heading: 'Cross-origin requests' },
  }),
  ONBOARDING_LOGO_ORIGINS: setting({
    section: 'Server',
    type: httpsOrigins,
    default: [],
    defaultText: 'unset (none)',
    doc: 'Where customers may host the logo their hosted onboarding page shows (`https://cdn.example.com`): a logo URL set in the dashboard must be on one of these; the page\'s policy then loads images from that origin alone. Unset: no logos.',
    see: { page: 'docs/dashboard.md', heading: 'Hosted onboarding' },
  }),
  SHUTDOWN_TIMEOUT_MS: setting({
    section: 'Server',
    type: integer({ min: 0, max: shutdownTimeoutMsMax }),
    default: shutdownTimeoutMsDefault,
    doc: 'On SIGTERM/SIGINT, how long in-flight requests may take before the process exits anyway (exit 1).',
    see: { page: 'docs/operations.md', heading: 'Stopping' },
  }),

  DATA_DIR: setting({
    section: 'Database',
    type: text('a directory'),
    default: './data',
    doc: 'Directory of the embedded SQLite database (`customer-api.sqlite`) and of stored documents (on PostgreSQL, documents live in the database). Must be writable.',
    see: { page: 'docs/operations.md', heading: 'Files on disk' },
  }),
  DATABASE_URL: setting({
    section: 'Database',
    type: postgresUrl,
    defaultText: 'unset (SQLite in `DATA_DIR`)',
    doc: 'Use PostgreSQL instead of the embedded SQLite database.',
    secret: true,
  }),
  DATABASE_POOL_SIZE: setting({ section: 'Database', type: integer({ min: 1, max: databasePoolSizeMax }), default: databasePoolSizeDefault, doc: 'PostgreSQL connections per instance.' }),
  MONEY_OPERATIONS_PER_CUSTOMER: setting({
    section: 'Database',
    type: integer({ min: 1, max: moneyOperationsPerCustomerMax }),
    default: moneyOperationsPerCustomerDefault,
    doc: 'PostgreSQL: money operations of one customer running at once per instance; the rest wait in the instance, not in the pool.',
    see: { page: 'docs/operations.md', heading: 'Several instances' },
  }),

  SECRETS_MASTER_KEY: setting({
    section: 'Server secrets',
    type: masterKeys,
    doc: 'Wraps the server\'s own keys stored in the database (`openssl rand -base64 32`); during a rotation the new key, then the previous one. Required in production; unset in the embedded sandbox, one is generated into `DATA_DIR/secrets-master.key`.',
    see: { page: 'docs/operations.md', heading: 'Server secrets' },
    secret: true,
  }),
  SECRETS_MASTER_KEY_FILE: setting({
    section: 'Server secrets',
    type: masterKeyFile,
    doc: 'A file holding the same keys (separated by commas or newlines), e.g. a mounted secret; instead of `SECRETS_MASTER_KEY`, not with it.',
  }),

  RATE_LIMIT_PER_SECOND: setting({
    section: 'Rate limits',
    type: orOff(integer({ min: 1, max: rateLimitMax })),
    default: rateLimitPerSecondDefault,
    doc: 'Requests per second per API key (the browser pages: per client address); `off` turns all three limits off (benchmarks).',
    see: { page: 'docs/operations.md', heading: 'Rate limits' },
  }),
  RATE_LIMIT_PER_IP_PER_SECOND: setting({
    section: 'Rate limits',
    type: orOff(integer({ min: 1, max: rateLimitMax })),
    default: rateLimitPerIpPerSecondDefault,
    doc: 'Requests per second per client address, counted before the key is looked at.',
  }),
  RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: setting({
    section: 'Rate limits',
    type: orOff(integer({ min: 1, max: rateLimitMax })),
    default: rateLimitFailedAuthPerIpPerMinuteDefault,
    doc: 'Refused authentications per client address per minute; past it further refusals answer 429 until the minute ends, while valid keys from the address keep working.',
  }),
  REDIS_URL: setting({
    section: 'Rate limits',
    type: text('`redis://host:6379`'),
    defaultText: 'unset (in memory)',
    doc: 'Keep rate-limit counters in Redis, shared by all instances; unset, each instance counts on its own. The server starts, and answers, while Redis is away.',
    secret: true,
  }),
  RATE_LIMIT_REDIS_TIMEOUT_MS: setting({
    section: 'Rate limits',
    type: integer({ min: 1, max: rateLimitRedisTimeoutMsMax }),
    default: rateLimitRedisTimeoutMsDefault,
    doc: 'The longest a request waits for Redis at each of its limits; past it, or while Redis is down or frozen, each instance counts on its own (logged; metric `rate_limit_store_redis_available`).',
    see: { page: 'docs/operations.md', heading: 'Rate limits' },
  }),

  METRICS_PORT: setting({
    section: 'Metrics',
    type: orOff(integer({ min: 0, max: tcpPortMax })),
    default: metricsPortDefault,
    doc: 'Port of the metrics listener (`GET /metrics`, never on the API port).',
    see: { page: 'docs/operations.md', heading: 'Metrics' },
  }),
  METRICS_HOST: setting({ section: 'Metrics', type: text('an address'), default: '127.0.0.1', doc: 'Address the metrics listener binds to; keep it loopback or private.' }),
  METRICS_TOKEN: setting({ section: 'Metrics', type: text('any text'), doc: 'When set, the metrics listener answers only `Authorization: Bearer <token>`.', secret: true }),

  IDEMPOTENCY_LEASE_SECONDS: setting({
    section: 'Requests and uploads',
    type: integer({ min: 1, max: idempotencyLeaseSecondsMax }),
    default: idempotencyLeaseSecondsDefault,
    doc: 'How long a reserved Idempotency-Key stays its request\'s without renewal: a running request renews it three times a lease; a retry may take it over once it ran out (its process stopped).',
    see: { page: 'docs/idempotency.md' },
  }),
  IDEMPOTENCY_RETENTION_HOURS: setting({
    section: 'Requests and uploads',
    type: integer({ min: idempotencyRetentionHoursMin, max: idempotencyRetentionHoursMax }),
    default: idempotencyRetentionHoursDefault,
    doc: 'How long Idempotency-Keys and their answers are kept.',
  }),
  UPLOAD_CONCURRENCY: setting({
    section: 'Requests and uploads',
    type: integer({ min: 1, max: uploadConcurrencyMax }),
    default: uploadConcurrencyDefault,
    doc: 'Large-body requests (documents, end users with reports, the onboarding page\'s upload) one process reads at once.',
    see: { page: 'docs/operations.md', heading: 'Uploads' },
  }),
  UPLOAD_CONCURRENCY_PER_CUSTOMER: setting({
    section: 'Requests and uploads',
    type: integer({ min: 1, max: uploadConcurrencyMax }),
    default: uploadConcurrencyPerCustomerDefault,
    doc: 'Of those, one customer\'s at once through its API keys (each hosted onboarding link has as many of its own).',
  }),
  UPLOAD_MIN_BYTES_PER_SECOND: setting({
    section: 'Requests and uploads',
    type: integer({ min: 1, max: uploadMinBytesPerSecondMax }),
    default: uploadMinBytesPerSecondDefault,
    doc: 'A large body arriving slower than this over `UPLOAD_RATE_WINDOW_MS` is cut (408 `REQUEST_TIMEOUT`), so a stalled connection gives its permit back.',
  }),
  UPLOAD_RATE_WINDOW_MS: setting({
    section: 'Requests and uploads',
    type: integer({ min: uploadRateWindowMsMin, max: requestTimeoutMs }),
    default: uploadRateWindowMsDefault,
    doc: 'The sliding window of that minimum rate.',
  }),
  DOCUMENT_STORAGE_QUOTA_BYTES: setting({
    section: 'Requests and uploads',
    type: integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
    default: documentStorageQuotaBytesDefault,
    doc: 'Bytes of stored document files (uploads and reports) per customer (default 1 GiB); past it, 422 `STORAGE_QUOTA_EXCEEDED`.',
    see: { page: 'docs/documents.md' },
  }),

  PAYMENT_PROVIDER_URL: setting({
    section: 'Providers',
    type: httpUrl,
    defaultText: 'unset (the sandbox bank)',
    doc: 'Submit payments to the HTTP payment adapter at this base URL (`POST {url}/payments`) instead of the sandbox bank; its outcomes arrive signed at `POST /provider-events/http`. Needs PAYMENT_PROVIDER_SECRET.',
    see: { page: 'docs/providers.md', heading: 'The HTTP adapter' },
  }),
  PAYMENT_PROVIDER_SECRET: setting({
    section: 'Providers',
    type: standardWebhooksSecret,
    doc: 'The secret shared with the HTTP payment provider, `whsec_` and base64 of at least 24 bytes: it signs the submissions and the outcomes (Standard Webhooks).',
    see: { page: 'docs/providers.md', heading: 'The HTTP adapter' },
    secret: true,
  }),

  SANDBOX_AUTO_SETTLE_MS: setting({
    section: 'Sandbox and OTC',
    type: orOff(integer({ min: 0, max: sandboxAutoSettleMsMax })),
    default: sandboxAutoSettleMsDefault,
    doc: 'Sandbox: payments and wallet transfers settle, OTC orders move one step, and magic-name end users are decided, this long after creation; `off` leaves it to the simulation endpoints.',
  }),
  SETTLEMENT_LEASE_SECONDS: setting({
    section: 'Sandbox and OTC',
    type: integer({ min: 1, max: leaseSecondsMax }),
    default: settlementLeaseSecondsDefault,
    doc: 'Sandbox: how long a payment, wallet transfer or OTC step claimed for settlement is its instance\'s; one that stopped mid-way leaves it to another instance this long after.',
    see: { page: 'docs/operations.md', heading: 'Several instances' },
  }),
  OTC_QUOTE_TTL_SECONDS: setting({
    section: 'Sandbox and OTC',
    type: integer({ min: 1, max: otcQuoteTtlSecondsMax }),
    default: otcQuoteTtlSecondsDefault,
    doc: 'How long an OTC quote can be confirmed.',
    see: { page: 'docs/otc.md' },
  }),
  OTC_SPREAD_BPS: setting({
    section: 'Sandbox and OTC',
    type: integer({ min: 0, max: otcSpreadBpsMax }),
    default: otcSpreadBpsDefault,
    doc: 'The platform\'s spread on the mid rate of an OTC quote, in basis points.',
  }),

  WEBHOOK_ALLOW_PRIVATE_URLS: setting({
    section: 'Webhooks',
    type: boolean,
    default: false,
    doc: '`true` allows `http` and loopback/private receivers (development, tests); otherwise only public addresses are dialled, checked at connect time.',
    see: { page: 'docs/webhooks.md' },
  }),
  WEBHOOK_RETRY_DELAYS: setting({
    section: 'Webhooks',
    type: durations({ maxMs: webhookRetryDelayMsMax, countMax: webhookRetryDelaysMax }),
    default: webhookRetryDelaysMsDefault,
    doc: 'Waits after each failed delivery attempt; a delivery fails for good after one attempt more than there are delays.',
  }),
  WEBHOOK_DISABLE_AFTER: setting({
    section: 'Webhooks',
    type: integer({ min: 1, max: webhookDisableAfterAttemptsMax }),
    defaultText: 'unset',
    doc: 'Consecutive failed attempts that disable a subscription; unset: a whole retry schedule failed in a row, over at least 5 days.',
  }),
  WEBHOOK_TIMEOUT_MS: setting({ section: 'Webhooks', type: integer({ min: webhookTimeoutMsMin, max: webhookTimeoutMsMax }), default: webhookTimeoutMsDefault, doc: 'One delivery attempt, connection included.' }),
  WEBHOOK_FAN_OUT_LEASE_SECONDS: setting({
    section: 'Webhooks',
    type: integer({ min: 1, max: leaseSecondsMax }),
    default: webhookFanOutLeaseSecondsDefault,
    doc: 'How long a batch of events claimed to be turned into deliveries is its instance\'s; one that stopped mid-way leaves them to another instance this long after.',
    see: { page: 'docs/operations.md', heading: 'Several instances' },
  }),
  EVENT_RETENTION_DAYS: setting({
    section: 'Webhooks',
    type: integer({ min: eventRetentionDaysMin, max: eventRetentionDaysMax }),
    default: eventRetentionDays,
    doc: 'Events (`GET /events`), webhook deliveries and their attempts older than this are deleted by the reaper; a replay reaches back as far (`POST /webhooks/{id}/replay`).',
    see: { page: 'docs/operations.md', heading: 'Retention' },
  }),

  DASHBOARD_SESSION_IDLE_MINUTES: setting({
    section: 'Dashboard',
    type: integer({ min: 1, max: dashboardSessionIdleMinutesMax }),
    default: dashboardSessionIdleMinutesDefault,
    doc: 'A dashboard session ends after this long without a request.',
    see: { page: 'docs/dashboard.md' },
  }),
  DASHBOARD_SESSION_MAX_HOURS: setting({
    section: 'Dashboard',
    type: integer({ min: 1, max: dashboardSessionMaxHoursMax }),
    default: dashboardSessionMaxHoursDefault,
    doc: 'A dashboard session ends this long after sign-in, whatever happens.',
  }),
};

export type SettingName = keyof typeof settings;

/** Each variable's value: its kind's type, or undefined where it has no default (or is `off`). */
export type SettingValues = {
  readonly [Name in SettingName]: (typeof settings)[Name] extends SettingDeclaration<unknown, infer Value> ? Value : never;
};

/**
 * One variable: trimmed, empty or unset gives the default; a value that cannot work stops with a ConfigError, one
 * line naming the variable and what it expects, and the value unless the setting is secret (JSON-quoted, so a line
 * break in it cannot split the line).
 */
function readSetting<T, Value extends T | undefined>(name: string, declaration: SettingDeclaration<T, Value>, raw: string | undefined): T | Value {
  const value = raw?.trim();
  if (!value) return declaration.default;
  try {
    return declaration.type.parse(value, name);
  } catch (error) {
    if (!(error instanceof InvalidValue)) throw error;
    // A secret's value is never quoted; the part a parser picked (a URL's scheme) is not the secret.
    const shown = error.shown ?? (declaration.secret ? undefined : value);
    throw new ConfigError(`${name} ${error.expected}${shown === undefined ? '' : `, got ${JSON.stringify(shown)}`}`);
  }
}

/** Reads every declared variable of `env`, in the order declared; the first that cannot work stops it. */
export function readSettings(env: Record<string, string | undefined>): SettingValues {
  const values: Record<string, unknown> = {};
  for (const [name, declaration] of Object.entries(settings) as Array<[string, SettingDeclaration<unknown, unknown>]>) {
    values[name] = readSetting(name, declaration, env[name]);
  }
  return values as SettingValues;
}
