import type { Migration } from 'kysely/migration';

/**
 * Settings a running server records for the other programs of its deployment (storage/deployment-settings.ts): the
 * operator CLI, in another process and often without the server's environment, reads the server's PUBLIC_URL here
 * to print sign-in links that open on that server.
 */
export function deploymentSettingsMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('deployment_settings')
        .addColumn('name', 'text', (col) => col.primaryKey())
        .addColumn('value', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
    },
  };
}
