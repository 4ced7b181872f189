import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import pg from 'pg';
import { buildApp } from '../../src/app.js';
import { serveMetrics, type MetricsListener } from '../../src/http/metrics.js';
import type { Providers } from '../../src/providers/providers.js';
import type { Clock } from '../../src/clock.js';
import type { HostResolver } from '../../src/modules/webhooks/address-guard.js';
import { loadConfig, type Config } from '../../src/config/config.js';
import { ApiKeyService, type CreateKeyInput } from '../../src/modules/api-keys/service.js';
import { CustomerService } from '../../src/modules/customers/service.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { TestClock } from './clock.js';

export type TestDialect = 'sqlite' | 'postgres';

/** The dialect of this vitest project (see vitest.config.ts). */
export const testDialect: TestDialect = process.env.TEST_DB === 'postgres' ? 'postgres' : 'sqlite';

export function postgresUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error('TEST_DATABASE_URL is not set (the postgres project needs it)');
  return url;
}

export function temporaryDirectory(prefix = 'customer-api-test-'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/**
 * An empty database of the current dialect: a fresh SQLite file in its own directory, or a fresh PostgreSQL
 * schema (dropped again by `drop`).
 */
export async function freshStorage(
  options: { poolSize?: number; databaseUrl?: string } = {},
): Promise<{ storage: Storage; config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databasePoolSize'>; drop: () => Promise<void> }> {
  if (testDialect === 'sqlite') {
    const dataDir = temporaryDirectory();
    const config = { dataDir, databaseUrl: undefined, databasePoolSize: 1 };
    return { storage: await openStorage(config), config, drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  // The app may reach the database another way (through a test's TCP proxy); the schema is made and dropped directly.
  const config = { dataDir: temporaryDirectory(), databaseUrl: options.databaseUrl ?? postgresUrl(), databasePoolSize: options.poolSize ?? 10 };
  const storage = await openStorage(config, { postgresSchema: schema });
  const drop = async () => {
    fs.rmSync(config.dataDir, { recursive: true, force: true });
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    await client.query(`drop schema if exists ${schema} cascade`);
    await client.end();
  };
  return { storage, config, drop };
}

export interface TestCustomer {
  id: string;
  frOwnerBusinessId: string;
  /** A key with scope `*` unless other options were given. */
  key: string;
  keyId: string;
}

export interface RequestOptions {
  method?: InjectOptions['method'];
  url: string;
  /** Sent as x-api-key. */
  key?: string;
  /** A CSRF token, or true to fetch one for `key` first. */
  csrf?: string | true;
  body?: unknown;
  headers?: Record<string, string>;
  remoteAddress?: string;
}

export interface TestApp {
  app: FastifyInstance;
  storage: Storage;
  config: Config;
  clock: TestClock;
  createCustomer(name?: string, key?: Omit<CreateKeyInput, 'customerId'>): Promise<TestCustomer>;
  createKey(customerId: string, options?: Omit<CreateKeyInput, 'customerId'>): Promise<{ key: string; id: string }>;
  csrfToken(key: string): Promise<string>;
  request(options: RequestOptions): Promise<LightMyRequestResponse>;
  /** GET /metrics from the metrics listener (started on a free loopback port on first use). */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/** The observed (operation, status) pairs that /openapi.json does not list. Hidden routes (the reference itself) are skipped. */
function undocumentedStatuses(app: FastifyInstance, observed: Array<{ method: string; routeUrl: string; statusCode: number }>): string[] {
  const paths = (app.swagger() as { paths?: Record<string, Record<string, { responses?: Record<string, unknown> }>> }).paths ?? {};
  const missing = new Set<string>();
  for (const { method, routeUrl, statusCode } of observed) {
    const operation = paths[routeUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[method.toLowerCase()];
    if (operation === undefined) continue;
    if (operation.responses?.[String(statusCode)] === undefined) missing.add(`${method} ${routeUrl} ${statusCode}`);
  }
  return [...missing].sort();
}

/**
 * The real application on a real, empty database of the current dialect, answering through app.inject.
 * Rate limiting is off unless the test asks for it.
 */
export async function createTestApp(
  options: {
    env?: Record<string, string>;
    clock?: Clock;
    logStream?: NodeJS.WritableStream;
    providers?: Providers;
    poolSize?: number;
    resolveHost?: HostResolver;
    /** PostgreSQL: the URL the app connects with (a TCP proxy's), instead of TEST_DATABASE_URL. */
    databaseUrl?: string;
  } = {},
): Promise<TestApp> {
  const { storage, config: storageConfig, drop } = await freshStorage({
    ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    ...(options.databaseUrl === undefined ? {} : { databaseUrl: options.databaseUrl }),
  });
  // Production refuses to start without a master key (docs/operations.md "Server secrets"): a test of production
  // gets one, unless it says something about the setting itself.
  const env = options.env ?? {};
  const masterKey = env.API_ENVIRONMENT === 'production' && !('SECRETS_MASTER_KEY' in env) ? { SECRETS_MASTER_KEY: randomBytes(32).toString('base64') } : {};
  const config: Config = {
    ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: 'off', ...masterKey, ...env }),
    ...storageConfig,
  };
  const clock = (options.clock as TestClock | undefined) ?? new TestClock();
  const observed: Array<{ method: string; routeUrl: string; statusCode: number }> = [];
  const app = await buildApp(config, {
    storage,
    clock,
    ...(options.logStream ? { logStream: options.logStream as never } : {}),
    ...(options.providers ? { providers: options.providers } : {}),
    ...(options.resolveHost ? { resolveHost: options.resolveHost } : {}),
    observeResponse: (method, routeUrl, statusCode) => {
      if (routeUrl !== undefined) observed.push({ method, routeUrl, statusCode });
    },
  });
  const apiKeys = new ApiKeyService(storage, clock, config.apiEnvironment, app.caches);
  const customers = new CustomerService(storage, clock);

  const createKey: TestApp['createKey'] = async (customerId, keyOptions = {}) => {
    const created = await apiKeys.create({ customerId, ...keyOptions });
    return { key: created.key, id: created.id };
  };
  let metricsListener: MetricsListener | undefined;
  const csrfToken = async (key: string) => {
    const response = await app.inject({ method: 'GET', url: '/csrf-token', headers: { 'x-api-key': key } });
    if (response.statusCode !== 200) throw new Error(`GET /csrf-token answered ${response.statusCode}: ${response.body}`);
    return (response.json() as { data: { csrf_token: string } }).data.csrf_token;
  };
  return {
    app,
    storage,
    config,
    clock,
    createKey,
    csrfToken,
    async createCustomer(name = 'Test customer', keyOptions = {}) {
      const customer = await customers.create(name);
      const { key, id } = await createKey(customer.id, keyOptions);
      return { id: customer.id, frOwnerBusinessId: customer.fr_owner_business_id, key, keyId: id };
    },
    async request({ method = 'GET', url, key, csrf, body, headers = {}, remoteAddress }) {
      const allHeaders: Record<string, string> = { ...headers };
      if (key !== undefined) allHeaders['x-api-key'] = key;
      if (csrf !== undefined) allHeaders['x-csrf-token'] = csrf === true ? await csrfToken(key ?? '') : csrf;
      return app.inject({
        method,
        url,
        headers: allHeaders,
        ...(body !== undefined ? { payload: body as InjectOptions['payload'] } : {}),
        ...(remoteAddress ? { remoteAddress } : {}),
      });
    },
    async metrics() {
      metricsListener ??= await serveMetrics(app, { host: '127.0.0.1', port: 0 });
      const response = await fetch(`http://127.0.0.1:${metricsListener.address.port}/metrics`);
      if (response.status !== 200) throw new Error(`GET /metrics answered ${response.status}`);
      return response.text();
    },
    async close() {
      const undocumented = undocumentedStatuses(app, observed);
      await metricsListener?.close();
      await app.close();
      await drop();
      // Every status a test saw must be in /openapi.json, so generated clients type it.
      if (undocumented.length > 0) throw new Error(`responses missing from the OpenAPI document: ${undocumented.join('; ')}`);
    },
  };
}
