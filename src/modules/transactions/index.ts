export { historyValuesOf } from './history.js';
export { presentTransaction } from './presenter.js';
export { transactionRoutes } from './routes.js';
export { Pagination, TransactionRecord, type TransactionRecordType, TransactionsQuery, type TransactionsQueryType, reconciliationFilters } from './schemas.js';
export { TransactionService } from './service.js';
