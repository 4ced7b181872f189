import type { Migration } from 'kysely/migration';

/**
 * Indexes for reconciliation (docs/payments.md "Reconciling a payment without an answer"): a client looks up the
 * reference it gave a payment, from some moment on, in GET /payments or GET /transactions. Each lookup is one index
 * range of the customer's rows with that reference, in the list's own order, however long the customer's history:
 * - payments by (customer, reference, created_at): the range of a reference from `created_from` on, newest first;
 * - transactions by (customer, reference, customer_seq): the history's order, so a page needs no sort;
 * - transactions by (customer, created_at): `created_from`/`created_to` alone read their window, not the whole
 *   history (payments have had (customer_id, created_at) since 0003).
 */
export function reconciliationIndexesMigration(): Migration {
  return {
    async up(db) {
      await db.schema.createIndex('payments_reference_idx').on('payments').columns(['customer_id', 'reference', 'created_at']).execute();
      await db.schema.createIndex('transactions_reference_idx').on('transactions').columns(['customer_id', 'reference', 'customer_seq']).execute();
      await db.schema.createIndex('transactions_created_idx').on('transactions').columns(['customer_id', 'created_at']).execute();
    },
  };
}
