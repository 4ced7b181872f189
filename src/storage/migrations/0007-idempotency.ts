import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Idempotency keys (docs/spec.md §4 rule 8; docs/idempotency.md). One row per (customer, key), inserted before the operation
 * runs — the insert is the reservation, so two requests with one key can never both run it.
 */
export function idempotencyMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('idempotency_keys')
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('key', 'text', (col) => col.notNull())
        // The operation that first used the key (method and route pattern); a reuse elsewhere replays its answer.
        .addColumn('operation', 'text', (col) => col.notNull())
        // in_progress: reserved, the operation running (or its process gone); completed: the answer is stored (with
        // the money it moved, in the same transaction) and replayed.
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('in_progress', 'completed')`))
        // Which attempt holds the reservation: a money plan commits only for the attempt that still holds it.
        .addColumn('attempt_id', 'text', (col) => col.notNull())
        .addColumn('lease_until', 'text', (col) => col.notNull())
        .addColumn('response_status', 'integer')
        .addColumn('response_body', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .addPrimaryKeyConstraint('idempotency_keys_pk', ['customer_id', 'key'])
        .execute();
      await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at').execute();
    },
  };
}
