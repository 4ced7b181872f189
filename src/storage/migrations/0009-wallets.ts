import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * Wallets and their receive addresses (docs/wallets.md). The CHECKs list the crypto assets and networks of the
 * registry as they were when this migration was written; a test compares them with `src/ledger/assets.ts` and
 * `src/ledger/networks.ts`, so the code cannot offer what the schema refuses.
 */
export function walletsMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('wallets')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('fr_wallet_id', 'text', (col) => col.notNull().unique())
        .addColumn('provider', 'text', (col) => col.notNull())
        .addColumn('display_name', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('active')`))
        .addColumn('end_user_id', 'text', (col) => col.references('end_users.id'))
        .addColumn('umbrella_link_id', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('wallets_customer_idx').on('wallets').columns(['customer_id', 'created_at']).execute();

      await db.schema
        .createTable('wallet_addresses')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('wallet_id', 'text', (col) => col.notNull().references('wallets.id'))
        .addColumn('asset', 'text', (col) => col.notNull().check(sql`asset in ('USDC', 'USDT', 'EURC', 'BTC', 'SOL', 'ETH')`))
        .addColumn('network', 'text', (col) => col.notNull().check(sql`network in ('ETH', 'ARB', 'BASE', 'MATIC', 'SOL', 'TRX', 'BTC')`))
        .addColumn('address', 'text', (col) => col.notNull())
        .addColumn('is_default', 'integer', (col) => col.notNull().check(sql`is_default in (0, 1)`))
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('wallet_addresses_wallet_idx').on('wallet_addresses').columns(['wallet_id', 'created_at']).execute();
      // An address receives an asset for one wallet (incoming deposits are matched by it); on EVM chains and Tron one
      // address may receive several tokens.
      await db.schema.createIndex('wallet_addresses_address_idx').on('wallet_addresses').columns(['network', 'address', 'asset']).unique().execute();
      // One default address per asset and wallet.
      await db.schema
        .createIndex('wallet_addresses_default_idx')
        .on('wallet_addresses')
        .columns(['wallet_id', 'asset'])
        .unique()
        .where(sql.ref('is_default'), '=', 1)
        .execute();
    },
  };
}
