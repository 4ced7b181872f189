// The raw payment baseline of `npm run bench`: node:http and the database driver, nothing of ours. Per request it
// runs the SQL one POST /payments runs in the real server, against the same schema and the same database, with the
// same settings: better-sqlite3 with WAL, synchronous=FULL, foreign_keys=ON and BEGIN IMMEDIATE; or a pg Pool of the
// same size (DATABASE_POOL_SIZE, default 10) when DATABASE_URL is set. What it leaves out is what the comparison
// measures: Fastify, the API-key and CSRF hooks, schema validation and serialisation, Kysely, the fee service,
// presenters, error handling, and SQLite's group commit (each payment commits alone here).
//
// Like the server, it reads the API key, the two accounts and the fee schedule once and then keeps them (the server
// caches them: docs/operations.md "Caches"). The write: on SQLite a transaction of BEGIN, customer sequence,
// conditional debit with RETURNING, journal, 2 postings (one statement), payment, transaction record, 2 outbox
// events (one statement), COMMIT; on PostgreSQL one call of apply_money_plan with the plan the server sends.
//
// Env: PORT, HOST (default 127.0.0.1), DATA_DIR (SQLite) or DATABASE_URL (PostgreSQL), DATABASE_POOL_SIZE.
import { createHash, randomBytes } from 'node:crypto';
import path from 'node:path';
import { v7 as timeOrderedId } from 'uuid';
import { Refusal, servePayments } from './payment-http.mjs';

/**
 * @typedef {import('./payment-http.mjs').PaymentBody} PaymentBody
 * @typedef {{ customer_id: string, revoked_at: string | null }} ApiKeyRow
 * @typedef {{ id: string, currency: string, account_name: string, iban: string | null }} AccountRow
 * @typedef {{ id: string, scope: string, flat_fee_minor: bigint | string, percentage_millionths: bigint | string }} FeeRow
 * @typedef {{ id: string, flat: bigint, millionths: bigint }} Fee
 * @typedef {{ key: ApiKeyRow, source: AccountRow, target: AccountRow, fee: Fee }} PaymentReads
 * @typedef {ReturnType<typeof paymentRows>} PaymentRows
 * @typedef {{ pay: (keyHash: string, body: PaymentBody) => Promise<PaymentRows['payment']>, close: () => Promise<unknown> }} Backend
 */

const port = Number(process.env.PORT ?? 3100);
const host = process.env.HOST ?? '127.0.0.1';
const databaseUrl = process.env.DATABASE_URL?.trim() || undefined;
const poolSize = Number(process.env.DATABASE_POOL_SIZE ?? 10);

const sql = {
  apiKey:
    'select "api_keys".*, "customers"."fr_owner_business_id" from "api_keys" inner join "customers" on "customers"."id" = "api_keys"."customer_id" where "api_keys"."key_hash" = ?',
  account: 'select "id", "currency", "account_name", "iban" from "fiat_accounts" where "customer_id" = ? and "id" = ?',
  fees: 'select * from "fee_schedules" where "scope" in (?, ?) and "transaction_type" = ? and "payment_scheme" = ? and "currency" = ?',
  sequence: 'update "customers" set "transaction_count" = transaction_count + ? where "id" = ? returning "transaction_count"',
  journal: 'insert into "ledger_journal" ("id", "customer_id", "kind", "reference_id", "created_at") values (?, ?, ?, ?, ?)',
  debit:
    'update "fiat_accounts" set "balance_minor" = balance_minor + ?, "updated_at" = ? where "id" = ? and balance_minor - allocated_minor + ? >= 0 returning "balance_minor"',
  postings: 'insert into "ledger_postings" ("journal_id", "account_kind", "account_id", "asset", "amount_minor") values (?, ?, ?, ?, ?), (?, ?, ?, ?, ?)',
  payment:
    'insert into "payments" ("id", "customer_id", "fr_payment_id", "status", "transaction_type", "payment_scheme", "amount_minor", "fee_minor", "fee_schedule_id", "currency", "reference", "from_account_id", "from_virtual_account_id", "to_account_id", "to_virtual_account_id", "payee_id", "payee_verification_id", "umbrella_link_id", "transaction_id", "submit_at", "failure_reason", "completed_at", "created_at", "updated_at") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  transaction:
    'insert into "transactions" ("id", "customer_id", "customer_seq", "fr_transaction_id", "transaction_type", "amount_minor", "currency", "status", "direction", "account_id", "virtual_account_id", "from_account_id", "from_account_type", "to_account_id", "to_account_type", "description", "reference", "counterparty_name", "counterparty_account", "fee_amount_minor", "fee_currency", "payee_id", "payment_id", "balance_before_minor", "balance_after_minor", "completed_at", "created_at", "updated_at") values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
  outbox: 'insert into "outbox_events" ("id", "customer_id", "event_type", "payload", "created_at", "published_at") values (?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?)',
};

