import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { functionSource, migrateTo, migrateToLatest, moneyPlanFunctions, type FunctionSource } from '../../src/storage/migrate.js';
import { insertCustomerRow, insertFiatAccountRow } from '../helpers/rows.js';
import { postgresUrl, testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/**
 * Migrations are history: each holds the schema change it made when it was written, and nothing of the application
 * (src/storage/migrate.ts). One that imported application code would run differently on a fresh database whenever
 * that code changed.
 */

const storageDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/storage');
const migrationsDir = path.join(storageDir, 'migrations');
/** What a migration may import: Kysely, and nothing else. */
const allowedImports = new Set(['kysely', 'kysely/migration']);

/** The module specifiers of every import and export-from of a TypeScript source, type-only ones included. */
function importedModules(source: string): string[] {
  return [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]|^\s*import\s+['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/gm)].map(
    (match) => (match[1] ?? match[2] ?? match[3])!,
  );
}

/** Each forbidden import of the migration files, as "file imports module". */
function forbiddenMigrationImports(files: Record<string, string>): string[] {
  return Object.entries(files).flatMap(([file, source]) =>
    importedModules(source)
      .filter((module) => !allowedImports.has(module))
      .map((module) => `${file} imports ${module}`),
  );
}

describe('migrations', () => {
  it('import nothing but Kysely: a migration is self-contained history, not application code', () => {
    const files = Object.fromEntries(
      fs
        .readdirSync(migrationsDir)
        .filter((name) => name.endsWith('.ts'))
        .map((name) => [name, fs.readFileSync(path.join(migrationsDir, name), 'utf8')]),
    );
    expect(Object.keys(files).length).toBeGreaterThan(0);
    expect(forbiddenMigrationImports(files)).toEqual([]);
  });

  it('names a migration that imports application code, type-only imports included', () => {
    const files = {
      '9998-bad.ts': "import { sql } from 'kysely';\nimport type { Dialect } from '../database.js';\n",
      '9999-worse.ts': "import type { Migration } from 'kysely/migration';\nimport {\n  assetCodes,\n} from '../../ledger/assets.js';\n",
    };
    expect(forbiddenMigrationImports(files)).toEqual(['9998-bad.ts imports ../database.js', '9999-worse.ts imports ../../ledger/assets.js']);
  });

  it('are numbered one after another from 0001, so a new one sorts after every migration a database may have run', () => {
    // The migrator refuses a migration that sorts before one already applied: a gap filled later would stop start-up.
    const numbers = fs
      .readdirSync(migrationsDir)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => Number(/^(\d{4})-/.exec(name)?.[1]))
      .sort((a, b) => a - b);
    expect(numbers).toEqual(numbers.map((_number, index) => index + 1));
  });
});

/**
 * The live PL/pgSQL functions have one source, src/storage/sql/apply-money-plan.sql: a start-up re-creates them
 * when the file's checksum differs from the one the database records, and does nothing when it does not.
 */
