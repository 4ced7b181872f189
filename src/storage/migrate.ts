import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { sql, type DatabaseIntrospector, type Kysely, type SchemaMetadata, type TableMetadata } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import { takeMigrationLockForTransaction, type Storage, type Dialect } from './database.js';
import type { Database } from './tables.js';
import { foundationMigration } from './migrations/0001-foundation.js';
import { onboardingMigration } from './migrations/0002-onboarding.js';
import { moneyMigration } from './migrations/0003-money.js';
import { feesMigration } from './migrations/0004-fees.js';
import { providerOperationsMigration } from './migrations/0005-provider-operations.js';
import { moneyPlanMigration } from './migrations/0006-money-plan.js';
import { idempotencyMigration } from './migrations/0007-idempotency.js';
import { severalInstancesMigration } from './migrations/0008-several-instances.js';
import { walletsMigration } from './migrations/0009-wallets.js';
import { walletMoneyMigration } from './migrations/0010-wallet-money.js';
import { otcMigration } from './migrations/0011-otc.js';
import { webhooksMigration } from './migrations/0012-webhooks.js';
import { dashboardMigration } from './migrations/0013-dashboard.js';
import { accountStatusMoneyMigration } from './migrations/0014-account-status-money.js';
import { idempotencyScopesMigration } from './migrations/0015-idempotency-scopes.js';
import { onboardingSecretAndDocumentKindMigration } from './migrations/0016-onboarding-secret-and-document-kind.js';
import { wrappedServerSecretsMigration } from './migrations/0017-wrapped-server-secrets.js';
import { reverseSolicitationAttestationMigration } from './migrations/0018-reverse-solicitation-attestation.js';
import { deploymentSettingsMigration } from './migrations/0019-deployment-settings.js';
import { reconciliationIndexesMigration } from './migrations/0020-reconciliation-indexes.js';
import { providerEventsMigration } from './migrations/0021-provider-events.js';
import { sandboxTimersMigration } from './migrations/0022-sandbox-timers.js';
import { retentionIndexesMigration } from './migrations/0023-retention-indexes.js';
import { webhookAttemptDetailsMigration } from './migrations/0024-webhook-attempt-details.js';
import { webhookDeliveryClaimsMigration } from './migrations/0025-webhook-delivery-claims.js';
import { sandboxKycTimersMigration } from './migrations/0026-sandbox-kyc-timers.js';
import { sandboxTestClocksMigration } from './migrations/0027-sandbox-test-clocks.js';
import { testClockSchedulesMigration } from './migrations/0028-test-clock-schedules.js';
import { dashboardFormsMigration } from './migrations/0029-dashboard-forms.js';
import { webhookDeliveryLeasesMigration } from './migrations/0030-webhook-delivery-leases.js';

/**
 * The one migration set for both dialects, in order; names never change once released. A migration is history: it
 * holds the schema change it made when written and imports nothing but Kysely (test/storage/migrations.test.ts),
 * so a fresh database gets exactly what an old one got. The live PL/pgSQL functions are not migrations: they have
 * one source, a SQL file (`moneyPlanFunctions`).
 */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-foundation': foundationMigration(dialect),
    '0002-onboarding': onboardingMigration(),
    '0003-money': moneyMigration(dialect),
    '0004-fees': feesMigration(dialect),
    '0005-provider-operations': providerOperationsMigration(),
    '0006-money-plan': moneyPlanMigration(dialect),
    '0007-idempotency': idempotencyMigration(),
    '0008-several-instances': severalInstancesMigration(dialect),
    '0009-wallets': walletsMigration(),
    '0010-wallet-money': walletMoneyMigration(dialect),
    '0011-otc': otcMigration(),
    '0012-webhooks': webhooksMigration(),
    '0013-dashboard': dashboardMigration(),
    '0014-account-status-money': accountStatusMoneyMigration(dialect),
    '0015-idempotency-scopes': idempotencyScopesMigration(),
    '0016-onboarding-secret-and-document-kind': onboardingSecretAndDocumentKindMigration(),
    '0017-wrapped-server-secrets': wrappedServerSecretsMigration(),
    '0018-reverse-solicitation-attestation': reverseSolicitationAttestationMigration(),
    '0019-deployment-settings': deploymentSettingsMigration(),
    '0020-reconciliation-indexes': reconciliationIndexesMigration(),
    '0021-provider-events': providerEventsMigration(dialect),
    '0022-sandbox-timers': sandboxTimersMigration(),
    '0023-retention-indexes': retentionIndexesMigration(),
    '0024-webhook-attempt-details': webhookAttemptDetailsMigration(),
    '0025-webhook-delivery-claims': webhookDeliveryClaimsMigration(),
    '0026-sandbox-kyc-timers': sandboxKycTimersMigration(),
    '0027-sandbox-test-clocks': sandboxTestClocksMigration(),
    '0028-test-clock-schedules': testClockSchedulesMigration(),
    '0029-dashboard-forms': dashboardFormsMigration(),
    '0030-webhook-delivery-leases': webhookDeliveryLeasesMigration(dialect),
  };
}

