import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Declared here: a migration imports nothing of the application (src/storage/migrate.ts). */
type Dialect = 'sqlite' | 'postgres';

/** Customers, API keys, fiat accounts, the event outbox and server secrets. */
export function foundationMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('customers')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('fr_owner_business_id', 'text', (col) => col.notNull().unique())
        // How many transaction records the customer has: their dense sequence makes any history page a range read.
        .addColumn('transaction_count', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('api_keys')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('key_hash', 'text', (col) => col.notNull().unique())
        .addColumn('prefix', 'text', (col) => col.notNull())
        .addColumn('environment', 'text', (col) => col.notNull())
        .addColumn('scopes', 'text', (col) => col.notNull())
        .addColumn('allowed_ips', 'text', (col) => col.notNull())
        .addColumn('expires_at', 'text')
        .addColumn('revoked_at', 'text')
        .addColumn('last_used_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('api_keys_customer_idx').on('api_keys').columns(['customer_id', 'created_at']).execute();

      await db.schema
        .createTable('fiat_accounts')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('fr_account_id', 'text', (col) => col.notNull().unique())
        .addColumn('account_name', 'text', (col) => col.notNull())
        .addColumn('currency', 'text', (col) => col.notNull().check(sql`currency in ('USD', 'EUR', 'GBP')`))
        // The database refuses a negative balance even if application code were wrong (docs/ledger.md).
        .addColumn('balance_minor', 'bigint', (col) => col.notNull().defaultTo(0).check(sql`balance_minor >= 0`))
        // The part of the balance that belongs to the account's virtual accounts; never more than the balance.
        .addColumn('allocated_minor', 'bigint', (col) => col.notNull().defaultTo(0).check(sql`allocated_minor >= 0`))
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('is_master', 'integer', (col) => col.notNull().check(sql`is_master in (0, 1)`))
        .addColumn('linked_business_id', 'text')
        .addColumn('umbrella_link_id', 'text')
        .addColumn('iban', 'text', (col) => col.notNull().unique())
        .addColumn('bic', 'text', (col) => col.notNull())
        .addColumn('account_number', 'text', (col) => col.notNull())
        .addColumn('sort_code', 'text')
        .addColumn('routing_number', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addCheckConstraint('fiat_accounts_allocation_within_balance', sql`allocated_minor <= balance_minor`)
        .execute();
      await db.schema.createIndex('fiat_accounts_customer_idx').on('fiat_accounts').columns(['customer_id', 'created_at']).execute();

      let outbox = db.schema.createTable('outbox_events');
      outbox =
        dialect === 'postgres'
          ? outbox.addColumn('sequence', 'bigserial', (col) => col.primaryKey())
          : outbox.addColumn('sequence', 'integer', (col) => col.primaryKey().autoIncrement());
      await outbox
        .addColumn('id', 'text', (col) => col.notNull().unique())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('event_type', 'text', (col) => col.notNull())
        .addColumn('payload', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('published_at', 'text')
        .execute();
      await db.schema.createIndex('outbox_events_customer_idx').on('outbox_events').columns(['customer_id', 'sequence']).execute();

      await db.schema
        .createTable('server_secrets')
        .addColumn('name', 'text', (col) => col.primaryKey())
        .addColumn('value', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
    },
  };
}
