import { pageLimitDefault, pageLimitMax } from '../../config/limits.js';
import { notFound } from '../../errors.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { transactionCount } from '../customers/index.js';
import { presentTransaction } from './presenter.js';
import { filteredTransactions, filteredTransactionsBelow, findTransaction, transactionsInSequenceRange, type HistoryValues, type TransactionFilters } from './history.js';
import type { TransactionRecordType, TransactionsQueryType } from './schemas.js';

export interface TransactionPage {
  data: TransactionRecordType[];
  meta: { pagination: { page: number; limit: number; total: number } };
}

/** What the dashboard's search adds to the API's filters: an amount, in base units of the record's currency. */
export interface TransactionSearch {
  amountMinor?: bigint;
}

function filtersOf(query: TransactionsQueryType, search: TransactionSearch): TransactionFilters {
  return {
    ...(query.account_id !== undefined ? { accountId: query.account_id.toLowerCase() } : {}),
    ...(query.status !== undefined ? { status: query.status } : {}),
    ...(query.direction !== undefined ? { direction: query.direction } : {}),
    ...(query.reference !== undefined ? { reference: query.reference } : {}),
    ...(query.created_from !== undefined ? { createdFrom: new Date(query.created_from).toISOString() } : {}),
    ...(query.created_to !== undefined ? { createdTo: new Date(query.created_to).toISOString() } : {}),
    ...(search.amountMinor !== undefined ? { amountMinor: search.amountMinor } : {}),
  };
}

export class TransactionService {
  constructor(private readonly storage: Storage) {}

  /**
   * docs/spec.md §4.5: newest first; `total` counts every matching item. Without filters the page is a range of the
   * customer's dense history sequence (no scan, whatever the depth); with filters it is counted and offset.
   */
  async list(caller: AuthenticatedKey, query: TransactionsQueryType, search: TransactionSearch = {}): Promise<TransactionPage> {
    const page = query.page ?? 1;
    const limit = Math.min(query.limit ?? pageLimitDefault, pageLimitMax);
    const filters = filtersOf(query, search);
    const present = (rows: HistoryValues[]) => rows.map((row) => presentTransaction(row, caller.frOwnerBusinessId));

    if (Object.keys(filters).length === 0) {
      const total = await transactionCount(this.storage.db, caller.customerId);
      const highest = total - BigInt(page - 1) * BigInt(limit);
      const lowest = highest - BigInt(limit) + 1n;
      const rows = highest < 1n ? [] : await transactionsInSequenceRange(this.storage, caller.customerId, lowest < 1n ? 1n : lowest, highest);
      return { data: present(rows), meta: { pagination: { page, limit, total: Number(total) } } };
    }
    const { rows, total } = await filteredTransactions(this.storage, caller.customerId, filters, (page - 1) * limit, limit);
    return { data: present(rows), meta: { pagination: { page, limit, total: Number(total) } } };
  }

  /**
   * Every record the filters match, newest first, in batches of `batchSize` (the dashboard's CSV export writes each
   * as it comes). Batches go down the customer's sequence from the newest record when the first is read, so a
   * record written meanwhile is not in the export and none is read twice or skipped, however long it takes.
   */
  async *batches(caller: AuthenticatedKey, query: TransactionsQueryType, search: TransactionSearch, batchSize: number): AsyncGenerator<TransactionRecordType[]> {
    const filters = filtersOf(query, search);
    let belowSeq: bigint | null = null;
    for (;;) {
      const rows = await filteredTransactionsBelow(this.storage, caller.customerId, filters, belowSeq, batchSize);
      if (rows.length > 0) yield rows.map((row) => presentTransaction(row.values, caller.frOwnerBusinessId));
      if (rows.length < batchSize) return;
      belowSeq = rows[rows.length - 1]!.seq;
    }
  }

  async get(caller: AuthenticatedKey, id: string): Promise<TransactionRecordType> {
    const row = await findTransaction(this.storage, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('transaction');
    return presentTransaction(row, caller.frOwnerBusinessId);
  }
}