async function migrator(storage: Storage): Promise<Migrator> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(storage.dialect) };
  if (storage.dialect === 'sqlite') return new Migrator({ db: storage.db, provider });
  // Kysely looks for its bookkeeping tables in every schema unless told which one: another Kysely-migrated
  // schema in the same database (another app, or another test) would make it skip creating its own.
  const schema = await currentSchema(storage);
  return new Migrator({ db: withIntrospection(storage.db, schemaIntrospector(storage.db, schema)), provider, migrationTableSchema: schema });
}

async function currentSchema(storage: Storage): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db);
  return rows[0]?.schema ?? 'public';
}

/**
 * Introspection limited to one PostgreSQL schema, ours. Kysely's own lists every schema and checks each one's
 * privileges by name, so a schema another process drops meanwhile (another app sharing the database, another test
 * run) failed our start-up with `schema "…" does not exist`. We only ask whether our schema and Kysely's bookkeeping
 * tables exist.
 */
function schemaIntrospector(db: Kysely<Database>, schema: string): DatabaseIntrospector {
  return {
    getSchemas: async () => {
      const { rows } = await sql<SchemaMetadata>`select nspname as name from pg_catalog.pg_namespace where nspname = ${schema}`.execute(db);
      return rows;
    },
    getTables: async () => {
      const { rows } = await sql<{ name: string; isView: boolean }>`
        select c.relname as name, c.relkind = 'v' as "isView" from pg_catalog.pg_class c
        join pg_catalog.pg_namespace n on n.oid = c.relnamespace
        where n.nspname = ${schema} and c.relkind in ('r', 'p', 'v')`.execute(db);
      return rows.map((row): TableMetadata => ({ ...row, schema, isForeign: false, columns: [] }));
    },
  };
}