/** The same statements in PostgreSQL's placeholder style ($1, $2 …). @param {string} text */
function numbered(text) {
  let index = 0;
  return text.replace(/\?/g, () => `$${++index}`);
}

/**
 * One payment's rows, built the way the service builds them (ids, provider ids, timestamps, event payloads).
 *
 * @param {string} customerId
 * @param {PaymentBody} body
 * @param {AccountRow} source
 * @param {AccountRow} target
 * @param {Fee} fee
 */
function paymentRows(customerId, body, source, target, fee) {
  const amountMinor = BigInt(Math.round(body.amount * 100));
  const feeMinor = fee.flat + (amountMinor * fee.millionths) / 1_000_000n;
  const nowText = new Date().toISOString();
  const paymentId = timeOrderedId();
  const transactionId = timeOrderedId();
  const payment = {
    id: paymentId,
    frPaymentId: `pmt_${randomBytes(12).toString('hex')}`,
    status: 'pending',
    amount: (Number(amountMinor) / 100).toFixed(2),
    currency: body.currency,
    reference: body.reference,
    transactionType: 'payment',
    createdAt: nowText,
  };
  return { amountMinor, feeMinor, reserved: amountMinor + feeMinor, nowText, paymentId, transactionId, payment, source, target, customerId };
}

/**
 * @param {PaymentRows} p
 * @param {string} scheduleId
 */
function paymentValues(p, scheduleId) {
  return [
    p.paymentId, p.customerId, p.payment.frPaymentId, 'pending', 'payment', 'INTERNAL', p.amountMinor, p.feeMinor, scheduleId,
    p.payment.currency, p.payment.reference, p.source.id, null, p.target.id, null, null, null, null, p.transactionId, null, null, null,
    p.nowText, p.nowText,
  ];
}

/**
 * @param {PaymentRows} p
 * @param {bigint | null} sequence
 * @param {bigint | null} before
 * @param {bigint | null} after
 */
function transactionValues(p, sequence, before, after) {
  return [
    p.transactionId, p.customerId, sequence, `txn_${randomBytes(12).toString('hex')}`, 'payment', p.amountMinor, p.payment.currency, 'pending',
    'outgoing', p.source.id, null, p.source.id, 'fiat_account', p.target.id, 'fiat_account', `Payment to ${p.target.account_name}`,
    p.payment.reference, p.target.account_name, p.target.iban, p.feeMinor, p.payment.currency, null, p.paymentId, before, after, null,
    p.nowText, p.nowText,
  ];
}

/**
 * @param {PaymentRows} p
 * @param {string} type
 * @param {object} data
 * @returns {[id: string, customerId: string, type: string, payload: string, createdAt: string, publishedAt: null]}
 */
function eventValues(p, type, data) {
  const id = timeOrderedId();
  return [id, p.customerId, type, JSON.stringify({ id, type, created_at: p.nowText, data }), p.nowText, null];
}

/** @param {PaymentRows} p */
function createdEvent(p) {
  return eventValues(p, 'payment.created', {
    ...p.payment,
    fee: (Number(p.feeMinor) / 100).toFixed(2),
    paymentScheme: 'INTERNAL',
    fromAccountId: p.source.id,
    fromAccountType: 'FIAT_ACCOUNT',
    toAccountId: p.target.id,
    payeeId: null,
    transactionId: p.transactionId,
    failureReason: null,
    completedAt: null,
    updatedAt: p.nowText,
  });
}

/**
 * `before` and `after` are base units, or (PostgreSQL) the placeholders the function fills in.
 *
 * @param {PaymentRows} p
 * @param {bigint | string} before
 * @param {bigint | string} after
 */
function balanceEvent(p, before, after) {
  return eventValues(p, 'fiat_account.balance_updated', {
    fiat_account_id: p.source.id,
    currency: p.payment.currency,
    balance: typeof after === 'string' ? after : Number(after) / 100,
    previous_balance: typeof before === 'string' ? before : Number(before) / 100,
    transaction_id: p.transactionId,
  });
}

/**
 * @param {FeeRow[]} rows
 * @param {string} customerId
 * @returns {Fee}
 */
