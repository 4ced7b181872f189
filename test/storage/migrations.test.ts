import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Migrations are history: each holds the schema change it made when it was written, and nothing of the application
 * (src/storage/migrate.ts). One that imported application code would run differently on a fresh database whenever
 * that code changed.
 */

const migrationsDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../src/storage/migrations');
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
});
