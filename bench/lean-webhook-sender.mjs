// The lean delivery reference of `npm run bench` (docs/benchmarks.md "Webhook delivery"): a loop that reads a
// customer's `payment.created` events from the database, oldest first, a page at a time, and POSTs each one's payload
// to a receiver with undici over keep-alive connections, `concurrency` at once. Nothing else: no signature, no claim,
// no record of the attempt. What the server's delivery to one receiver is measured against.
// Argument: JSON { customerId, since, count, url, concurrency }. Env: DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL).
// Prints JSON { sent, seconds, cpuSeconds } (cpuSeconds: the process's CPU over the sending, not its start-up).
import path from 'node:path';
import { Agent, request } from 'undici';
import { parseJson } from './lib.mjs';

const { customerId, since, count, url, concurrency } = /** @type {import('./webhook-delivery.mjs').LeanRun} */ (parseJson(process.argv[2] ?? '{}'));
const databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
const pageSize = 500;

/** @typedef {(afterSequence: number, limit: number) => Promise<{ sequence: number, payload: string }[]>} ReadPage */

/** @returns {Promise<{ read: ReadPage, close: () => Promise<unknown> }>} */
async function postgresRows() {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const text = `select sequence, payload from outbox_events where customer_id = $1 and event_type = 'payment.created' and created_at >= $2 and sequence > $3 order by sequence limit $4`;
  return {
    async read(afterSequence, limit) {
      /** @type {import('pg').QueryResult<{ sequence: string, payload: string }>} */
      const { rows: page } = await client.query(text, [customerId, since, afterSequence, limit]);
      return page.map((row) => ({ sequence: Number(row.sequence), payload: row.payload }));
    },
    close: () => client.end(),
  };
}

/** @returns {Promise<{ read: ReadPage, close: () => Promise<unknown> }>} */
async function sqliteRows() {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(process.env.DATA_DIR ?? './data', 'customer-api.sqlite'), { readonly: true });
  const statement = db.prepare(`select sequence, payload from outbox_events where customer_id = ? and event_type = 'payment.created' and created_at >= ? and sequence > ? order by sequence limit ?`);
  return {
    read: async (afterSequence, limit) =>
      /** @type {{ sequence: number, payload: string }[]} */ (statement.all(customerId, since, afterSequence, limit)).map((row) => ({ sequence: Number(row.sequence), payload: row.payload })),
    close: async () => db.close(),
  };
}

const rows = databaseUrl ? await postgresRows() : await sqliteRows();
const agent = new Agent({ keepAliveTimeout: 60_000 });
const started = performance.now();
const cpuBefore = process.cpuUsage();
let sent = 0;
let afterSequence = 0;
while (sent < count) {
  const page = await rows.read(afterSequence, Math.min(pageSize, count - sent));
  if (page.length === 0) break;
  afterSequence = /** @type {{ sequence: number }} */ (page[page.length - 1]).sequence;
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, page.length) }, async () => {
      while (next < page.length) {
        const row = /** @type {{ payload: string }} */ (page[next]);
        next += 1;
        const response = await request(url, { method: 'POST', body: row.payload, headers: { 'content-type': 'application/json' }, dispatcher: agent });
        await response.body.dump();
        if (response.statusCode >= 300) throw new Error(`the receiver answered ${response.statusCode}`);
        sent += 1;
      }
    }),
  );
}
const seconds = (performance.now() - started) / 1000;
const cpu = process.cpuUsage(cpuBefore);
await agent.close();
await rows.close();
process.stdout.write(`${JSON.stringify({ sent, seconds, cpuSeconds: (cpu.user + cpu.system) / 1e6 })}\n`);
