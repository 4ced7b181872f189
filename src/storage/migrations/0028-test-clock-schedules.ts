import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What falls due later in a sandbox test clock's time (docs/test-clocks.md):
 *
 * - `webhook_deliveries.clock_id` names the clock a delivery's `next_attempt_at` is read by: null for the server
 *   clock (every delivery so far), a clock's id for a delivery of a customer with that clock attached, which only an
 *   advance of that clock attempts. The partial index holds those deliveries alone, so an advance finds its clock's
 *   due ones without touching anyone else's, and the delivery worker's ranges keep only a little more.
 * - `documents.clock_id`, alike: the clock a document's next sync attempt (`next_sync_at`) is read by; the sync
 *   worker claims only documents without one, an advance its clock's (the partial index holds those documents alone).
 * - `idempotency_keys.clock_id`, alike: the clock a key's `expires_at` is read by; the reaper deletes only keys
 *   without one, an advance its clock's expired ones (the partial index holds those keys alone).
 * - `sandbox_test_clocks.advancing_until`: while an advance's work runs, until when (server time) it holds the
 *   clock, so the clock's advances follow one another; null when none runs.
 */
export function testClockSchedulesMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('webhook_deliveries').addColumn('clock_id', 'text').execute();
      await db.schema.alterTable('sandbox_test_clocks').addColumn('advancing_until', 'text').execute();
      await db.schema.alterTable('documents').addColumn('clock_id', 'text').execute();
      await db.schema
        .createIndex('documents_clock_sync_idx')
        .on('documents')
        .columns(['clock_id', 'next_sync_at'])
        .where(sql.ref('clock_id'), 'is not', null)
        .execute();
      await db.schema.alterTable('idempotency_keys').addColumn('clock_id', 'text').execute();
      await db.schema
        .createIndex('idempotency_keys_clock_expiry_idx')
        .on('idempotency_keys')
        .columns(['clock_id', 'expires_at'])
        .where(sql.ref('clock_id'), 'is not', null)
        .execute();
      await db.schema
        .createIndex('webhook_deliveries_clock_due_idx')
        .on('webhook_deliveries')
        .columns(['clock_id', 'next_attempt_at'])
        .where(sql.ref('clock_id'), 'is not', null)
        .execute();
    },
  };
}
