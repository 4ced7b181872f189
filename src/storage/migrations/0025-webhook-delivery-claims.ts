import type { Migration } from 'kysely/migration';

/**
 * The delivery worker claims each subscription's due deliveries on their own (docs/webhooks.md "Fairness"): one
 * index range per subscription, (subscription, status, next attempt), oldest due first, however many deliveries the
 * table holds — where the claim used to rank every due delivery of every subscription with a window function. The
 * index on (status, next attempt) served only that claim; it goes, so an attempt's record updates one index less.
 */
export function webhookDeliveryClaimsMigration(): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('webhook_deliveries_subscription_due_idx').on('webhook_deliveries').columns(['subscription_id', 'status', 'next_attempt_at']).execute();
      await db.schema.dropIndex('webhook_deliveries_due_idx').execute();
    },
  };
}
