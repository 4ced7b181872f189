import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** End users, their documents, payees and virtual accounts. */
export function onboardingMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('end_users')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('fr_end_user_id', 'text', (col) => col.notNull().unique())
        .addColumn('end_user_type', 'text', (col) => col.notNull().check(sql`end_user_type in ('INDIVIDUAL', 'BUSINESS')`))
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('reference_code', 'text', (col) => col.notNull().unique())
        .addColumn('first_name', 'text')
        .addColumn('middle_name', 'text')
        .addColumn('last_name', 'text')
        .addColumn('company_name', 'text')
        .addColumn('email', 'text', (col) => col.notNull())
        .addColumn('dob', 'text')
        .addColumn('phone', 'text')
        .addColumn('birth_country', 'text')
        .addColumn('nationality', 'text')
        .addColumn('ip_address', 'text')
        .addColumn('annual_salary_range', 'text')
        .addColumn('risk_rating', 'text')
        .addColumn('risk_tier', 'text', (col) => col.notNull())
        .addColumn('verification_method', 'text')
        .addColumn('signup_at', 'text')
        .addColumn('umbrella_link_id', 'text')
        .addColumn('onboarding_url_token', 'text')
        .addColumn('registration_number', 'text')
        .addColumn('registration_date', 'text')
        .addColumn('business_type', 'text')
        .addColumn('incorporation_country', 'text')
        .addColumn('sector', 'text')
        .addColumn('disclosure_accepted_at', 'text')
        .addColumn('disclosure_version', 'text')
        .addColumn('reverse_solicitation_required', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('reverse_solicitation_accepted', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('verification_completed_at', 'text')
        .addColumn('verification_reason', 'text')
        // Sandbox only: a decision the simulated KYC provider takes by itself, and when (docs/end-users.md).
        .addColumn('sandbox_decision', 'text')
        .addColumn('sandbox_decide_at', 'text')
        // Nested request objects kept as JSON text: address, identification document, tags, metadata, wallets,
        // the business object (trading name, addresses, website…) and business persons.
        .addColumn('address', 'text')
        .addColumn('identification_document', 'text')
        .addColumn('tags', 'text', (col) => col.notNull().defaultTo('[]'))
        .addColumn('metadata', 'text', (col) => col.notNull().defaultTo('{}'))
        .addColumn('linked_crypto_wallets', 'text', (col) => col.notNull().defaultTo('[]'))
        .addColumn('business', 'text')
        .addColumn('business_persons', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('end_users_customer_idx').on('end_users').columns(['customer_id', 'created_at']).execute();
      await db.schema.createIndex('end_users_sandbox_decision_idx').on('end_users').columns(['sandbox_decide_at']).execute();

      await db.schema
        .createTable('documents')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('end_user_id', 'text', (col) => col.notNull().references('end_users.id'))
        .addColumn('document_type', 'text', (col) => col.notNull())
        .addColumn('file_name', 'text', (col) => col.notNull())
        .addColumn('mime_type', 'text', (col) => col.notNull())
        .addColumn('size_bytes', 'bigint', (col) => col.notNull())
        .addColumn('sha256', 'text', (col) => col.notNull())
        .addColumn('storage_path', 'text', (col) => col.notNull())
        .addColumn('fr_document_id', 'text', (col) => col.notNull().unique())
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('fr_sync_status', 'text', (col) => col.notNull().check(sql`fr_sync_status in ('pending', 'synced', 'failed')`))
        .addColumn('sync_attempts', 'integer', (col) => col.notNull().defaultTo(0))
        .addColumn('next_sync_at', 'text')
        .addColumn('last_sync_error', 'text')
        .addColumn('synced_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('documents_customer_idx').on('documents').columns(['customer_id', 'end_user_id', 'created_at']).execute();
      await db.schema.createIndex('documents_sync_idx').on('documents').columns(['fr_sync_status', 'next_sync_at']).execute();

      await db.schema
        .createTable('payees')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('end_user_id', 'text', (col) => col.references('end_users.id'))
        .addColumn('fr_payee_id', 'text', (col) => col.notNull().unique())
        .addColumn('payee_name', 'text', (col) => col.notNull())
        .addColumn('currency', 'text', (col) => col.notNull().check(sql`currency in ('USD', 'EUR', 'GBP')`))
        .addColumn('status', 'text', (col) => col.notNull())
        .addColumn('iban', 'text')
        .addColumn('swift', 'text')
        .addColumn('account_number', 'text')
        .addColumn('sort_code', 'text')
        .addColumn('routing_number', 'text')
        .addColumn('account_holder_name', 'text')
        .addColumn('bank_name', 'text')
        .addColumn('address_line1', 'text')
        .addColumn('address_line2', 'text')
        .addColumn('city', 'text')
        .addColumn('state_region', 'text')
        .addColumn('postal_code', 'text')
        .addColumn('country_code', 'text')
        .addColumn('requires_vop', 'integer', (col) => col.notNull())
        .addColumn('umbrella_link_id', 'text')
        // The remaining bank details (bank address, intermediary bank) as sent, for the rails that need them.
        .addColumn('bank_details', 'text', (col) => col.notNull().defaultTo('{}'))
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('payees_customer_idx').on('payees').columns(['customer_id', 'created_at']).execute();

      await db.schema
        .createTable('virtual_accounts')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('master_fiat_account_id', 'text', (col) => col.notNull().references('fiat_accounts.id'))
        .addColumn('end_user_id', 'text', (col) => col.references('end_users.id'))
        .addColumn('fr_virtual_account_id', 'text', (col) => col.notNull().unique())
        .addColumn('account_name', 'text', (col) => col.notNull())
        .addColumn('currency', 'text', (col) => col.notNull().check(sql`currency in ('USD', 'EUR', 'GBP')`))
        .addColumn('status', 'text', (col) => col.notNull())
        // A virtual account's share of its master’s balance (docs/virtual-accounts.md); never negative either.
        .addColumn('balance_minor', 'bigint', (col) => col.notNull().defaultTo(0).check(sql`balance_minor >= 0`))
        .addColumn('iban', 'text', (col) => col.notNull().unique())
        .addColumn('bic', 'text', (col) => col.notNull())
        .addColumn('bank_name', 'text', (col) => col.notNull())
        .addColumn('account_holder_name', 'text', (col) => col.notNull())
        .addColumn('bank_country', 'text', (col) => col.notNull())
        .addColumn('account_number', 'text', (col) => col.notNull())
        .addColumn('sort_code', 'text')
        .addColumn('umbrella_link_id', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('virtual_accounts_customer_idx').on('virtual_accounts').columns(['customer_id', 'created_at']).execute();
      await db.schema.createIndex('virtual_accounts_master_idx').on('virtual_accounts').column('master_fiat_account_id').execute();
    },
  };
}
