// Diagnostic (not part of `npm run bench`): lists every SQL statement one request of each benchmarked route runs
// on the real application (dist/), in process, against a throw-away database. It is how bench/raw-payment-server.mjs
// was checked to run the same statements as POST /payments, and where a slow route starts its investigation.
//
//   npm run build && node bench/count-queries.mjs            # SQLite in a temp dir
//   DATABASE_URL=postgres://… node bench/count-queries.mjs   # PostgreSQL, in a temporary schema dropped at the end
//   COUNT_QUERIES_REPEAT=2000 node bench/count-queries.mjs   # also times each statement over 2000 serial requests
//
// The timing mode runs requests one at a time through app.inject (no sockets, no concurrency), so it shows how a
// request's wall time splits between the database driver (statement execution, COMMIT and its fsync) and
// everything else (Fastify, hooks, validation, Kysely query building, services, serialisation).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
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
const { systemClock } = /** @type {typeof import('../src/clock.js')} */ (await fromDist('clock.js'));

const repeat = Number(process.env.COUNT_QUERIES_REPEAT ?? 0);
/** @type {{ on: boolean, statements: string[], timing: boolean, byStatement: Map<string, { count: number, ns: number }> }} */
const trace = { on: false, statements: [], timing: false, byStatement: new Map() };
/** @param {string} source */
const record = (source) => {
  if (trace.on) trace.statements.push(source.replace(/\s+/g, ' ').trim());
};
/**
 * @param {string} source
 * @param {bigint} startedNs
 */
const timed = (source, startedNs) => {
  if (!trace.timing) return;
  const elapsedNs = Number(process.hrtime.bigint() - startedNs);
  const entry = trace.byStatement.get(source) ?? { count: 0, ns: 0 };
  entry.count += 1;
  entry.ns += elapsedNs;
  trace.byStatement.set(source, entry);
};