/** The database as the migrator sees it: `introspection` replaced. */
function withIntrospection(db: Kysely<Database>, introspection: DatabaseIntrospector): Kysely<Database> {
  // Kysely keeps its state in private fields: every other member is the real instance's, bound to it.
  return new Proxy(db, {
    get: (target, property) => {
      if (property === 'introspection') return introspection;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * Applies every pending migration, then, on PostgreSQL, re-creates the live functions if their source changed
 * (`installFunctions`). Returns the migrations applied.
 *
 * A lock makes instances starting together take turns (on PostgreSQL a session advisory lock of the schema,
 * database.ts; on SQLite the write lock). It is only taken when there is something to do: an instance starting on a
 * current schema reads the applied migrations and the functions' recorded checksum in one query and never waits for
 * the lock, whoever holds it (docs/operations.md "Start-up").
 */
export async function migrateToLatest(storage: Storage, functions = storage.dialect === 'postgres' ? moneyPlanFunctions() : undefined): Promise<string[]> {
  const schema = await schemaState(storage, functions);
  if (schema.pendingMigrations.length === 0 && schema.functionsCurrent) return [];
  const applied = schema.pendingMigrations.length === 0 ? [] : await applyPendingMigrations(storage);
  if (functions) await installFunctions(storage, functions);
  return applied;
}

/** Applies the migrations up to `name` only: the schema an older release left, for a test of the next migration's data. */
export async function migrateTo(storage: Storage, name: string): Promise<void> {
  const { error } = await (await migrator(storage)).migrateTo(name);
  if (error) throw error as Error;
}

async function applyPendingMigrations(storage: Storage): Promise<string[]> {
  const { error, results } = await (await migrator(storage)).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message}`);
  }
  return (results ?? []).map((result) => result.migrationName);
}

/** A SQL file of live PL/pgSQL functions: its name, its text, and the SHA-256 of the text (hex). */
export interface FunctionSource {
  readonly file: string;
  readonly text: string;
  readonly checksum: string;
}

export function functionSource(file: string, text: string): FunctionSource {
  return { file, text, checksum: createHash('sha256').update(text).digest('hex') };
}

const moneyPlanFunctionsFile = 'apply-money-plan.sql';
let moneyPlanFunctionsSource: FunctionSource | undefined;

/**
 * `apply_money_plan` and its helper, from the one file that holds their text: src/storage/sql, copied to
 * dist/storage/sql by the build. Read once per process.
 */
export function moneyPlanFunctions(): FunctionSource {
  moneyPlanFunctionsSource ??= functionSource(moneyPlanFunctionsFile, fs.readFileSync(new URL(`./sql/${moneyPlanFunctionsFile}`, import.meta.url), 'utf8'));
  return moneyPlanFunctionsSource;
}

/** The migrator's record of the function sources it ran: the checksum of each file's text. */
const functionChecksumsTable = 'function_checksums';

/**
 * Runs `source` (create or replace function ...) unless the database records its checksum already, and records it,
 * in one transaction under the migration lock: of instances starting together with a new version, one re-creates
 * the functions, the others find its checksum and do nothing.
 */
async function installFunctions(storage: Storage, source: FunctionSource): Promise<void> {
  await storage.transaction(async (trx) => {
    await takeMigrationLockForTransaction(trx);
    await sql`create table if not exists ${sql.table(functionChecksumsTable)} (file text primary key, checksum text not null)`.execute(trx);
    const { rows } = await sql<{ checksum: string }>`select checksum from ${sql.table(functionChecksumsTable)} where file = ${source.file}`.execute(trx);
    if (rows[0]?.checksum === source.checksum) return;
    await sql.raw(source.text).execute(trx);
    await sql`insert into ${sql.table(functionChecksumsTable)} (file, checksum) values (${source.file}, ${source.checksum})
      on conflict (file) do update set checksum = excluded.checksum`.execute(trx);
  });
}

interface SchemaState {
  pendingMigrations: string[];
  /** Whether the database records the checksum of the function source (true when there is none to install). */
  functionsCurrent: boolean;
}

/** PostgreSQL's SQLSTATE for a table that does not exist. */
const undefinedTable = '42P01';

/** What migrateToLatest has to do, in one read when the schema is current. */
async function schemaState(storage: Storage, functions: FunctionSource | undefined): Promise<SchemaState> {
  if (functions === undefined) return { pendingMigrations: await pendingMigrations(storage), functionsCurrent: true };
  try {
    // Without a parameter pg sends it as a simple query, the cheapest kind (this read is on every start-up).
    const { rows } = await sql<{ name: string; checksum: string | null }>`
      select name, null as checksum from ${sql.table(migrationTable)}
      union all select file, checksum from ${sql.table(functionChecksumsTable)}`.execute(storage.db);
    const applied = new Set(rows.filter((row) => row.checksum === null).map((row) => row.name));
    return {
      pendingMigrations: Object.keys(migrations(storage.dialect)).filter((name) => !applied.has(name)),
      functionsCurrent: rows.some((row) => row.name === functions.file && row.checksum === functions.checksum),
    };
  } catch (error) {
    // A database that predates the checksums table (or an empty one): the slow path finds out what is missing.
    if ((error as { code?: string }).code !== undefinedTable) throw error;
    return { pendingMigrations: await pendingMigrations(storage), functionsCurrent: false };
  }
}

/** Kysely's bookkeeping table, in the schema the connection uses (the search_path's first on PostgreSQL). */
const migrationTable = 'kysely_migration';

/**
 * The migrations this version knows that the database has not applied, in one read (GET /ready polls it). A
 * database without Kysely's table has them all pending.
 */
export async function pendingMigrations(storage: Storage): Promise<string[]> {
  let applied: Set<string>;
  try {
    const { rows } = await sql<{ name: string }>`select name from ${sql.table(migrationTable)}`.execute(storage.db);
    applied = new Set(rows.map((row) => row.name));
  } catch (error) {
    if (!(await migrationTableMissing(storage))) throw error;
    applied = new Set();
  }
  return Object.keys(migrations(storage.dialect)).filter((name) => !applied.has(name));
}

async function migrationTableMissing(storage: Storage): Promise<boolean> {
  const introspection = storage.dialect === 'sqlite' ? storage.db.introspection : schemaIntrospector(storage.db, await currentSchema(storage));
  const tables = await introspection.getTables();
  return !tables.some((table) => table.name === migrationTable);
}
