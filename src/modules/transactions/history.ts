import type { Kysely, Transaction } from 'kysely';
import type { Storage } from '../../storage/database.js';
import { queryTemplate } from '../../storage/query-template.js';
import type { Database, TransactionsTable } from '../../storage/tables.js';

/**
 * Reads of the transaction history. A page is read as arrays of column values, not rows of named properties:
 * better-sqlite3 builds 50 rows of 25 named properties in about twice the time of the arrays, and the page is the
 * hot read of the API (docs/benchmarks.md). The presenter reads the values by column name through `valueOf`.
 */

/** The columns a transaction record is presented from, in select order. */
const historyColumns = [
  'id',
  'fr_transaction_id',
  'transaction_type',
  'amount_minor',
  'currency',
  'status',
  'from_account_id',
  'to_account_id',
  'from_account_type',
  'to_account_type',
  'description',
  'reference',
  'counterparty_name',
  'counterparty_account',
  'fee_amount_minor',
  'fee_currency',
  'virtual_account_id',
  'payee_id',
  'balance_before_minor',
  'balance_after_minor',
  'direction',
  'completed_at',
  'created_at',
  'account_id',
  'payment_id',
] as const satisfies ReadonlyArray<keyof TransactionsTable>;

type HistoryColumn = (typeof historyColumns)[number];

/** One record's values, in the order of `historyColumns`. */
export type HistoryValues = readonly unknown[];

const columnIndex = Object.fromEntries(historyColumns.map((column, index) => [column, index])) as Record<HistoryColumn, number>;

export function valueOf<C extends HistoryColumn>(values: HistoryValues, column: C): TransactionsTable[C] {
  return values[columnIndex[column]] as TransactionsTable[C];
}

/** The values of a record the caller already holds as a row (a deposit just written). */
export function historyValuesOf(row: TransactionsTable): HistoryValues {
  return historyColumns.map((column) => row[column]);
}

type Db = Kysely<Database> | Transaction<Database>;

// Every page reads a range (and the count, customers/repository.ts): compiled once (storage/query-template.ts).

const transactionById = queryTemplate<{ customerId: string; id: string }>()(['customerId', 'id'], (db, { customerId, id }) =>
  db.selectFrom('transactions').select(historyColumns).where('customer_id', '=', customerId).where('id', '=', id),
);

const transactionsBySequence = queryTemplate<{ customerId: string; lowest: bigint; highest: bigint }>()(
  ['customerId', 'lowest', 'highest'],
  (db, { customerId, lowest, highest }) =>
    db
      .selectFrom('transactions')
      .select(historyColumns)
      .where('customer_id', '=', customerId)
      .where('customer_seq', '>=', lowest)
      .where('customer_seq', '<=', highest)
      .orderBy('customer_seq', 'desc'),
);

export async function findTransaction(storage: Storage, customerId: string, id: string): Promise<HistoryValues | undefined> {
  const [values] = await storage.selectArrays(transactionById.compile(storage.db, { customerId, id }));
  return values;
}

/** Newest first, by sequence range: the cost of page 20,000 is the cost of page 1. */
export async function transactionsInSequenceRange(storage: Storage, customerId: string, lowest: bigint, highest: bigint): Promise<HistoryValues[]> {
  return storage.selectArrays(transactionsBySequence.compile(storage.db, { customerId, lowest, highest }));
}

export interface TransactionFilters {
  accountId?: string;
  status?: string;
  direction?: 'incoming' | 'outgoing';
  reference?: string;
  createdFrom?: string;
  createdTo?: string;
  /** The amount in base units of the record's currency (the dashboard's search; the API has no such filter). */
  amountMinor?: bigint;
}

function filtered(db: Db, customerId: string, filters: TransactionFilters) {
  let query = db.selectFrom('transactions').where('customer_id', '=', customerId);
  if (filters.accountId !== undefined) {
    const accountId = filters.accountId;
    query = query.where((eb) => eb.or([eb('account_id', '=', accountId), eb('virtual_account_id', '=', accountId)]));
  }
  if (filters.status !== undefined) query = query.where('status', '=', filters.status);
  if (filters.direction !== undefined) query = query.where('direction', '=', filters.direction);
  // `=` compares text exactly on both databases (SQLite's BINARY collation, PostgreSQL's deterministic one).
  if (filters.reference !== undefined) query = query.where('reference', '=', filters.reference);
  if (filters.createdFrom !== undefined) query = query.where('created_at', '>=', filters.createdFrom);
  if (filters.createdTo !== undefined) query = query.where('created_at', '<', filters.createdTo);
  if (filters.amountMinor !== undefined) query = query.where('amount_minor', '=', filters.amountMinor);
  return query;
}

/**
 * A batch of the filtered history, newest first, below a position of the customer's sequence (all of it when
 * `belowSeq` is null): keyset paging, so the thousandth batch costs what the first does. Each record's values are
 * followed by its sequence number, the position to read the next batch below.
 */
export async function filteredTransactionsBelow(
  storage: Storage,
  customerId: string,
  filters: TransactionFilters,
  belowSeq: bigint | null,
  limit: number,
): Promise<Array<{ values: HistoryValues; seq: bigint }>> {
  let query = filtered(storage.db, customerId, filters).select([...historyColumns, 'customer_seq']);
  if (belowSeq !== null) query = query.where('customer_seq', '<', belowSeq);
  const rows = await storage.selectArrays(query.orderBy('customer_seq', 'desc').limit(limit).compile());
  // PostgreSQL answers a bigint column as text, SQLite as a number or bigint: BigInt takes each.
  return rows.map((row) => ({ values: row.slice(0, historyColumns.length), seq: BigInt(row[historyColumns.length] as string | number | bigint) }));
}

/** Filtered history: an exact count and an offset page (docs/transactions.md says what this costs). */
export async function filteredTransactions(
  storage: Storage,
  customerId: string,
  filters: TransactionFilters,
  offset: number,
  limit: number,
): Promise<{ rows: HistoryValues[]; total: bigint }> {
  const counted = await filtered(storage.db, customerId, filters).select((eb) => eb.fn.countAll<bigint>().as('total')).executeTakeFirstOrThrow();
  const page = filtered(storage.db, customerId, filters).select(historyColumns).orderBy('customer_seq', 'desc').limit(limit).offset(offset);
  return { rows: await storage.selectArrays(page.compile()), total: BigInt(counted.total) };
}
