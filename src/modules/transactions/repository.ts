import { sql, type Transaction } from 'kysely';
import { queryTemplate } from '../../storage/query-template.js';
import type { Database, TransactionsTable } from '../../storage/tables.js';

export type TransactionRow = TransactionsTable;

const reserveSequences = queryTemplate<{ customerId: string; count: number }>()(['customerId', 'count'], (db, { customerId, count }) =>
  db
    .updateTable('customers')
    .set({ transaction_count: sql`transaction_count + ${count}` })
    .where('id', '=', customerId)
    .returning('transaction_count'),
);

/**
 * Reserves the next `count` history sequence numbers of a customer and returns the first. Call it FIRST in a
 * money-moving transaction: it takes the customer's row lock, so every such transaction of one customer locks
 * in the same order (customer, then accounts) and PostgreSQL cannot deadlock them.
 */
export async function allocateSequences(trx: Transaction<Database>, customerId: string, count: number): Promise<bigint> {
  const row = await reserveSequences.executeTakeFirstOrThrow(trx, { customerId, count });
  return BigInt(row.transaction_count) - BigInt(count) + 1n;
}

/** Every column, in the order the INSERT lists them (bench/raw-payment-server.mjs runs the same SQL). */
const transactionColumns = [
  'id', 'customer_id', 'customer_seq', 'fr_transaction_id', 'transaction_type', 'amount_minor', 'currency', 'status', 'direction',
  'account_id', 'virtual_account_id', 'from_account_id', 'from_account_type', 'to_account_id', 'to_account_type', 'description',
  'reference', 'counterparty_name', 'counterparty_account', 'fee_amount_minor', 'fee_currency', 'payee_id', 'payment_id',
  'balance_before_minor', 'balance_after_minor', 'completed_at', 'created_at', 'updated_at',
] as const;

const insertTransactionRow = queryTemplate<TransactionRow>()(transactionColumns, (db, row) => db.insertInto('transactions').values(row));

export async function insertTransaction(trx: Transaction<Database>, row: TransactionRow): Promise<void> {
  await insertTransactionRow.execute(trx, row);
}

export async function updateTransactionStatus(
  trx: Transaction<Database>,
  id: string,
  changes: Pick<TransactionRow, 'status' | 'updated_at' | 'completed_at'>,
): Promise<void> {
  await trx.updateTable('transactions').set(changes).where('id', '=', id).execute();
}
