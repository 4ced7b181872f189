import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

type Dialect = 'sqlite' | 'postgres';

/**
 * The provider events inbox (docs/providers.md "Reporting outcomes"): every outcome a provider reports — a payment
 * settled, a KYC decision, an account frozen — is written here first, by a provider webhook route, a poller or the
 * sandbox, and applied later (or at once) by the resource's lifecycle.
 *
 * - `id` is the order of arrival: events of one reference are applied in it.
 * - (`provider`, `idempotency_key`) is unique: a provider that reports the same outcome twice writes one row.
 * - `state` received → applied | failed; `attempts`, `last_error`, `error_code` say why an event did not apply.
 */
export function providerEventsMigration(dialect: Dialect): Migration {
  return {
    async up(db) {
      let table = db.schema.createTable('provider_events');
      table =
        dialect === 'postgres'
          ? table.addColumn('id', 'bigserial', (col) => col.primaryKey())
          : table.addColumn('id', 'integer', (col) => col.primaryKey().autoIncrement());
      await table
        .addColumn('provider', 'text', (col) => col.notNull())
        .addColumn('event_type', 'text', (col) => col.notNull())
        .addColumn('reference', 'text', (col) => col.notNull())
        .addColumn('idempotency_key', 'text', (col) => col.notNull())
        .addColumn('payload', 'text', (col) => col.notNull())
        .addColumn('state', 'text', (col) => col.notNull().check(sql`state in ('received', 'applied', 'failed')`))
        .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('error_code', 'text')
        .addColumn('last_error', 'text')
        // While received: until when the instance that claimed it owns it (workers/claim.ts).
        .addColumn('lease_until', 'text')
        .addColumn('received_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addUniqueConstraint('provider_events_key_unique', ['provider', 'idempotency_key'])
        .execute();
      await db.schema.createIndex('provider_events_reference_idx').on('provider_events').columns(['provider', 'reference', 'id']).execute();
      await db.schema.createIndex('provider_events_due_idx').on('provider_events').columns(['state', 'lease_until']).execute();
    },
  };
}
