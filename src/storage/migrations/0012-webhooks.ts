import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Webhooks (docs/webhooks.md): a customer's subscriptions, one delivery per (event, subscription) — its id is the
 * `webhook-id` header, the same on every retry — and the log of every attempt. Signing secrets are stored encrypted
 * (storage/secret-box.ts); the previous secret of a rotation is kept, also encrypted, until it expires.
 */
export function webhooksMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('webhook_subscriptions')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('url', 'text', (col) => col.notNull())
        .addColumn('description', 'text', (col) => col.notNull())
        .addColumn('event_types', 'text', (col) => col.notNull())
        .addColumn('is_active', 'integer', (col) => col.notNull().check(sql`is_active in (0, 1)`))
        .addColumn('secret_encrypted', 'text', (col) => col.notNull())
        .addColumn('signing_secret_prefix', 'text', (col) => col.notNull())
        .addColumn('previous_secret_encrypted', 'text')
        .addColumn('previous_secret_expires_at', 'text')
        .addColumn('consecutive_failures', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('failing_since', 'text')
        .addColumn('disabled_at', 'text')
        .addColumn('disabled_reason', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('webhook_subscriptions_customer_idx').on('webhook_subscriptions').columns(['customer_id', 'created_at']).execute();

      await db.schema
        .createTable('webhook_deliveries')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('subscription_id', 'text', (col) => col.notNull().references('webhook_subscriptions.id').onDelete('cascade'))
        .addColumn('customer_id', 'text', (col) => col.notNull())
        .addColumn('event_id', 'text', (col) => col.notNull())
        .addColumn('event_type', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('pending', 'succeeded', 'failed')`))
        .addColumn('attempt_count', 'integer', (col) => col.notNull().defaultTo(0))
        // When the next attempt is due; while an attempt runs, the lease of the instance making it.
        .addColumn('next_attempt_at', 'text')
        .addColumn('last_attempt_at', 'text')
        .addColumn('last_status_code', 'integer')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addUniqueConstraint('webhook_deliveries_event_unique', ['subscription_id', 'event_id'])
        .execute();
      await db.schema.createIndex('webhook_deliveries_due_idx').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
      await db.schema.createIndex('webhook_deliveries_subscription_idx').on('webhook_deliveries').columns(['subscription_id', 'created_at']).execute();

      await db.schema
        .createTable('webhook_attempts')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('delivery_id', 'text', (col) => col.notNull().references('webhook_deliveries.id').onDelete('cascade'))
        .addColumn('attempt_number', 'integer', (col) => col.notNull())
        .addColumn('succeeded', 'integer', (col) => col.notNull().check(sql`succeeded in (0, 1)`))
        .addColumn('status_code', 'integer')
        .addColumn('duration_ms', 'integer', (col) => col.notNull())
        .addColumn('error', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('webhook_attempts_delivery_idx').on('webhook_attempts').columns(['delivery_id', 'attempt_number']).execute();

      // GET /events reads a customer's events newest first.
      await db.schema.createIndex('outbox_events_customer_created_idx').on('outbox_events').columns(['customer_id', 'created_at']).execute();
    },
  };
}
