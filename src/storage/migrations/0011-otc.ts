import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * OTC exchange of EUR into crypto (docs/otc.md): quotes, and the orders confirmed from them. A quote is confirmed
 * at most once (`order_id` set by the confirmation's guard, and `otc_orders.quote_id` unique). Amounts are base units:
 * EUR cents, and units of the destination asset at its scale; rates are 10^-8 units of the asset per EUR.
 */
export function otcMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('otc_quotes')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('source_account_id', 'text', (col) => col.notNull())
        .addColumn('wallet_id', 'text', (col) => col.notNull().references('wallets.id'))
        .addColumn('destination_currency', 'text', (col) => col.notNull().check(sql`destination_currency in ('USDC', 'USDT', 'EURC', 'BTC', 'SOL', 'ETH')`))
        .addColumn('source_amount_minor', 'bigint', (col) => col.notNull().check(sql`source_amount_minor > 0`))
        .addColumn('mid_rate', 'bigint', (col) => col.notNull().check(sql`mid_rate > 0`))
        .addColumn('rate', 'bigint', (col) => col.notNull().check(sql`rate > 0`))
        .addColumn('destination_amount_minor', 'bigint', (col) => col.notNull().check(sql`destination_amount_minor >= 0`))
        .addColumn('spread_minor', 'bigint', (col) => col.notNull().check(sql`spread_minor >= 0`))
        .addColumn('source_amount_usdc_minor', 'bigint', (col) => col.notNull())
        .addColumn('ttl_seconds', 'integer', (col) => col.notNull())
        .addColumn('expires_at', 'text', (col) => col.notNull())
        .addColumn('order_id', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();

      await db.schema
        .createTable('otc_orders')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('quote_id', 'text', (col) => col.notNull().unique().references('otc_quotes.id'))
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('debit_pending', 'debited', 'settled', 'failed')`))
        .addColumn('source_account_id', 'text', (col) => col.notNull())
        .addColumn('wallet_id', 'text', (col) => col.notNull().references('wallets.id'))
        .addColumn('destination_currency', 'text', (col) => col.notNull())
        .addColumn('source_amount_minor', 'bigint', (col) => col.notNull())
        .addColumn('rate', 'bigint', (col) => col.notNull())
        .addColumn('destination_amount_minor', 'bigint', (col) => col.notNull())
        .addColumn('spread_minor', 'bigint', (col) => col.notNull())
        .addColumn('source_amount_usdc_minor', 'bigint', (col) => col.notNull())
        .addColumn('transaction_id', 'text', (col) => col.notNull())
        .addColumn('travel_rule_payload', 'text')
        .addColumn('settle_at', 'text')
        .addColumn('failure_reason', 'text')
        .addColumn('debited_at', 'text')
        .addColumn('settled_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('otc_orders_customer_idx').on('otc_orders').columns(['customer_id', 'created_at']).execute();
      await db.schema.createIndex('otc_orders_settle_idx').on('otc_orders').columns(['status', 'settle_at']).execute();
    },
  };
}
