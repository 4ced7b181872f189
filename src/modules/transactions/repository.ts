import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, TransactionsTable } from '../../storage/tables.js';

export type TransactionRow = TransactionsTable;
type Db = Kysely<Database> | Transaction<Database>;

/**
 * Reserves the next `count` history sequence numbers of a customer and returns the first. Call it FIRST in a
 * money-moving transaction: it takes the customer's row lock, so every such transaction of one customer locks
 * in the same order (customer, then accounts) and PostgreSQL cannot deadlock them.
 */
export async function allocateSequences(trx: Transaction<Database>, customerId: string, count: number): Promise<bigint> {
  const row = await trx
    .updateTable('customers')
    .set({ transaction_count: sql`transaction_count + ${count}` })
    .where('id', '=', customerId)
    .returning('transaction_count')
    .executeTakeFirstOrThrow();
  return BigInt(row.transaction_count) - BigInt(count) + 1n;
}

export async function insertTransaction(trx: Transaction<Database>, row: TransactionRow): Promise<void> {
  await trx.insertInto('transactions').values(row).execute();
}

export async function updateTransactionStatus(
  trx: Transaction<Database>,
  id: string,
  changes: Pick<TransactionRow, 'status' | 'updated_at' | 'completed_at'>,
): Promise<void> {
  await trx.updateTable('transactions').set(changes).where('id', '=', id).execute();
}

export async function findTransaction(db: Db, customerId: string, id: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('transactions').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

export async function transactionCount(db: Db, customerId: string): Promise<bigint> {
  const row = await db.selectFrom('customers').select('transaction_count').where('id', '=', customerId).executeTakeFirst();
  return row ? BigInt(row.transaction_count) : 0n;
}

/** Newest first, by sequence range: the cost of page 20,000 is the cost of page 1. */
export async function transactionsInSequenceRange(db: Db, customerId: string, lowest: bigint, highest: bigint): Promise<TransactionRow[]> {
  return db
    .selectFrom('transactions')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('customer_seq', '>=', lowest)
    .where('customer_seq', '<=', highest)
    .orderBy('customer_seq', 'desc')
    .execute();
}

export interface TransactionFilters {
  accountId?: string;
  status?: string;
  direction?: 'incoming' | 'outgoing';
  createdFrom?: string;
  createdTo?: string;
}

function filtered(db: Db, customerId: string, filters: TransactionFilters) {
  let query = db.selectFrom('transactions').where('customer_id', '=', customerId);
  if (filters.accountId !== undefined) {
    const accountId = filters.accountId;
    query = query.where((eb) => eb.or([eb('account_id', '=', accountId), eb('virtual_account_id', '=', accountId)]));
  }
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.direction !== undefined) query = query.where('direction', '=', filters.direction);
  if (filters.createdFrom !== undefined) query = query.where('created_at', '>=', filters.createdFrom);
  if (filters.createdTo !== undefined) query = query.where('created_at', '<', filters.createdTo);
  return query;
}

/** Filtered history: an exact count and an offset page (docs/transactions.md says what this costs). */
export async function filteredTransactions(
  db: Db,
  customerId: string,
  filters: TransactionFilters,
  offset: number,
  limit: number,
): Promise<{ rows: TransactionRow[]; total: bigint }> {
  const counted = await filtered(db, customerId, filters).select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow();
  const rows = await filtered(db, customerId, filters).selectAll().orderBy('customer_seq', 'desc').limit(limit).offset(offset).execute();
  return { rows, total: BigInt(counted.total) };
}
