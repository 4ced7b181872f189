import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { DataOf, authenticatedReadErrors, errorResponses } from '../../http/schemas.js';
import type { TransactionService } from './service.js';
import { Pagination, TransactionParams, TransactionRecord, TransactionsQuery } from './schemas.js';

export function transactionRoutes(app: FastifyInstance, transactions: TransactionService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Transactions'];

  routes.get(
    '/transactions',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        operationId: 'listTransactions',
        summary: 'List transactions, newest first (paginated)',
        querystring: TransactionsQuery,
        response: {
          200: Type.Object({ data: Type.Array(TransactionRecord), meta: Type.Object({ pagination: Pagination }) }, { additionalProperties: false }),
          ...errorResponses(...authenticatedReadErrors),
        },
      },
    },
    async (request) => transactions.list(callerOf(request), request.query),
  );

  routes.get(
    '/transactions/:id',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        operationId: 'getTransaction',
        summary: 'Get a transaction',
        params: TransactionParams,
        response: { 200: DataOf(TransactionRecord), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await transactions.get(callerOf(request), request.params.id) }),
  );
}
