import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/auth.js';
import { answerAsPlainJson } from '../../http/plain-json.js';
import { DataOf, authenticatedReadErrors, errorResponses } from '../../http/schemas.js';
import type { TransactionService } from './service.js';
import { TransactionPage, TransactionParams, TransactionRecord, TransactionsQuery } from './schemas.js';

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
          200: TransactionPage,
          ...errorResponses(...authenticatedReadErrors),
        },
      },
    },
    async (request, reply) => {
      const page = await transactions.list(callerOf(request), request.query);
      // The hot read of the API: the page is built in the schema's shape, so JSON.stringify writes its bytes with a
      // fraction of the garbage (http/plain-json.ts).
      answerAsPlainJson(reply);
      return page;
    },
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
