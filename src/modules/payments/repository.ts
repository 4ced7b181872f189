import type { Kysely, Transaction } from 'kysely';
import type { Database, PaymentsTable } from '../../storage/tables.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';

export type PaymentRow = PaymentsTable;
type Db = Kysely<Database> | Transaction<Database>;

export async function findPayment(db: Db, customerId: string, id: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The payment the provider knows by `frPaymentId` (its reference in provider events), whoever's it is. */
export async function findPaymentByReference(db: Db, frPaymentId: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('fr_payment_id', '=', frPaymentId).executeTakeFirst();
}

export interface PaymentFilters {
  reference?: string;
  createdFrom?: string;
  createdTo?: string;
}

export async function listPayments(db: Db, customerId: string, filters: PaymentFilters, offset: number, limit: number): Promise<{ rows: PaymentRow[]; total: bigint }> {
  let query = db.selectFrom('payments').where('customer_id', '=', customerId);
  // `=` compares text exactly on both databases (SQLite's BINARY collation, PostgreSQL's deterministic one).
  if (filters.reference !== undefined) query = query.where('reference', '=', filters.reference);
  if (filters.createdFrom !== undefined) query = query.where('created_at', '>=', filters.createdFrom);
  if (filters.createdTo !== undefined) query = query.where('created_at', '<', filters.createdTo);
  return newestFirstPage<PaymentRow>(query, offset, limit);
}

