import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What an attempt sent and got back, so a developer can see why a receiver refused a delivery (docs/webhooks.md
 * "Attempts"), and a subscription's health read without walking its deliveries:
 *
 * - `request_headers`: the headers sent, as a JSON object (no secret is among them: the signature is a MAC);
 * - `response_headers`: the receiver's headers, as a JSON object, bounded; null when no answer came;
 * - `response_body`: at most 4 KiB of the answer, as text; `response_body_truncated` 1 when there was more;
 * - `subscription_id`: the delivery's subscription, copied onto its attempts, with an index on (subscription,
 *   succeeded, created_at) that serves the last success and the attempts of the last 24 hours.
 *
 * Attempts recorded before keep null details; their subscription is filled in from their delivery.
 */
export function webhookAttemptDetailsMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('webhook_attempts').addColumn('subscription_id', 'text').execute();
      await db.schema.alterTable('webhook_attempts').addColumn('request_headers', 'text').execute();
      await db.schema.alterTable('webhook_attempts').addColumn('response_headers', 'text').execute();
      await db.schema.alterTable('webhook_attempts').addColumn('response_body', 'text').execute();
      await db.schema
        .alterTable('webhook_attempts')
        .addColumn('response_body_truncated', 'integer', (col) => col.notNull().defaultTo(0).check(sql`response_body_truncated in (0, 1)`))
        .execute();
      await sql`update webhook_attempts set subscription_id = (
        select d.subscription_id from webhook_deliveries d where d.id = webhook_attempts.delivery_id)`.execute(db);
      await db.schema
        .createIndex('webhook_attempts_subscription_idx')
        .on('webhook_attempts')
        .columns(['subscription_id', 'succeeded', 'created_at'])
        .execute();
    },
  };
}
