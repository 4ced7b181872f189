import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { renderEnvExample, settingsDocsCommand, withSettingsTable } from '../../src/config/settings-docs.js';
import { settings, type SettingName } from '../../src/config/settings.js';
import { checkout } from '../e2e/support.js';

/**
 * The settings are declared once (src/config/settings.ts): loadConfig reads them with one parser per kind of
 * value, and the README's tables and .env.example are generated from the same declarations.
 */

function refusal(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

describe('the generated docs', () => {
  it('the README settings table is the one src/config/settings.ts gives', () => {
    const readme = fs.readFileSync(path.join(checkout, 'README.md'), 'utf8');
    expect(readme === withSettingsTable(readme), `README.md's settings table is stale: run \`${settingsDocsCommand}\``).toBe(true);
  });

  it('.env.example is the one src/config/settings.ts gives: every variable commented out, no secret given a value', () => {
    const example = fs.readFileSync(path.join(checkout, '.env.example'), 'utf8');
    expect(example === renderEnvExample(), `.env.example is stale: run \`${settingsDocsCommand}\``).toBe(true);
    const variableLines = example.split('\n').filter((line) => /^# [A-Z_]+=/.test(line));
    expect(variableLines.map((line) => line.slice(2, line.indexOf('=')))).toEqual(Object.keys(settings));
    for (const [name, declaration] of Object.entries(settings)) {
      if (declaration.secret) expect(variableLines).toContain(`# ${name}=`);
    }
  });
});

describe('reading the settings', () => {
  it('gives every default for an empty environment, and takes empty or blank values as unset', () => {
    const defaults = loadConfig({});
    expect(loadConfig(Object.fromEntries(Object.keys(settings).map((name) => [name, ' '])))).toEqual(defaults);
    expect(defaults).toMatchObject({
      port: 3000,
      host: '0.0.0.0',
      dataDir: path.resolve('./data'),
      databaseUrl: undefined,
      moneyOperationsPerCustomer: 2,
      apiEnvironment: 'sandbox',
      trustProxy: false,
      rateLimitPerSecond: 100,
      corsOrigins: [],
      sandboxAutoSettleMs: 2000,
      metricsPort: 9464,
      idempotencyLeaseMs: 60_000,
      idempotencyRetentionMs: 24 * 3_600_000,
      webhookRetryDelaysMs: [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000],
      webhookDisableAfter: { failures: 8, failingMs: 5 * 86_400_000 },
      publicUrl: 'http://localhost:3000',
      dashboardSessionIdleMs: 30 * 60_000,
      dashboardSessionMaxMs: 12 * 3_600_000,
      secretsMasterKeys: undefined,
    });
  });

  it('reads whole numbers within their bounds, trimmed, and converts the units Config keeps', () => {
    expect(loadConfig({ PORT: ' 8080 ', IDEMPOTENCY_LEASE_SECONDS: '5', DASHBOARD_SESSION_MAX_HOURS: '720' })).toMatchObject({
      port: 8080,
      idempotencyLeaseMs: 5000,
      dashboardSessionMaxMs: 720 * 3_600_000,
    });
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535);
    for (const value of ['65536', '-1', '1e3', '0x10', '3.5', 'abc']) {
      expect(refusal({ PORT: value })).toBe(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(value)}`);
    }
    expect(refusal({ IDEMPOTENCY_RETENTION_HOURS: '23' })).toBe('IDEMPOTENCY_RETENTION_HOURS must be a whole number from 24 to 8760, got "23"');
  });

  it('takes `off` where a setting can be turned off', () => {
    expect(loadConfig({ RATE_LIMIT_PER_SECOND: 'off', SANDBOX_AUTO_SETTLE_MS: 'OFF', METRICS_PORT: 'off' })).toMatchObject({
      rateLimitPerSecond: undefined,
      sandboxAutoSettleMs: undefined,
      metricsPort: undefined,
    });
    expect(loadConfig({ SANDBOX_AUTO_SETTLE_MS: '0' }).sandboxAutoSettleMs).toBe(0);
    expect(refusal({ RATE_LIMIT_PER_SECOND: '0' })).toBe('RATE_LIMIT_PER_SECOND must be a whole number from 1 to 1000000 or "off", got "0"');
    expect(refusal({ DATABASE_POOL_SIZE: 'off' })).toContain('DATABASE_POOL_SIZE must be a whole number from 1 to 1000, got "off"');
  });

  it('reads words in any case, and booleans', () => {
    expect(loadConfig({ API_ENVIRONMENT: 'Production', LOG_LEVEL: 'WARN', WEBHOOK_ALLOW_PRIVATE_URLS: 'True' })).toMatchObject({
      apiEnvironment: 'production',
      logLevel: 'warn',
      webhookAllowPrivateUrls: true,
    });
    expect(refusal({ API_ENVIRONMENT: 'staging' })).toBe('API_ENVIRONMENT must be one of "sandbox", "production", got "staging"');
    expect(refusal({ WEBHOOK_ALLOW_PRIVATE_URLS: 'yes' })).toBe('WEBHOOK_ALLOW_PRIVATE_URLS must be true or false, got "yes"');
  });

  it('reads lists: proxies, origins and durations', () => {
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.1, 10.0.0.0/8,' }).trustProxy).toEqual(['10.0.0.1', '10.0.0.0/8']);
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe(true);
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example, http://b.example:8080' }).corsOrigins).toEqual(['https://a.example', 'http://b.example:8080']);
    expect(refusal({ CORS_ORIGINS: 'https://a.example,https://b.example/' })).toMatch(/^CORS_ORIGINS must be \* or comma-separated origins .*, got "https:\/\/b\.example\/"$/);
    expect(loadConfig({}).onboardingLogoOrigins).toEqual([]);
    expect(loadConfig({ ONBOARDING_LOGO_ORIGINS: 'https://cdn.example, https://img.example:8443' }).onboardingLogoOrigins).toEqual(['https://cdn.example', 'https://img.example:8443']);
    for (const value of ['*', 'http://cdn.example', 'https://cdn.example/logos']) expect(refusal({ ONBOARDING_LOGO_ORIGINS: value })).toMatch(/^ONBOARDING_LOGO_ORIGINS must be comma-separated https origins/);
    const config = loadConfig({ WEBHOOK_RETRY_DELAYS: '1ms, 2s,3m,4h,5d' });
    expect(config.webhookRetryDelaysMs).toEqual([1, 2000, 180_000, 4 * 3_600_000, 5 * 86_400_000]);
    expect(config.webhookDisableAfter).toEqual({ failures: 6, failingMs: 5 * 86_400_000 });
    expect(loadConfig({ WEBHOOK_DISABLE_AFTER: '3' }).webhookDisableAfter).toEqual({ failures: 3, failingMs: 0 });
    expect(refusal({ WEBHOOK_RETRY_DELAYS: '5s,8d' })).toBe('WEBHOOK_RETRY_DELAYS must be a comma-separated list of durations such as 5s,5m,30m,2h (each at most 7d), got "5s,8d"');
    expect(refusal({ WEBHOOK_RETRY_DELAYS: Array(21).fill('1s').join(',') })).toMatch(/^WEBHOOK_RETRY_DELAYS must list at most 20 durations/);
  });

  it('derives PUBLIC_URL from PORT unless it is set, and keeps it without a trailing slash', () => {
    expect(loadConfig({ PORT: '4000' }).publicUrl).toBe('http://localhost:4000');
    expect(loadConfig({ PORT: '4000', PUBLIC_URL: 'https://api.example.com/base/' }).publicUrl).toBe('https://api.example.com/base');
    expect(refusal({ PUBLIC_URL: 'https://api.example.com/?x=1' })).toMatch(/^PUBLIC_URL must be an http\(s\) URL without credentials, query or fragment/);
  });

  it('refuses a bad value of each setting with one line that names it, and never quotes a secret', () => {
    const bad: Partial<Record<SettingName, string>> = {
      PORT: 'x',
      PUBLIC_URL: 'ftp://x',
      API_ENVIRONMENT: 'x',
      LOG_LEVEL: 'x',
      CORS_ORIGINS: 'x',
      ONBOARDING_LOGO_ORIGINS: 'http://cdn.example',
      SHUTDOWN_TIMEOUT_MS: 'x',
      DATABASE_URL: 'mysql://admin:hunter2@db/x',
      DATABASE_POOL_SIZE: 'x',
      MONEY_OPERATIONS_PER_CUSTOMER: 'x',
      SECRETS_MASTER_KEY: 'hunter2',
      SECRETS_MASTER_KEY_FILE: '/nonexistent/master.key',
      RATE_LIMIT_PER_SECOND: 'x',
      RATE_LIMIT_PER_IP_PER_SECOND: 'x',
      RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: 'x',
      RATE_LIMIT_REDIS_TIMEOUT_MS: '0',
      METRICS_PORT: 'x',
      IDEMPOTENCY_LEASE_SECONDS: 'x',
      IDEMPOTENCY_RETENTION_HOURS: 'x',
      UPLOAD_CONCURRENCY: 'x',
      UPLOAD_CONCURRENCY_PER_CUSTOMER: 'x',
      UPLOAD_MIN_BYTES_PER_SECOND: 'x',
      UPLOAD_RATE_WINDOW_MS: 'x',
      DOCUMENT_STORAGE_QUOTA_BYTES: 'x',
      PAYMENT_PROVIDER_URL: 'ftp://x',
      PAYMENT_PROVIDER_SECRET: 'hunter2',
      SANDBOX_AUTO_SETTLE_MS: 'x',
      SETTLEMENT_LEASE_SECONDS: '0',
      WEBHOOK_FAN_OUT_LEASE_SECONDS: '3601',
      EVENT_RETENTION_DAYS: '0',
      OTC_QUOTE_TTL_SECONDS: 'x',
      OTC_SPREAD_BPS: 'x',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'x',
      WEBHOOK_RETRY_DELAYS: 'x',
      WEBHOOK_DISABLE_AFTER: 'x',
      WEBHOOK_TIMEOUT_MS: 'x',
      DASHBOARD_SESSION_IDLE_MINUTES: 'x',
      DASHBOARD_SESSION_MAX_HOURS: 'x',
    };
    // Free text, which any value is: every other setting has a bad value above.
    const anyText: SettingName[] = ['HOST', 'DATA_DIR', 'TRUST_PROXY', 'REDIS_URL', 'METRICS_HOST', 'METRICS_TOKEN'];
    expect(Object.keys(settings).filter((name) => !anyText.includes(name as SettingName) && !(name in bad))).toEqual([]);
    for (const [name, value] of Object.entries(bad)) {
      const message = refusal({ [name]: value });
      expect(message.startsWith(`${name} `), message).toBe(true);
      expect(message).not.toContain('\n');
      if (settings[name as SettingName].secret) expect(message, message).not.toContain('hunter2');
    }
    // A value with a line break is quoted on the same line.
    expect(refusal({ OTC_SPREAD_BPS: '1\n2' })).toBe('OTC_SPREAD_BPS must be a whole number from 0 to 1000, got "1\\n2"');
  });
});