function pickFee(rows, customerId) {
  const row = rows.find((candidate) => candidate.scope === customerId) ?? rows.find((candidate) => candidate.scope === 'default');
  if (!row) throw new Refusal(422, 'FEE_SCHEDULE_NOT_FOUND');
  return { id: row.id, flat: BigInt(row.flat_fee_minor), millionths: BigInt(row.percentage_millionths) };
}

/** @returns {Promise<Backend>} */
async function sqliteBackend() {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path.join(process.env.DATA_DIR ?? './data', 'customer-api.sqlite'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  if (db.pragma('journal_mode', { simple: true }) !== 'wal' || db.pragma('synchronous', { simple: true }) !== 2) {
    throw new Error('the raw baseline needs WAL and synchronous=FULL');
  }
  db.defaultSafeIntegers(true);
  const s = /** @type {Record<keyof typeof sql, import('better-sqlite3').Statement>} */ (Object.fromEntries(Object.entries(sql).map(([name, text]) => [name, db.prepare(text)])));
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');
  const rollback = db.prepare('rollback');
  const read = remembered((keyHash, body) => {
    const key = /** @type {ApiKeyRow | undefined} */ (s.apiKey.get(keyHash));
    if (!key || key.revoked_at !== null) throw new Refusal(401, 'UNAUTHENTICATED');
    const source = /** @type {AccountRow | undefined} */ (s.account.get(key.customer_id, body.fromAccountId));
    const target = /** @type {AccountRow | undefined} */ (s.account.get(key.customer_id, body.toAccountId));
    if (!source || !target) throw new Refusal(404, 'NOT_FOUND');
    return { key, source, target, fee: pickFee(/** @type {FeeRow[]} */ (s.fees.all(key.customer_id, 'default', 'payment', 'INTERNAL', body.currency)), key.customer_id) };
  });
  return {
    async pay(keyHash, body) {
      const { key, source, target, fee } = await read(keyHash, body);
      const p = paymentRows(key.customer_id, body, source, target, fee);
      begin.run();
      try {
        const sequence = /** @type {{ transaction_count: bigint }} */ (s.sequence.get(1n, p.customerId)).transaction_count;
        const journalId = timeOrderedId();
        s.journal.run(journalId, p.customerId, 'payment_reserve', p.paymentId, p.nowText);
        const debited = /** @type {{ balance_minor: bigint } | undefined} */ (s.debit.get(-p.reserved, p.nowText, source.id, -p.reserved));
        if (!debited) throw new Refusal(422, 'INSUFFICIENT_FUNDS');
        const after = debited.balance_minor;
        const before = after + p.reserved;
        s.postings.run(journalId, 'fiat_account', source.id, p.payment.currency, -p.reserved, journalId, 'system', `suspense:${p.payment.currency}`, p.payment.currency, p.reserved);
        s.payment.run(...paymentValues(p, fee.id));
        s.transaction.run(...transactionValues(p, sequence, before, after));
        s.outbox.run(...createdEvent(p), ...balanceEvent(p, before, after));
        commit.run();
      } catch (error) {
        if (db.inTransaction) rollback.run();
        throw error;
      }
      return p.payment;
    },
    close: async () => db.close(),
  };
}

/** @returns {Promise<Backend>} */
async function postgresBackend() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: databaseUrl, max: poolSize });
  pool.on('error', () => undefined);
  const q = /** @type {Record<keyof typeof sql, string>} */ (Object.fromEntries(Object.entries(sql).map(([name, text]) => [name, numbered(text)])));
  /**
   * @param {string} text
   * @param {unknown[]} values
   * @returns {Promise<unknown[]>}
   */
  const rowsOf = async (text, values) => {
    /** @type {unknown[]} */
    const rows = (await pool.query(text, values)).rows;
    return rows;
  };
  const read = remembered(async (keyHash, body) => {
    const key = /** @type {ApiKeyRow | undefined} */ ((await rowsOf(q.apiKey, [keyHash]))[0]);
    if (!key || key.revoked_at !== null) throw new Refusal(401, 'UNAUTHENTICATED');
    const source = /** @type {AccountRow | undefined} */ ((await rowsOf(q.account, [key.customer_id, body.fromAccountId]))[0]);
    const target = /** @type {AccountRow | undefined} */ ((await rowsOf(q.account, [key.customer_id, body.toAccountId]))[0]);
    if (!source || !target) throw new Refusal(404, 'NOT_FOUND');
    return { key, source, target, fee: pickFee(/** @type {FeeRow[]} */ (await rowsOf(q.fees, [key.customer_id, 'default', 'payment', 'INTERNAL', body.currency])), key.customer_id) };
  });
  return {
    async pay(keyHash, body) {
      const { key, source, target, fee } = await read(keyHash, body);
      const p = paymentRows(key.customer_id, body, source, target, fee);
      const sourceKey = `fiat_account:${source.id}`;
      const placeholder = (/** @type {'before' | 'after'} */ which) => `@balance:${p.paymentId}:${which}@`;
      const balanceNumbers = [
        { placeholder: JSON.stringify(placeholder('after')), account: sourceKey, which: 'after', asset: p.payment.currency, scale: 2 },
        { placeholder: JSON.stringify(placeholder('before')), account: sourceKey, which: 'before', asset: p.payment.currency, scale: 2 },
      ];
      const [paymentEvent, balanceTemplate] = [createdEvent(p), balanceEvent(p, placeholder('before'), placeholder('after'))];
      const plan = {
        customerId: p.customerId,
        createdAt: p.nowText,
        guards: [],
        moves: [{ key: sourceKey, kind: 'fiat_account', id: source.id, masterId: null, delta: String(-p.reserved) }],
        journal: {
          id: timeOrderedId(),
          kind: 'payment_reserve',
          referenceId: p.paymentId,
          postings: [
            { accountKind: 'fiat_account', accountId: source.id, asset: p.payment.currency, amount: String(-p.reserved) },
            { accountKind: 'system', accountId: `suspense:${p.payment.currency}`, asset: p.payment.currency, amount: String(p.reserved) },
          ],
        },
        rows: [{ table: 'payments', values: Object.fromEntries(paymentColumns.map((column, index) => [column, toPg(paymentValues(p, fee.id)[index])])) }],
        history: [{ ...Object.fromEntries(transactionColumns.map((column, index) => [column, toPg(transactionValues(p, null, null, null)[index])])), balanceOf: sourceKey }],
        historyUpdates: [],
        events: [
          { id: paymentEvent[0], customerId: p.customerId, type: 'payment.created', createdAt: p.nowText, payload: paymentEvent[3], numbers: [] },
          { id: balanceTemplate[0], customerId: p.customerId, type: 'fiat_account.balance_updated', createdAt: p.nowText, payload: balanceTemplate[3], numbers: balanceNumbers },
        ],
        response: null,
      };
      await pool.query({ name: 'apply-money-plan', text: 'select apply_money_plan($1::jsonb) as result', values: [JSON.stringify(plan)] }).catch((/** @type {{ code?: string, message?: string }} */ error) => {
        if (error.code === 'P0001' && error.message === 'INSUFFICIENT_FUNDS') throw new Refusal(422, 'INSUFFICIENT_FUNDS');
        throw error;
      });
      return p.payment;
    },
    close: () => pool.end(),
  };
}

