import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Provider operations and the per-customer document quota (docs/providers.md, docs/documents.md).
 *
 * - `provider_operations` records every call that creates something at the provider, before the call, so a
 *   failure after it (the insert that records the result, or a crash) can be undone instead of orphaning the
 *   provider's object.
 * - `customers.stored_document_bytes` counts the bytes of the customer's stored files, updated in the transaction
 *   that inserts a document, so the quota holds under concurrent uploads.
 */
export function providerOperationsMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('provider_operations')
        // Also the idempotency key the provider is called with: a repeated call returns the same object.
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('kind', 'text', (col) => col.notNull())
        .addColumn('request', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('calling', 'done', 'undoing', 'undone', 'failed')`))
        .addColumn('provider_object_id', 'text')
        // While `calling` or `undoing`: until when its owner (the request, or the reaper) has it; then the reaper takes it.
        .addColumn('lease_until', 'text')
        .addColumn('undo_attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('provider_operations_due_idx').on('provider_operations').columns(['status', 'lease_until']).execute();

      await db.schema.alterTable('customers').addColumn('stored_document_bytes', 'bigint', (col) => col.notNull().defaultTo(0)).execute();
      await sql`
        update customers set stored_document_bytes = coalesce(
          (select sum(size_bytes) from documents where documents.customer_id = customers.id), 0)
      `.execute(db);
    },
  };
}
