// The lean payment reference of `npm run bench` (docs/benchmarks.md): the least a payment can be on this database —
// node:http, the driver, and per request a conditional debit, a credit, one ledger row and one outbox row, committed
// together. No authentication, no validation, no fees, no history record: what the real server's POST /payments is
// measured against. On PostgreSQL the four writes are one statement (data-modifying CTEs), so one network round trip
// and no row lock held across round trips; on SQLite they are four statements between BEGIN IMMEDIATE and COMMIT.
//
// It writes to the same tables as the real server (fiat_accounts, ledger_journal, outbox_events) of the same database,
// with time-ordered ids as the server uses (UUID v7, docs/decisions/0006-time-ordered-ids.md).
// Env: PORT, HOST (default 127.0.0.1), DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL), DATABASE_POOL_SIZE.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { v7 as timeOrderedId } from 'uuid';
import { Refusal, servePayments } from './payment-http.mjs';

/**
 * @typedef {import('./payment-http.mjs').PaymentBody} PaymentBody
 * @typedef {{ pay: (customerId: string, body: PaymentBody) => Promise<string>, close: () => Promise<unknown> }} Backend
 */

const port = Number(process.env.PORT ?? 3200);
const host = process.env.HOST ?? '127.0.0.1';
const databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

/**
 * One payment of `amountMinor` from `fromId` to `toId`: returns the source balance after, or throws a Refusal.
 * @returns {Promise<Backend>}
 */
async function postgresBackend() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  pool.on('error', () => undefined);
  const text = `
    with debit as (
      update fiat_accounts set balance_minor = balance_minor - $1, updated_at = $2
      where id = $3 and balance_minor - allocated_minor >= $1 returning balance_minor
    ), credit as (
      update fiat_accounts set balance_minor = balance_minor + $1, updated_at = $2
      where id = $4 and exists (select 1 from debit) returning id
    ), journal as (
      insert into ledger_journal (id, customer_id, kind, reference_id, created_at)
      select $5, $6, 'lean_payment', $7, $2 from debit returning id
    ), event as (
      insert into outbox_events (id, customer_id, event_type, payload, created_at, published_at)
      select $8, $6, 'payment.created', $9, $2, null from debit returning id
    )
    select (select balance_minor from debit) as after, (select count(*) from credit) as credited`;
  return {
    async pay(customerId, body) {
      const now = new Date().toISOString();
      const reference = randomUUID();
      const eventId = timeOrderedId();
      const payload = JSON.stringify({ id: eventId, type: 'payment.created', created_at: now, data: { reference, amount: body.amount } });
      /** @type {import('pg').QueryResult<{ after: string | null }>} */
      const { rows } = await pool.query({
        name: 'lean-payment',
        text,
        values: [String(Math.round(body.amount * 100)), now, body.fromAccountId, body.toAccountId, timeOrderedId(), customerId, reference, eventId, payload],
      });
      // The select answers one row whatever the CTEs did.
      const { after } = /** @type {{ after: string | null }} */ (rows[0]);
      if (after === null) throw new Refusal(422, 'INSUFFICIENT_FUNDS');
      return String(after);
    },
    close: () => pool.end(),
  };
}

/** @returns {Promise<Backend>} */
async function sqliteBackend() {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(process.env.DATA_DIR ?? './data', 'customer-api.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('busy_timeout = 5000');
  db.defaultSafeIntegers(true);
  const debit = db.prepare('update fiat_accounts set balance_minor = balance_minor - ?, updated_at = ? where id = ? and balance_minor - allocated_minor >= ? returning balance_minor');
  const credit = db.prepare('update fiat_accounts set balance_minor = balance_minor + ?, updated_at = ? where id = ?');
  const journal = db.prepare("insert into ledger_journal (id, customer_id, kind, reference_id, created_at) values (?, ?, 'lean_payment', ?, ?)");
  const event = db.prepare("insert into outbox_events (id, customer_id, event_type, payload, created_at, published_at) values (?, ?, 'payment.created', ?, ?, null)");
  const pay = db.transaction((/** @type {string} */ customerId, /** @type {PaymentBody} */ body) => {
    const amount = BigInt(Math.round(body.amount * 100));
    const now = new Date().toISOString();
    const debited = /** @type {{ balance_minor: bigint } | undefined} */ (debit.get(amount, now, body.fromAccountId, amount));
    if (!debited) throw new Refusal(422, 'INSUFFICIENT_FUNDS');
    credit.run(amount, now, body.toAccountId);
    const reference = randomUUID();
    journal.run(timeOrderedId(), customerId, reference, now);
    const eventId = timeOrderedId();
    event.run(eventId, customerId, JSON.stringify({ id: eventId, type: 'payment.created', created_at: now, data: { reference, amount: body.amount } }), now);
    return String(debited.balance_minor);
  });
  return {
    async pay(customerId, body) {
      return pay.immediate(customerId, body);
    },
    close: async () => db.close(),
  };
}

const backend = databaseUrl ? await postgresBackend() : await sqliteBackend();
const customerId = process.env.LEAN_CUSTOMER_ID ?? '';

servePayments({
  port,
  host,
  pay: async (_headers, body) => ({ balanceAfter: await backend.pay(customerId, body) }),
  close: () => backend.close(),
});
