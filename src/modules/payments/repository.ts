import type { Kysely, Transaction } from 'kysely';
import type { Database, PaymentsTable } from '../../storage/tables.js';

export type PaymentRow = PaymentsTable;
type Db = Kysely<Database> | Transaction<Database>;

export async function findPayment(db: Db, customerId: string, id: string): Promise<PaymentRow | undefined> {
  return db.selectFrom('payments').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

export async function listPayments(db: Db, customerId: string, offset: number, limit: number): Promise<{ rows: PaymentRow[]; total: bigint }> {
  const counted = await db
    .selectFrom('payments')
    .select((eb) => eb.fn.countAll<bigint>().as('total'))
    .where('customer_id', '=', customerId)
    .executeTakeFirstOrThrow();
  const rows = await db
    .selectFrom('payments')
    .selectAll()
    .where('customer_id', '=', customerId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
  return { rows, total: BigInt(counted.total) };
}

/** Moves a pending payment to its outcome; false when it was no longer pending (settled meanwhile). */
export async function settlePaymentRow(
  trx: Transaction<Database>,
  id: string,
  changes: Pick<PaymentRow, 'status' | 'updated_at' | 'completed_at' | 'failure_reason'>,
): Promise<boolean> {
  const result = await trx
    .updateTable('payments')
    .set({ ...changes, settle_at: null })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function duePayments(db: Db, now: string, limit: number): Promise<PaymentRow[]> {
  return db
    .selectFrom('payments')
    .selectAll()
    .where('status', '=', 'pending')
    .where('settle_at', 'is not', null)
    .where('settle_at', '<=', now)
    .orderBy('settle_at', 'asc')
    .limit(limit)
    .execute();
}
