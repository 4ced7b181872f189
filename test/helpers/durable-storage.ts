import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { loadConfig, type Config } from '../../src/config/config.js';
import { openStorage } from '../../src/storage/database.js';
import { postgresUrl, temporaryDirectory, testDialect } from './test-app.js';

/**
 * A database and DATA_DIR that outlive one app, so a second app can be built on them as after a restart.
 * On PostgreSQL that is a schema of its own; on SQLite the database file in the directory. `configWith` is the
 * configuration of a start with these settings, on this database.
 */
export async function durableStorage() {
  const dataDir = temporaryDirectory();
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: postgresUrl() });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  if (testDialect === 'postgres') await admin(`create schema ${schema}`);
  const storageConfig = testDialect === 'postgres' ? { dataDir, databaseUrl: postgresUrl(), databasePoolSize: 5 } : { dataDir, databaseUrl: undefined, databasePoolSize: 1 };
  const configWith = (env: Record<string, string> = {}): Config => ({ ...loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_PER_SECOND: 'off', ...env }), ...storageConfig });
  return {
    config: configWith(),
    configWith,
    open: () => openStorage(storageConfig, testDialect === 'postgres' ? { postgresSchema: schema } : {}),
    drop: async () => {
      if (testDialect === 'postgres') await admin(`drop schema if exists ${schema} cascade`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
