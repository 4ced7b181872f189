// Retention run (not part of `npm run bench`; docs/benchmarks.md "Retention"): drives the real application (dist/),
// in process, through a simulated span longer than EVENT_RETENTION_DAYS on a clock it moves itself, with the reaper
// on, and reports the rows and the on-disk size of what expires — outbox events, webhook deliveries and attempts,
// Idempotency-Keys, OTC quotes, dashboard sessions — as the days go by and at the end, so one sees them level off.
//
//   npm run build && node bench/retention.mjs                   # SQLite in a temp dir
//   DATABASE_URL=postgres://… node bench/retention.mjs          # PostgreSQL, in a temporary schema dropped at the end
//
// Env: RETENTION_SIMULATED_DAYS (45) the span, RETENTION_PAYMENTS_PER_DAY (480) payments, their events delivered to
// a local receiver that answers 2 % of attempts with a 500 (retried later), EVENT_RETENTION_DAYS (30) as the server
// reads it. Each simulated hour: its share of payments, a sandbox deposit with an Idempotency-Key for every four
// payments (POST /payments takes none), one OTC quote never confirmed, the fan-out and delivery workers until nothing is due, the clock one hour on, then the reaper until it
// finds nothing. Each simulated day: four dashboard sign-ins (sessions) and a sign-in link. On PostgreSQL a plain VACUUM of the
// reaped tables ends each day, standing in for autovacuum, whose runs follow the wall clock that the simulation
// compresses (an hour is a few hundred milliseconds here).
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { withSearchPath } from './lib.mjs';

/**
 * A module of the built application, typed by the caller as its source in src/ (dist/ is what the build makes of it).
 * @param {string} relative
 * @returns {Promise<unknown>}
 */
async function fromDist(relative) {
  /** @type {unknown} */
  const module = await import(new URL(relative, new URL('../dist/', import.meta.url)).href);
  return module;
}
const { loadConfig } = /** @type {typeof import('../src/config/config.js')} */ (await fromDist('config/config.js'));
const { openStorage } = /** @type {typeof import('../src/storage/database.js')} */ (await fromDist('storage/database.js'));
const { buildApp } = /** @type {typeof import('../src/app.js')} */ (await fromDist('app.js'));
const { CustomerService } = /** @type {typeof import('../src/modules/customers/service.js')} */ (await fromDist('modules/customers/service.js'));
const { ApiKeyService } = /** @type {typeof import('../src/modules/api-keys/service.js')} */ (await fromDist('modules/api-keys/service.js'));
const { DashboardUserService } = /** @type {typeof import('../src/modules/dashboard-users/service.js')} */ (await fromDist('modules/dashboard-users/service.js'));

/**
 * @param {string} name
 * @param {number} fallback
 */
