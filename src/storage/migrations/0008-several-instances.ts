import type { Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Declared here: a migration imports nothing of the application (src/storage/migrate.ts). */
type Dialect = 'sqlite' | 'postgres';

/**
 * What several instances sharing one database need (docs/operations.md "Several instances"):
 *
 * - outbox events are claimed for delivery with a lease (`delivery_lease_until`) instead of read behind a cursor:
 *   PostgreSQL assigns the bigserial `sequence` at insert, not at commit, so a cursor could pass an event whose
 *   transaction commits late;
 * - on PostgreSQL, stored document files live in the database (`document_files`), where every instance reads them;
 *   the embedded SQLite deployment keeps them on its local disk.
 */
export function severalInstancesMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema.alterTable('outbox_events').addColumn('delivery_lease_until', 'text').execute();
      await db.schema.createIndex('outbox_events_undelivered_idx').on('outbox_events').columns(['published_at', 'delivery_lease_until']).execute();
      if (dialect === 'postgres') {
        await db.schema
          .createTable('document_files')
          .addColumn('storage_path', 'text', (col) => col.primaryKey())
          .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
          .addColumn('content', 'bytea', (col) => col.notNull())
          .addColumn('created_at', 'text', (col) => col.notNull())
          .execute();
      }
    },
  };
}