// better-sqlite3: every statement Kysely runs goes through Statement#all/run/iterate.
/** @typedef {(this: { source: string }, ...args: unknown[]) => unknown} StatementMethod */
const probe = new BetterSqlite3(':memory:');
/** @type {unknown} */
const probedPrototype = Object.getPrototypeOf(probe.prepare('select 1'));
const statementPrototype = /** @type {Record<'all' | 'get' | 'run' | 'iterate', StatementMethod>} */ (probedPrototype);
probe.close();
for (const method of /** @type {const} */ (['all', 'get', 'run', 'iterate'])) {
  const original = statementPrototype[method];
  statementPrototype[method] = function traced(...args) {
    record(this.source);
    const started = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      timed(this.source, started);
    }
  };
}
// pg: every round trip goes through Client#query (a promise unless given a callback or a submittable).
/** @typedef {(this: unknown, config: string | { text: string }, ...rest: unknown[]) => unknown} ClientQuery */
const clientPrototype = /** @type {{ query: ClientQuery }} */ (/** @type {unknown} */ (pg.Client.prototype));
const originalQuery = clientPrototype.query;
/** @type {ClientQuery} */
const tracedQuery = function traced(config, ...rest) {
  const text = typeof config === 'string' ? config : config.text;
  record(text);
  const started = process.hrtime.bigint();
  const result = originalQuery.call(this, config, ...rest);
  if (result instanceof Promise) result.then(() => timed(text, started), () => timed(text, started));
  return result;
};
clientPrototype.query = tracedQuery;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-count-'));
const baseUrl = process.env.DATABASE_URL?.trim() || undefined;
const schema = `bench_count_${randomBytes(4).toString('hex')}`;
/** @type {pg.Client | undefined} */
let admin;
if (baseUrl) {
  admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
}
const env = {
  DATA_DIR: dataDir,
  LOG_LEVEL: 'warn',
  RATE_LIMIT_PER_SECOND: 'off',
  SANDBOX_AUTO_SETTLE_MS: 'off',
  ...(baseUrl ? { DATABASE_URL: withSearchPath(baseUrl, schema) } : {}),
};
const config = loadConfig(env);
const storage = await openStorage(config);
const app = await buildApp(config, { storage });
try {
  // Same seeding as the benchmark, through the same services and endpoints.
  const customer = await new CustomerService(storage, systemClock).create('Bench count');
  const { key } = await new ApiKeyService(storage, systemClock, config.apiEnvironment, app.caches).create({ customerId: customer.id });
  /** @typedef {[method: 'GET' | 'POST', url: string, body?: object, headers?: Record<string, string>]} Request */
  /** @type {(...request: Request) => Promise<unknown>} */
  const call = async (method, url, body, headers = {}) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': key, ...headers }, ...(body ? { payload: body } : {}) });
    if (response.statusCode >= 300) throw new Error(`${method} ${url} → ${response.statusCode} ${response.body}`);
    /** @type {unknown} */
    const answer = response.json();
    return answer;
  };
  /** @typedef {{ data: { id: string, csrf_token: string } }} Answer */
  const csrf = /** @type {Answer} */ (await call('GET', '/csrf-token')).data.csrf_token;
  const write = { 'x-csrf-token': csrf };
  const from = /** @type {Answer} */ (await call('POST', '/fiat-accounts', { accountName: 'Bench A', currency: 'EUR' }, write)).data.id;
  const to = /** @type {Answer} */ (await call('POST', '/fiat-accounts', { accountName: 'Bench B', currency: 'EUR' }, write)).data.id;
  await call('POST', `/sandbox/fiat-accounts/${from}/deposits`, { amount: 10_000_000 }, write);

  /** @type {[Request, Request, Request]} */
  const requests = [
    ['POST', '/payments', { fromAccountId: from, toAccountId: to, amount: 1, currency: 'EUR', reference: 'bench' }, write],
    ['GET', '/transactions?page=1&limit=50'],
    ['GET', '/transactions?page=2&limit=1'],
  ];
  // The first payment also writes api_keys.last_used_at (once a minute per key); the second is the steady state.
  for (const [label, request] of /** @type {[string, Request][]} */ ([['first', requests[0]], ['steady', requests[0]], ['steady', requests[1]], ['steady', requests[2]]])) {
    trace.statements = [];
    trace.on = true;
    await call(...request);
    trace.on = false;
    console.log(`\n${request[0]} ${request[1]} (${label}): ${trace.statements.length} statements`);
    for (const statement of trace.statements) console.log(`  ${statement.length > 160 ? `${statement.slice(0, 157)}...` : statement}`);
  }

  if (repeat > 0) {
    const short = (/** @type {string} */ text) => {
      const flat = text.replace(/\s+/g, ' ').trim();
      return flat.length > 90 ? `${flat.slice(0, 87)}...` : flat;
    };
    for (const request of requests.slice(0, 2)) {
      for (let i = 0; i < Math.min(200, repeat); i++) await call(...request); // warm-up (JIT, caches)
      trace.byStatement = new Map();
      trace.timing = true;
      const started = process.hrtime.bigint();
      const cpuStarted = process.cpuUsage();
      for (let i = 0; i < repeat; i++) await call(...request);
      const wallUs = Number(process.hrtime.bigint() - started) / 1000 / repeat;
      const cpu = process.cpuUsage(cpuStarted);
      trace.timing = false;
      const sqlUs = [...trace.byStatement.values()].reduce((sum, entry) => sum + entry.ns, 0) / 1000 / repeat;
      console.log(`\n${request[0]} ${request[1]} × ${repeat}, one at a time through app.inject:`);
      console.log(`  wall ${wallUs.toFixed(0)} µs/request (CPU user ${(cpu.user / repeat).toFixed(0)} µs, system ${(cpu.system / repeat).toFixed(0)} µs)`);
      console.log(`  in the database driver ${sqlUs.toFixed(0)} µs (${((100 * sqlUs) / wallUs).toFixed(0)} %), everything else ${(wallUs - sqlUs).toFixed(0)} µs`);
      for (const [source, entry] of [...trace.byStatement].sort((a, b) => b[1].ns - a[1].ns)) {
        console.log(`  ${(entry.ns / 1000 / entry.count).toFixed(1).padStart(8)} µs × ${(entry.count / repeat).toFixed(2)}  ${short(source)}`);
      }
    }
  }
} finally {
  await app.close();
  if (admin) {
    await admin.query(`drop schema ${schema} cascade`);
    await admin.end();
  }
  fs.rmSync(dataDir, { recursive: true, force: true });
}
