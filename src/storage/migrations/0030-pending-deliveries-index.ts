import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The delivery worker's index holds the pending deliveries alone: (subscription, next attempt) where the status is
 * pending, in place of (subscription, status, next attempt). The claim, the listing of due subscriptions and the
 * backlog gauge read only pending deliveries. An attempt's record moves a delivery out of pending, so its new version
 * now has no entry to write into this index (one index write less per delivered event: docs/benchmarks.md), and the
 * index stays the size of the backlog instead of growing with every delivery ever made.
 */
export function pendingDeliveriesIndexMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createIndex('webhook_deliveries_pending_due_idx')
        .on('webhook_deliveries')
        .columns(['subscription_id', 'next_attempt_at'])
        .where(sql.ref('status'), '=', sql.lit('pending'))
        .execute();
      await db.schema.dropIndex('webhook_deliveries_subscription_due_idx').execute();
    },
  };
}
