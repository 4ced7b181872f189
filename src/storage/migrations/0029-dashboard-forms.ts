import type { Migration } from 'kysely/migration';

/**
 * Dashboard forms that are safe to reload (docs/dashboard.md "Forms"):
 *
 * - `api_keys.name`: an optional name a person gives a key ("CI deploys"), shown in lists; null for keys made before
 *   or without one.
 * - `dashboard_reveals`: a secret to show once (a new API key, a webhook signing secret), sealed, kept for minutes
 *   against the SHA-256 of a one-time id and the session it was made in; the reveal page deletes it as it shows it.
 * - `customers.display_name`, `customers.logo_url`: how the customer's hosted onboarding page names it and the logo it
 *   shows, set in the dashboard's settings; null: the customer's name, no logo.
 */
export function dashboardFormsMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('api_keys').addColumn('name', 'text').execute();
      await db.schema.alterTable('customers').addColumn('display_name', 'text').execute();
      await db.schema.alterTable('customers').addColumn('logo_url', 'text').execute();
      await db.schema
        .createTable('dashboard_reveals')
        .addColumn('id_hash', 'text', (col) => col.primaryKey())
        .addColumn('session_id_hash', 'text', (col) => col.notNull())
        .addColumn('kind', 'text', (col) => col.notNull())
        .addColumn('subject_id', 'text', (col) => col.notNull())
        .addColumn('sealed_secret', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('dashboard_reveals_expires_idx').on('dashboard_reveals').column('expires_at').execute();
    },
  };
}