/**
 * The reads a payment needs, made once per key and accounts and then kept, as the server's caches keep them.
 *
 * @param {(keyHash: string, body: PaymentBody) => PaymentReads | Promise<PaymentReads>} read
 * @returns {(keyHash: string, body: PaymentBody) => Promise<PaymentReads>}
 */
function remembered(read) {
  /** @type {Map<string, PaymentReads>} */
  const known = new Map();
  return async (keyHash, body) => {
    const id = `${keyHash}|${body.fromAccountId}|${body.toAccountId}|${body.currency}`;
    if (!known.has(id)) known.set(id, await read(keyHash, body));
    return /** @type {PaymentReads} */ (known.get(id));
  };
}

const paymentColumns = sql.payment.slice(sql.payment.indexOf('(') + 1, sql.payment.indexOf(')')).split(', ').map((column) => column.replaceAll('"', ''));
const transactionColumns = sql.transaction.slice(sql.transaction.indexOf('(') + 1, sql.transaction.indexOf(')')).split(', ').map((column) => column.replaceAll('"', ''));

/** pg sends bigint parameters as text (as Kysely's pg dialect does). @param {unknown} value */
function toPg(value) {
  return typeof value === 'bigint' ? String(value) : value;
}

const backend = databaseUrl ? await postgresBackend() : await sqliteBackend();

servePayments({
  port,
  host,
  pay: (headers, body) => {
    const presented = headers['x-api-key'];
    if (typeof presented !== 'string') throw new Refusal(401, 'UNAUTHENTICATED');
    return backend.pay(createHash('sha256').update(presented).digest('hex'), body);
  },
  close: () => backend.close(),
});
