import type { FastifyInstance } from 'fastify';
import { transactionRoutes } from './routes.js';
import type { TransactionService } from './service.js';

/** The transactions plugin: docs/spec.md §4 GET /transactions, and one transaction by id (additive). */
export async function transactionsPlugin(app: FastifyInstance, { transactions }: { transactions: TransactionService }): Promise<void> {
  transactionRoutes(app, transactions);
}

export { historyValuesOf } from './history.js';
export { presentTransaction } from './presenter.js';
export { Pagination, TransactionRecord, type TransactionRecordType, TransactionsQuery, type TransactionsQueryType, reconciliationFilters } from './schemas.js';
export { TransactionService, type TransactionSearch } from './service.js';
