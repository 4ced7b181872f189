import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Declared here: a migration imports nothing of the application (src/storage/migrate.ts). */
type Dialect = 'sqlite' | 'postgres';

/**
 * The default fee schedule (docs/fees.md "Default schedule"), one row per (transaction type, payment scheme,
 * currency). Frozen with this migration: ids never change, and a later change of the defaults is a new migration.
 * Amounts are minor units; percentages are millionths of the amount (0.1 % = 1000).
 */
const defaultSchedule = [
  { id: 'd01ef137-c089-4eba-8638-3959ca06af98', scheme: 'SEPA', currency: 'EUR', flat: 20n, millionths: 0n, min: null, max: null },
  { id: '1a791bbe-7bfd-4cd5-94de-8345c979b8f1', scheme: 'SEPA_INSTANT', currency: 'EUR', flat: 50n, millionths: 0n, min: null, max: null },
  { id: 'd914ac31-0d5a-4953-bf9f-7c2fa4840560', scheme: 'FASTER_PAYMENTS', currency: 'GBP', flat: 20n, millionths: 0n, min: null, max: null },
  { id: '41534083-f0fe-4d89-bfde-6165dc581cc6', scheme: 'ACH', currency: 'USD', flat: 25n, millionths: 0n, min: null, max: null },
  { id: 'ffc0e33e-ca6d-43ef-bc3a-8c2f93f2f8f0', scheme: 'SWIFT', currency: 'EUR', flat: 0n, millionths: 1000n, min: 500n, max: 5000n },
  { id: '0538b276-3d73-453d-af44-2fd38b374475', scheme: 'SWIFT', currency: 'GBP', flat: 0n, millionths: 1000n, min: 500n, max: 5000n },
  { id: '4b4554f5-ad27-43a4-829a-a7b271a7ccc2', scheme: 'SWIFT', currency: 'USD', flat: 0n, millionths: 1000n, min: 500n, max: 5000n },
  { id: '54e987fd-c358-4ae9-8d0d-8e9e021cf62a', scheme: 'INTERNAL', currency: 'EUR', flat: 0n, millionths: 0n, min: null, max: null },
  { id: '223ef066-c94a-40f9-850c-1d29f9e4479d', scheme: 'INTERNAL', currency: 'GBP', flat: 0n, millionths: 0n, min: null, max: null },
  { id: '1f0b7c55-3f1e-4b8a-9d2c-6a4e8f1b2c3d', scheme: 'INTERNAL', currency: 'USD', flat: 0n, millionths: 0n, min: null, max: null },
] as const;

/** Fee schedules (docs/fees.md): the default schedule and per-customer schedules set by the operator CLI. */
export function feesMigration(_dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await db.schema
        .createTable('fee_schedules')
        .addColumn('id', 'text', (col) => col.primaryKey())
        // A UNIQUE constraint treats NULLs as distinct on both dialects (PostgreSQL before 15 has no NULLS NOT
        // DISTINCT), so uniqueness is on `scope`: 'default' for the default schedule, else the customer id.
        .addColumn('scope', 'text', (col) => col.notNull())
        .addColumn('customer_id', 'text', (col) => col.references('customers.id'))
        .addColumn('name', 'text', (col) => col.notNull())
        .addColumn('transaction_type', 'text', (col) => col.notNull())
        .addColumn('payment_scheme', 'text', (col) => col.notNull())
        .addColumn('currency', 'text', (col) => col.notNull().check(sql`currency in ('USD', 'EUR', 'GBP')`))
        .addColumn('flat_fee_minor', 'bigint', (col) => col.notNull().check(sql`flat_fee_minor >= 0`))
        // Millionths of the amount: 0.25 % = 2500, 100 % = 1,000,000. Exact, and bigint on both dialects.
        .addColumn('percentage_millionths', 'bigint', (col) => col.notNull().check(sql`percentage_millionths between 0 and 1000000`))
        .addColumn('min_fee_minor', 'bigint', (col) => col.check(sql`min_fee_minor >= 0`))
        .addColumn('max_fee_minor', 'bigint', (col) => col.check(sql`max_fee_minor >= 0`))
        .addColumn('umbrella_link_id', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addCheckConstraint('fee_schedules_scope_check', sql`(customer_id is null and scope = 'default') or (customer_id is not null and scope = customer_id)`)
        .addCheckConstraint('fee_schedules_min_max_check', sql`min_fee_minor is null or max_fee_minor is null or min_fee_minor <= max_fee_minor`)
        .addUniqueConstraint('fee_schedules_scope_unique', ['scope', 'transaction_type', 'payment_scheme', 'currency'])
        .execute();

      const now = new Date().toISOString();
      await db
        .insertInto('fee_schedules')
        .values(
          defaultSchedule.map((row) => ({
            id: row.id,
            scope: 'default',
            customer_id: null,
            name: `Default ${row.scheme} ${row.currency}`,
            transaction_type: 'payment',
            payment_scheme: row.scheme,
            currency: row.currency,
            flat_fee_minor: row.flat,
            percentage_millionths: row.millionths,
            min_fee_minor: row.min,
            max_fee_minor: row.max,
            umbrella_link_id: null,
            created_at: now,
            updated_at: now,
          })),
        )
        .execute();
    },
  };
}
