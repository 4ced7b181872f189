import { sql } from 'kysely';
import { Migrator, type Migration, type MigrationProvider } from 'kysely/migration';
import type { Storage, Dialect } from './database.js';
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

/** The one migration set for both dialects, in order; names never change once released. */
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
  };
}

async function migrator(storage: Storage): Promise<Migrator> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(storage.dialect) };
  if (storage.dialect === 'sqlite') return new Migrator({ db: storage.db, provider });
  // Kysely looks for its bookkeeping tables in every schema unless told which one: another Kysely-migrated
  // schema in the same database (another app, or another test) would make it skip creating its own.
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db);
  return new Migrator({ db: storage.db, provider, migrationTableSchema: rows[0]?.schema ?? 'public' });
}

/**
 * Applies every pending migration. A lock makes instances starting together take turns (on PostgreSQL a session
 * advisory lock of the schema, database.ts; on SQLite the write lock). It is only taken when something is pending:
 * an instance starting on a current schema never waits for it, whoever holds it (docs/operations.md "Start-up").
 */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  if ((await pendingMigrations(storage)).length === 0) return [];
  const { error, results } = await (await migrator(storage)).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message}`);
  }
  return (results ?? []).map((result) => result.migrationName);
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
  const tables = await storage.db.introspection.getTables();
  return !tables.some((table) => table.name === migrationTable);
}