function setting(name, fallback) {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a whole number >= 1, got "${raw}"`);
  return value;
}

const simulatedDays = setting('RETENTION_SIMULATED_DAYS', 45);
const paymentsPerDay = setting('RETENTION_PAYMENTS_PER_DAY', 480);
const retentionDays = setting('EVENT_RETENTION_DAYS', 30);
const hourMs = 3_600_000;
const paymentsPerHour = Math.ceil(paymentsPerDay / 24);
const depositsPerHour = Math.ceil(paymentsPerHour / 4);
const sessionsPerDay = 4;
/** Requests in flight at once while paying: a few, as clients would. */
const paymentsAtOnce = 10;
const failingShare = 0.02;
/** What expires, and is reported. */
const tables = /** @type {const} */ (['outbox_events', 'webhook_deliveries', 'webhook_attempts', 'idempotency_keys', 'otc_quotes', 'dashboard_sessions', 'dashboard_sign_in_links']);

// The simulated clock: every part of the application reads time from it (src/clock.ts).
let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
const clock = { now: () => new Date(nowMs) };

// The receiver: 200 with a small body, or now and then a 500 (retried on the schedule), as a real one would.
const receiver = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    const failing = Math.random() < failingShare;
    response.writeHead(failing ? 500 : 200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(failing ? { error: 'temporarily unavailable, try again later' } : { received: true, at: new Date().toISOString() }));
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', () => resolve(undefined)));
const receiverAddress = /** @type {import('node:net').AddressInfo} */ (receiver.address());

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-retention-'));
const baseUrl = process.env.DATABASE_URL?.trim() || undefined;
const schema = `bench_retention_${randomBytes(4).toString('hex')}`;
/** @type {pg.Client | undefined} */
let admin;
if (baseUrl) {
  admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
}
const config = loadConfig({
  DATA_DIR: dataDir,
  // Errors only: the warning that SECRETS_MASTER_KEY is unset is no news on a throw-away database.
  LOG_LEVEL: 'error',
  RATE_LIMIT_PER_SECOND: 'off',
  SANDBOX_AUTO_SETTLE_MS: 'off',
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  EVENT_RETENTION_DAYS: String(retentionDays),
  ...(baseUrl ? { DATABASE_URL: withSearchPath(baseUrl, schema) } : {}),
});
const storage = await openStorage(config);
const app = await buildApp(config, { storage, clock });

/** @param {string} name */
const worker = (name) => {
  const found = app.workers.find((candidate) => candidate.name === name);
  if (!found) throw new Error(`no worker ${name}`);
  return found;
};

/** Rows and bytes (table and its indexes; SQLite: its pages in use, PostgreSQL: pg_total_relation_size) of each table. */
async function measure() {
  /** @type {Record<string, { rows: number, bytes: number }>} */
  const figures = {};
  for (const table of tables) {
    const counted = await sql.raw(`select count(*) as count from ${table}`).execute(storage.db);
    const rows = Number(/** @type {{ count: number | string }} */ (counted.rows[0]).count);
    const sized =
      storage.dialect === 'postgres'
        ? await sql`select pg_total_relation_size(to_regclass(${table})) as bytes`.execute(storage.db)
        : await sql`select coalesce(sum(d.pgsize), 0) as bytes from dbstat d join sqlite_schema s on s.name = d.name where s.tbl_name = ${table}`.execute(storage.db);
    figures[table] = { rows, bytes: Number(/** @type {{ bytes: number | string }} */ (sized.rows[0]).bytes) };
  }
  return figures;
}

/** The whole database's size: SQLite its file (freed pages stay in it, reused), PostgreSQL the schema's relations. */
async function databaseBytes() {
  if (storage.dialect === 'postgres') {
    const { rows } = await sql`select coalesce(sum(pg_total_relation_size(c.oid)), 0) as bytes from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'm')`.execute(storage.db);
    return Number(/** @type {{ bytes: number | string }} */ (rows[0]).bytes);
  }
  const { rows } = await sql`select page_count * page_size as bytes from pragma_page_count(), pragma_page_size()`.execute(storage.db);
  return Number(/** @type {{ bytes: number | string }} */ (rows[0]).bytes);
}

const mb = (/** @type {number} */ bytes) => `${(bytes / 1_048_576).toFixed(1)} MB`;

try {
  const customer = await new CustomerService(storage, clock).create('Retention run');
  const { key } = await new ApiKeyService(storage, clock, config.apiEnvironment, app.caches).create({ customerId: customer.id });
  /**
   * @param {'GET' | 'POST'} method
   * @param {string} url
   * @param {object} [body]
   * @param {Record<string, string>} [headers]
   * @returns {Promise<{ data: Record<string, string> }>}
   */
  const call = async (method, url, body, headers = {}) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': key, ...headers }, ...(body ? { payload: body } : {}) });
    if (response.statusCode >= 300) throw new Error(`${method} ${url} → ${response.statusCode} ${response.body}`);
    /** @type {unknown} */
    const answer = response.json();
    return /** @type {{ data: Record<string, string> }} */ (answer);
  };
  /** A fresh CSRF token (they expire on the simulated clock too). */
  const write = async () => ({ 'x-csrf-token': (await call('GET', '/csrf-token')).data.csrf_token ?? '' });
  let headers = await write();
  const from = (await call('POST', '/fiat-accounts', { accountName: 'Paying', currency: 'EUR' }, headers)).data.id;
  const to = (await call('POST', '/fiat-accounts', { accountName: 'Paid', currency: 'EUR' }, headers)).data.id;
  await call('POST', `/sandbox/fiat-accounts/${from}/deposits`, { amount: 10_000_000 }, headers);
  const wallet = (await call('POST', '/wallets', {}, headers)).data.local_id;
  await call(
    'POST',
    '/webhooks',
    { url: `http://127.0.0.1:${receiverAddress.port}/hook`, eventTypes: ['payment.created', 'payment.completed', 'payment.failed', 'fiat_account.balance_updated'] },
    headers,
  );
  const users = new DashboardUserService(storage, clock, { publicUrl: config.publicUrl, idleMs: config.dashboardSessionIdleMs, maxMs: config.dashboardSessionMaxMs });
  const email = 'operator@example.com';
  const { sign_in_url } = await users.create(customer.id, email);
  const password = 'correct horse battery staple';
  const user = await users.setPasswordWithLink(new URL(sign_in_url).pathname.split('/').pop() ?? '', password, password);

  const fanOut = worker('webhook-fan-out');
  const delivery = worker('webhook-delivery');
  const reaper = worker('reaper');
  const deliverDue = async () => {
    for (let round = 0; round < 1000; round += 1) {
      const fanned = await fanOut.runOnce();
      const started = await delivery.runOnce();
      await app.webhookDeliveries.idle();
      if (fanned === 0 && started === 0) return;
    }
    throw new Error('deliveries still due after 1000 rounds');
  };
  let reaped = 0;
  const reap = async () => {
    for (let pass = 0; pass < 100_000; pass += 1) {
      const deleted = await reaper.runOnce();
      reaped += deleted;
      if (deleted === 0) return;
    }
    throw new Error('the reaper still finds rows after 100,000 passes');
  };

  console.log(`Retention run: ${storage.dialect}, EVENT_RETENTION_DAYS=${retentionDays}, ${simulatedDays} simulated days, ${paymentsPerDay} payments a day (${paymentsPerHour} an hour)`);
  console.log(`day  ${tables.map((table) => table.padStart(24)).join('')}   ${'reaped'.padStart(9)} ${'database'.padStart(9)}   (rows / MB; reaped: the tables before, database: every table, kept ones included)`);
  const started = performance.now();
  let payments = 0;
  for (let day = 1; day <= simulatedDays; day += 1) {
    for (let hour = 0; hour < 24; hour += 1) {
      // A sign-in every six hours, the last one in the day's last hour; a new sign-in link at noon.
      if (hour % (24 / sessionsPerDay) === 24 / sessionsPerDay - 1) await users.startSession(user);
      if (hour === 12) await users.issueLink(email);
      headers = await write();
      for (let start = 0; start < paymentsPerHour; start += paymentsAtOnce) {
        const batch = Math.min(paymentsAtOnce, paymentsPerHour - start);
        await Promise.all(
          Array.from({ length: batch }, () => call('POST', '/payments', { fromAccountId: from, toAccountId: to, amount: 1, currency: 'EUR', reference: 'retention' }, headers)),
        );
        payments += batch;
      }
      for (let deposit = 0; deposit < depositsPerHour; deposit += 1) {
        await call('POST', `/sandbox/fiat-accounts/${from}/deposits`, { amount: 1 }, { ...headers, 'idempotency-key': randomUUID() });
      }
      await call('POST', '/otc-exchanges/quote', { sourceFrAccountId: from, destinationProviderWalletId: wallet, sourceAmountEur: '100' }, headers);
      await deliverDue();
      nowMs += hourMs;
      await reap();
    }
    if (storage.dialect === 'postgres') for (const table of tables) await sql.raw(`vacuum ${table}`).execute(storage.db);
    const figures = await measure();
    const cells = tables.map((table) => `${figures[table]?.rows ?? 0} / ${mb(figures[table]?.bytes ?? 0).replace(' MB', '')}`.padStart(24));
    const reapedBytes = tables.reduce((sum, table) => sum + (figures[table]?.bytes ?? 0), 0);
    console.log(`${String(day).padStart(3)}  ${cells.join('')}   ${mb(reapedBytes).padStart(9)} ${mb(await databaseBytes()).padStart(9)}`);
  }
  console.log(
    `${payments.toLocaleString('en')} payments over ${simulatedDays} simulated days in ${((performance.now() - started) / 1000).toFixed(0)} s; the reaper deleted ${reaped.toLocaleString('en')} rows`,
  );
} finally {
  await app.close();
  await new Promise((resolve) => receiver.close(() => resolve(undefined)));
  if (admin) {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