describe.skipIf(testDialect !== 'postgres')('the PostgreSQL functions from their SQL file', () => {
  let storage: Storage;

  useFreshStorage((fresh) => (storage = fresh));

  /** The function as the schema has it: its body, and the transaction that last wrote its catalog row. */
  async function installedFunction(name: string): Promise<{ body: string; writtenBy: string }> {
    const { rows } = await sql<{ body: string; writtenBy: string }>`
      select prosrc as body, xmin::text as "writtenBy" from pg_proc where proname = ${name} and pronamespace = current_schema()::regnamespace`.execute(storage.db);
    expect(rows).toHaveLength(1);
    return rows[0]!;
  }

  async function recordedChecksum(): Promise<string | undefined> {
    const { rows } = await sql<{ checksum: string }>`select checksum from function_checksums where file = 'apply-money-plan.sql'`.execute(storage.db);
    return rows[0]?.checksum;
  }

  /** The file's text with a line added to the body of apply_money_plan: another version of the function. */
  function changedSource(marker: string): FunctionSource {
    const text = moneyPlanFunctions().text.replace(/(create or replace function apply_money_plan\(plan jsonb\)[\s\S]*?\nbegin\n)/, `$1  -- ${marker}\n`);
    expect(text).toContain(marker);
    return functionSource('apply-money-plan.sql', text);
  }

  it('reads the one SQL file under src/storage/sql', () => {
    expect(moneyPlanFunctions().text).toBe(fs.readFileSync(path.join(storageDir, 'sql/apply-money-plan.sql'), 'utf8'));
  });

  it('creates the functions of the file on a new database, after the migrations that created earlier versions, and records its checksum', async () => {
    expect(await migrateToLatest(storage)).toContain('0014-account-status-money');
    const source = moneyPlanFunctions().text;
    for (const name of ['apply_money_plan', 'money_plan_fill']) expect(source).toContain((await installedFunction(name)).body);
    expect(await recordedChecksum()).toBe(moneyPlanFunctions().checksum);
  });

  it('leaves the functions alone on a start with the file unchanged', async () => {
    const before = await installedFunction('apply_money_plan');
    expect(await migrateToLatest(storage)).toEqual([]);
    expect(await installedFunction('apply_money_plan')).toEqual(before);
  });

  it('re-creates the functions on the next start once the file changed, and only once', async () => {
    const before = await installedFunction('apply_money_plan');
    const changed = changedSource('a new version');
    expect(await migrateToLatest(storage, changed)).toEqual([]);
    const after = await installedFunction('apply_money_plan');
    expect(after.writtenBy).not.toBe(before.writtenBy);
    expect(after.body).toContain('-- a new version');
    expect(await recordedChecksum()).toBe(changed.checksum);

    await migrateToLatest(storage, changed);
    expect(await installedFunction('apply_money_plan')).toEqual(after);

    // Back to the file as it is (a rollback is a change too).
    await migrateToLatest(storage);
    expect((await installedFunction('apply_money_plan')).body).not.toContain('-- a new version');
    expect(await recordedChecksum()).toBe(moneyPlanFunctions().checksum);
  });

  it('re-creates them once when several instances start together with a new version', async () => {
    const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db)).rows[0]!.schema;
    const config = { dataDir: '', databaseUrl: postgresUrl(), databasePoolSize: 2 };
    const instances = await Promise.all([1, 2, 3].map(() => openStorage(config, { postgresSchema: schema })));
    try {
      const changed = changedSource('started together');
      await Promise.all(instances.map((instance) => migrateToLatest(instance, changed)));
      expect((await installedFunction('apply_money_plan')).body).toContain('-- started together');
      expect(await recordedChecksum()).toBe(changed.checksum);
    } finally {
      await Promise.all(instances.map((instance) => instance.close()));
    }
    await migrateToLatest(storage);
  });

  it('starts on a current schema without waiting for the migration lock, whoever holds it', async () => {
    const holder = new pg.Client({ connectionString: postgresUrl() });
    await holder.connect();
    try {
      const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db)).rows[0]!.schema;
      await holder.query(`select pg_advisory_lock(${0x43415049}, hashtext($1))`, [schema]);
      const waitedMs = 10_000;
      const waited = new Promise<'waited for the lock'>((resolve) => setTimeout(() => resolve('waited for the lock'), waitedMs).unref());
      expect(await Promise.race([migrateToLatest(storage), waited])).toEqual([]);
    } finally {
      await holder.end();
    }
  });
});

/**
 * Migrations that move data, each from the schema the release before it left, on a database of its own. 0022 moves
 * the sandbox's timers out of the resource tables into its own `sandbox_timers`: what was due for a pending payment,
 * wallet transfer or OTC order stays due, a settled one's is not carried over, and the resource tables keep no
 * `settle_at` (a payment keeps its rail submission's schedule as `submit_at`). 0024 keeps what each webhook attempt
 * exchanged and copies the delivery's subscription onto its attempts (a subscription's health is read by it):
 * attempts recorded before keep null details and get their subscription. 0026 does for the KYC decisions that magic
 * names announced, kept in `end_users` until then, what 0022 did for the other timers.
 */
