import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Storage, Dialect } from './database.js';
import { foundationMigration } from './migrations/0001-foundation.js';

/** The one migration set for both dialects, in order; names never change once released. */
function migrations(dialect: Dialect): Record<string, Migration> {
  return {
    '0001-foundation': foundationMigration(dialect),
  };
}

function migrator(storage: Storage): Migrator {
  const provider: MigrationProvider = { getMigrations: async () => migrations(storage.dialect) };
  return new Migrator({ db: storage.db, provider });
}

/** Applies every pending migration; Kysely holds a lock so several instances starting together take turns. */
export async function migrateToLatest(storage: Storage): Promise<string[]> {
  const { error, results } = await migrator(storage).migrateToLatest();
  if (error) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`migration ${failed} failed: ${(error as Error).message}`);
  }
  return (results ?? []).map((result) => result.migrationName);
}

export async function pendingMigrations(storage: Storage): Promise<string[]> {
  const all = await migrator(storage).getMigrations();
  return all.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
