import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Declared here: a migration imports nothing of the application (src/storage/migrate.ts). */
type Dialect = 'sqlite' | 'postgres';

/**
 * The double-entry ledger, customer-visible transactions and payments (docs/ledger.md).
 * Postings are signed bigint minor units: positive credits an account, negative debits it.
 */
export function moneyMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      // Accounts of the platform itself, per currency: `clearing` (the outside world), `fee_income`, `suspense`
      // (money reserved by pending payments). Their balance is the sum of their postings (ledger verify prints
      // it): a running balance row would be one lock that every payment of every customer queues on.
      await db.schema
        .createTable('system_accounts')
        .addColumn('code', 'text', (col) => col.primaryKey())
        .addColumn('currency', 'text', (col) => col.notNull())
        .execute();
      for (const currency of ['EUR', 'GBP', 'USD']) {
        for (const name of ['clearing', 'fee_income', 'suspense']) {
          await db.insertInto('system_accounts').values({ code: `${name}:${currency}`, currency }).execute();
        }
      }

      await db.schema
        .createTable('ledger_journal')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('kind', 'text', (col) => col.notNull())
        .addColumn('reference_id', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();

      let postings = db.schema.createTable('ledger_postings');
      postings =
        dialect === 'postgres'
          ? postings.addColumn('sequence', 'bigserial', (col) => col.primaryKey())
          : postings.addColumn('sequence', 'integer', (col) => col.primaryKey().autoIncrement());
      await postings
        .addColumn('journal_id', 'text', (col) => col.notNull().references('ledger_journal.id'))
        // fiat_account and system postings balance each journal; virtual_account postings mirror the master's
        // sub-ledger and are checked against the virtual account balances instead.
        .addColumn('account_kind', 'text', (col) => col.notNull().check(sql`account_kind in ('fiat_account', 'virtual_account', 'system')`))
        .addColumn('account_id', 'text', (col) => col.notNull())
        .addColumn('currency', 'text', (col) => col.notNull())
        .addColumn('amount_minor', 'bigint', (col) => col.notNull().check(sql`amount_minor <> 0`))
        .execute();
      await db.schema.createIndex('ledger_postings_journal_idx').on('ledger_postings').column('journal_id').execute();
      await db.schema.createIndex('ledger_postings_account_idx').on('ledger_postings').columns(['account_kind', 'account_id']).execute();

      await db.schema
        .createTable('payments')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('fr_payment_id', 'text', (col) => col.notNull().unique())
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('pending', 'completed', 'failed')`))
        .addColumn('transaction_type', 'text', (col) => col.notNull())
        .addColumn('payment_scheme', 'text', (col) => col.notNull())
        .addColumn('amount_minor', 'bigint', (col) => col.notNull().check(sql`amount_minor > 0`))
        .addColumn('fee_minor', 'bigint', (col) => col.notNull().check(sql`fee_minor >= 0`))
        .addColumn('fee_schedule_id', 'text')
        .addColumn('currency', 'text', (col) => col.notNull())
        .addColumn('reference', 'text', (col) => col.notNull())
        .addColumn('from_account_id', 'text', (col) => col.notNull().references('fiat_accounts.id'))
        .addColumn('from_virtual_account_id', 'text', (col) => col.references('virtual_accounts.id'))
        .addColumn('to_account_id', 'text', (col) => col.references('fiat_accounts.id'))
        .addColumn('to_virtual_account_id', 'text', (col) => col.references('virtual_accounts.id'))
        .addColumn('payee_id', 'text', (col) => col.references('payees.id'))
        .addColumn('payee_verification_id', 'text')
        .addColumn('umbrella_link_id', 'text')
        .addColumn('transaction_id', 'text', (col) => col.notNull())
        .addColumn('settle_at', 'text')
        .addColumn('failure_reason', 'text')
        .addColumn('completed_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('payments_customer_idx').on('payments').columns(['customer_id', 'created_at']).execute();
      await db.schema.createIndex('payments_settle_idx').on('payments').columns(['status', 'settle_at']).execute();

      await db.schema
        .createTable('transactions')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        // Dense 1..n per customer, assigned in the writing transaction: page p of the unfiltered history is a
        // range of sequences, so deep pages cost what the first page costs.
        .addColumn('customer_seq', 'bigint', (col) => col.notNull())
        .addColumn('fr_transaction_id', 'text', (col) => col.notNull())
        .addColumn('transaction_type', 'text', (col) => col.notNull())
        .addColumn('amount_minor', 'bigint', (col) => col.notNull())
        .addColumn('currency', 'text', (col) => col.notNull())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('direction', 'text', (col) => col.notNull().check(sql`direction in ('incoming', 'outgoing')`))
        .addColumn('account_id', 'text', (col) => col.notNull().references('fiat_accounts.id'))
        .addColumn('virtual_account_id', 'text')
        .addColumn('from_account_id', 'text')
        .addColumn('from_account_type', 'text')
        .addColumn('to_account_id', 'text')
        .addColumn('to_account_type', 'text')
        .addColumn('description', 'text')
        .addColumn('reference', 'text')
        .addColumn('counterparty_name', 'text')
        .addColumn('counterparty_account', 'text')
        .addColumn('fee_amount_minor', 'bigint', (col) => col.notNull().defaultTo(0))
        .addColumn('fee_currency', 'text', (col) => col.notNull())
        .addColumn('payee_id', 'text')
        .addColumn('payment_id', 'text')
        .addColumn('balance_before_minor', 'bigint', (col) => col.notNull())
        .addColumn('balance_after_minor', 'bigint', (col) => col.notNull())
        .addColumn('completed_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addUniqueConstraint('transactions_customer_seq_unique', ['customer_id', 'customer_seq'])
        .execute();
      await db.schema.createIndex('transactions_account_idx').on('transactions').columns(['customer_id', 'account_id', 'customer_seq']).execute();
      await db.schema.createIndex('transactions_payment_idx').on('transactions').column('payment_id').execute();
    },
  };
}
