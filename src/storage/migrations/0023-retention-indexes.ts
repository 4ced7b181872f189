import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Indexes for the reaper (docs/operations.md "Retention"): each kind of row it deletes is picked, oldest first, from
 * an index on the moment it expires, so a batch reads only the rows it deletes however large the table:
 * - events and webhook deliveries by `created_at` (a delivery's attempts go with it, through their delivery index);
 * - OTC quotes never confirmed, by `expires_at` (a confirmed quote is its order's and stays; the index holds only
 *   the others, so the confirmed ones are never read past);
 * - dashboard sessions by each of their two ends, and sign-in links by theirs;
 * - provider operations by `updated_at` (when they finished: almost every row is finished).
 * Idempotency keys have had theirs since 0007.
 */
export function retentionIndexesMigration(): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('outbox_events_created_idx').on('outbox_events').column('created_at').execute();
      await db.schema.createIndex('webhook_deliveries_created_idx').on('webhook_deliveries').column('created_at').execute();
      await db.schema.createIndex('otc_quotes_unconfirmed_expiry_idx').on('otc_quotes').column('expires_at').where(sql.ref('order_id'), 'is', null).execute();
      await db.schema.createIndex('dashboard_sessions_expiry_idx').on('dashboard_sessions').column('expires_at').execute();
      await db.schema.createIndex('dashboard_sessions_last_seen_idx').on('dashboard_sessions').column('last_seen_at').execute();
      await db.schema.createIndex('dashboard_sign_in_links_expiry_idx').on('dashboard_sign_in_links').column('expires_at').execute();
      await db.schema.createIndex('provider_operations_updated_idx').on('provider_operations').column('updated_at').execute();
    },
  };
}
