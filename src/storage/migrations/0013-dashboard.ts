import type { Migration } from 'kysely/migration';

/**
 * The customer dashboard (docs/dashboard.md): its users, their one-time sign-in links and their sessions, and the
 * hosted onboarding link of an end user. Every secret here (link tokens, session ids, onboarding tokens) is stored
 * as its SHA-256 only; passwords as scrypt hashes.
 */
export function dashboardMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('dashboard_users')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        // Lower-cased; one user per address across all customers, so sign-in needs nothing but the address.
        .addColumn('email', 'text', (col) => col.notNull().unique())
        .addColumn('password_hash', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('dashboard_sign_in_links')
        .addColumn('token_hash', 'text', (col) => col.primaryKey())
        .addColumn('user_id', 'text', (col) => col.notNull().references('dashboard_users.id').onDelete('cascade'))
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .addColumn('used_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('dashboard_sessions')
        .addColumn('id_hash', 'text', (col) => col.primaryKey())
        .addColumn('user_id', 'text', (col) => col.notNull().references('dashboard_users.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('last_seen_at', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('dashboard_sessions_user_idx').on('dashboard_sessions').column('user_id').execute();

      await db.schema.alterTable('end_users').addColumn('onboarding_token_hash', 'text').execute();
      await db.schema.alterTable('end_users').addColumn('onboarding_expires_at', 'text').execute();
      await db.schema.alterTable('end_users').addColumn('onboarding_completed_at', 'text').execute();
      await db.schema.createIndex('end_users_onboarding_token_idx').on('end_users').column('onboarding_token_hash').unique().execute();
    },
  };
}