describe('migrations that move data', () => {
  let storage: Storage;

  useFreshStorage((fresh) => (storage = fresh), { each: true });

  it('0022 moves the timers of pending resources into sandbox_timers and drops settle_at', async () => {
    await migrateTo(storage, '0021-provider-events');
    const at = '2026-01-01T00:00:00.000Z';
    const due = '2026-01-01T00:00:02.000Z';
    const customer = await insertCustomerRow(storage);
    const account = await insertFiatAccountRow(storage, customer);
    const insert = (statement: ReturnType<typeof sql>) => statement.execute(storage.db);
    const payment = (id: string, status: string, settleAt: string | null) =>
      insert(sql`insert into payments (id, customer_id, fr_payment_id, status, transaction_type, payment_scheme, amount_minor, fee_minor, currency,
        reference, from_account_id, transaction_id, settle_at, created_at, updated_at)
        values (${id}, ${customer}, ${`pmt_${id}`}, ${status}, 'payment', 'SEPA', 100, 0, 'EUR', 'Invoice', ${account}, ${`t-${id}`}, ${settleAt}, ${at}, ${at})`);
    await payment('p-pending', 'pending', due);
    await payment('p-settled', 'completed', null);
    await insert(sql`insert into wallets (id, customer_id, fr_wallet_id, provider, display_name, status, created_at, updated_at)
      values ('w', ${customer}, 'fr-w', 'sandbox', 'Wallet', 'active', ${at}, ${at})`);
    await insert(sql`insert into wallet_transfers (id, customer_id, wallet_id, fr_transfer_id, direction, status, asset, network, amount_minor, destination, settle_at, created_at, updated_at)
      values ('t-pending', ${customer}, 'w', 'wtx_1', 'outgoing', 'pending', 'USDC', 'ETH', 1, '0xabc', ${due}, ${at}, ${at})`);
    await insert(sql`insert into otc_quotes (id, customer_id, source_account_id, wallet_id, destination_currency, source_amount_minor, mid_rate, rate,
      destination_amount_minor, spread_minor, source_amount_usdc_minor, ttl_seconds, expires_at, order_id, created_at)
      values ('q', ${customer}, ${account}, 'w', 'USDC', 100, 1, 1, 100, 0, 100, 60, ${due}, 'o-debited', ${at})`);
    await insert(sql`insert into otc_orders (id, customer_id, quote_id, status, source_account_id, wallet_id, destination_currency, source_amount_minor, rate,
      destination_amount_minor, spread_minor, source_amount_usdc_minor, transaction_id, settle_at, debited_at, created_at, updated_at)
      values ('o-debited', ${customer}, 'q', 'debited', ${account}, 'w', 'USDC', 100, 1, 100, 0, 100, 't-o', ${due}, ${at}, ${at}, ${at})`);

    await migrateTo(storage, '0022-sandbox-timers');

    const timers = await sql<Record<string, unknown>>`select id, resource, customer_id, due_at from sandbox_timers order by id`.execute(storage.db).then((result) => result.rows);
    expect(timers).toEqual([
      { id: 'o-debited', resource: 'otc_order', customer_id: customer, due_at: due },
      { id: 'p-pending', resource: 'payment', customer_id: customer, due_at: due },
      { id: 't-pending', resource: 'wallet_transfer', customer_id: customer, due_at: due },
    ]);
    const read = (column: string, table: string) => sql`select ${sql.ref(column)} from ${sql.table(table)}`.execute(storage.db);
    for (const table of ['payments', 'wallet_transfers', 'otc_orders']) await expect(read('settle_at', table)).rejects.toThrow(/settle_at/);
    const submissions = await sql<{ id: string; submit_at: string | null }>`select id, submit_at from payments order by id`.execute(storage.db);
    expect(submissions.rows).toEqual([
      { id: 'p-pending', submit_at: due },
      { id: 'p-settled', submit_at: null },
    ]);
  });

  it('0026 moves the decisions announced by magic names into sandbox_timers and drops them from end_users', async () => {
    await migrateTo(storage, '0022-sandbox-timers');
    const at = '2026-01-01T00:00:00.000Z';
    const due = '2026-01-01T00:00:02.000Z';
    const customer = await insertCustomerRow(storage);
    const insert = (statement: ReturnType<typeof sql>) => statement.execute(storage.db);
    const endUser = (id: string, decision: string | null, decideAt: string | null) =>
      insert(sql`insert into end_users (id, customer_id, fr_end_user_id, end_user_type, status, reference_code, email, risk_tier, sandbox_decision, sandbox_decide_at, created_at, updated_at)
        values (${id}, ${customer}, ${`eu_${id}`}, 'INDIVIDUAL', 'pending', ${`ref-${id}`}, '', 'low', ${decision}, ${decideAt}, ${at}, ${at})`);
    await endUser('u-announced', 'review_required', due);
    await endUser('u-decided', null, null);
    await insert(sql`insert into sandbox_timers (id, resource, customer_id, due_at) values ('p-pending', 'payment', ${customer}, ${due})`);

    await migrateToLatest(storage);

    const timers = await storage.db.selectFrom('sandbox_timers').selectAll().orderBy('id').execute();
    // 0027 keeps every timer written before it on the server clock (no test clock).
    expect(timers).toEqual([
      { id: 'p-pending', resource: 'payment', customer_id: customer, due_at: due, answer: null, clock_id: null },
      { id: 'u-announced', resource: 'end_user', customer_id: customer, due_at: due, answer: 'review_required', clock_id: null },
    ]);
    const read = (column: string) => sql`select ${sql.ref(column)} from end_users`.execute(storage.db);
    for (const column of ['sandbox_decision', 'sandbox_decide_at']) await expect(read(column)).rejects.toThrow(new RegExp(column));
    await expect(insert(sql`insert into sandbox_timers (id, resource, customer_id, due_at) values ('x', 'other', ${customer}, ${due})`)).rejects.toThrow();
  });

  it('0024 fills in the subscription of the attempts recorded before, with no details', async () => {
    await migrateTo(storage, '0022-sandbox-timers');
    const at = '2026-01-01T00:00:00.000Z';
    const customer = await insertCustomerRow(storage);
    const insert = (statement: ReturnType<typeof sql>) => statement.execute(storage.db);
    await insert(sql`insert into webhook_subscriptions (id, customer_id, url, description, event_types, is_active, secret_encrypted, signing_secret_prefix,
      consecutive_failures, created_at, updated_at) values ('s', ${customer}, 'https://example.com/hooks', '', '["payee.created"]', 1, 'sealed', 'whsec_abcdef', 0, ${at}, ${at})`);
    await insert(sql`insert into webhook_deliveries (id, subscription_id, customer_id, event_id, event_type, status, attempt_count, created_at, updated_at)
      values ('d', 's', ${customer}, 'e', 'payee.created', 'succeeded', 1, ${at}, ${at})`);
    await insert(sql`insert into webhook_attempts (id, delivery_id, attempt_number, succeeded, status_code, duration_ms, error, created_at)
      values ('a', 'd', 1, 1, 200, 12, null, ${at})`);

    await migrateToLatest(storage);

    const attempts = await storage.db.selectFrom('webhook_attempts').selectAll().execute();
    expect(attempts.map((attempt) => ({ ...attempt, response_body_truncated: Number(attempt.response_body_truncated) }))).toEqual([
      expect.objectContaining({ id: 'a', subscription_id: 's', request_headers: null, response_headers: null, response_body: null, response_body_truncated: 0 }),
    ]);
    // 0028 keeps every delivery written before it on the server clock (no test clock).
    expect(await storage.db.selectFrom('webhook_deliveries').select(['id', 'clock_id']).execute()).toEqual([{ id: 'd', clock_id: null }]);
  });
});
