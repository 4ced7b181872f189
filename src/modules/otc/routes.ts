import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { answered, createdAnswer, idempotencyHeaders, reservationOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import { Pagination } from '../transactions/index.js';
import type { SandboxOtcOrders } from '../../providers/sandbox/otc-orders.js';
import type { OtcService } from './service.js';
import { ConfirmBody, EligibleAccount, EligibleWallet, EligibleWalletsQuery, Order, OrderParams, OrdersQuery, Quote, QuoteBody, SettleOrderBody, type OrderRecord } from './schemas.js';

export function otcRoutes(app: FastifyInstance, otc: OtcService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['OTC exchange'];

  routes.get(
    '/otc-exchanges/accounts',
    {
      config: { scope: 'otc-exchanges:read' },
      schema: { tags, operationId: 'listOtcAccounts', summary: 'List the EUR accounts an exchange can pay from', response: { 200: DataOf(Type.Array(EligibleAccount)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await otc.eligibleAccounts(callerOf(request)) }),
  );

  routes.get(
    '/otc-exchanges/wallets',
    {
      config: { scope: 'otc-exchanges:read' },
      schema: {
        tags,
        operationId: 'listOtcWallets',
        summary: 'List the wallets that can receive an asset',
        querystring: EligibleWalletsQuery,
        response: { 200: DataOf(Type.Array(EligibleWallet)), ...errorResponses(...authenticatedReadErrors) },
      },
    },
    async (request) => ({ data: await otc.eligibleWallets(callerOf(request), request.query.asset ?? 'USDC') }),
  );

  routes.post(
    '/otc-exchanges/quote',
    {
      config: { scope: 'otc-exchanges:write' },
      schema: {
        tags,
        operationId: 'createOtcQuote',
        summary: 'Request an indicative quote',
        body: QuoteBody,
        // 404: an account or wallet that is not yours; 422: CURRENCY_MISMATCH (not EUR) or ADDRESS_REQUIRED.
        response: { 200: DataOf(Quote), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await otc.quote(callerOf(request), request.body) }),
  );

  routes.post(
    '/otc-exchanges',
    {
      config: { scope: 'otc-exchanges:write', idempotency: { kind: 'operation', readScope: 'otc-exchanges:read' } },
      schema: {
        tags,
        operationId: 'createOtcOrder',
        summary: 'Confirm a quote into an order',
        description:
          'Requires an Idempotency-Key (docs/idempotency.md). Reserves the EUR at once; the order executes at the quote’s rate and amounts. ' +
          '422: QUOTE_EXPIRED, QUOTE_ALREADY_CONFIRMED, INSUFFICIENT_FUNDS, MIN_DESTINATION_AMOUNT_NOT_MET.',
        headers: idempotencyHeaders(true),
        body: ConfirmBody,
        response: { 201: DataOf(Order), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422) },
      },
    },
    async (request) => answered(request, createdAnswer(await otc.confirm(callerOf(request), request.body, reservationOf(request)))),
  );

  routes.get(
    '/otc-exchanges/orders',
    {
      config: { scope: 'otc-exchanges:read' },
      schema: {
        tags,
        operationId: 'listOtcOrders',
        summary: 'List orders, newest first (paginated like GET /transactions)',
        querystring: OrdersQuery,
        response: {
          200: Type.Object({ data: Type.Array(Order), meta: Type.Object({ pagination: Pagination }) }, { additionalProperties: false }),
          ...errorResponses(...authenticatedReadErrors),
        },
      },
    },
    async (request) => otc.orders(callerOf(request), request.query.page ?? 1, request.query.limit ?? 50),
  );

  routes.get(
    '/otc-exchanges/orders/:orderId',
    {
      config: { scope: 'otc-exchanges:read' },
      schema: { tags, operationId: 'getOtcOrder', summary: 'Get an order', params: OrderParams, response: { 200: DataOf(Order), ...errorResponses(...authenticatedReadErrors, 404) } },
    },
    async (request) => ({ data: await otc.order(callerOf(request), request.params.orderId) }),
  );
}

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): moving an order on. */
export function sandboxOtcRoutes(app: FastifyInstance, sandbox: SandboxOtcOrders): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/sandbox/otc-orders/:orderId/settle',
    {
      config: { scope: 'otc-exchanges:write' },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxSettleOtcOrder',
        summary: 'Settle an OTC order (sandbox only)',
        description: '`completed` debits the EUR if not yet done and credits the crypto; `failed` returns the EUR, until it is debited.',
        params: OrderParams,
        body: SettleOrderBody,
        response: { 200: DataOf(Order), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: (await sandbox.settle(callerOf(request).customerId, request.params.orderId, request.body.outcome)) as OrderRecord }),
  );
}
