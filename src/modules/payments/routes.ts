import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DomainError } from '../../errors.js';
import { callerOf } from '../../http/auth.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import { Pagination } from '../transactions/index.js';
import type { PaymentService } from './service.js';
import type { SandboxPayments } from '../../providers/sandbox/payments.js';
import { CreatePaymentBody, Payment, PaymentCreated, PaymentParams, PaymentsQuery, SettleBody, type PaymentRecord } from './schemas.js';

export function paymentRoutes(app: FastifyInstance, payments: PaymentService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Payments'];

  routes.post(
    '/payments',
    {
      config: { scope: 'payments:write' },
      // docs/spec.md §4: POST /payments does not accept Idempotency-Key. Refuse it loudly, so nobody believes a retry is safe.
      preValidation: async (request) => {
        if (request.headers['idempotency-key'] !== undefined) {
          throw new DomainError(
            'IDEMPOTENCY_KEY_NOT_SUPPORTED',
            'POST /payments does not accept Idempotency-Key: a retry would create a second payment. Use a unique reference and, before retrying, look it up with GET /payments?reference= (or GET /transactions?reference=): docs/payments.md.',
            { fields: [{ location: 'headers', path: '/idempotency-key', reason: 'is not accepted by POST /payments' }] },
          );
        }
      },
      schema: {
        tags,
        operationId: 'createPayment',
        summary: 'Create a payment',
        body: CreatePaymentBody,
        response: { 201: DataOf(PaymentCreated), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request, reply) => reply.code(201).send({ data: await payments.create(callerOf(request), request.body) }),
  );

  routes.get(
    '/payments',
    {
      config: { scope: 'payments:read' },
      schema: {
        tags,
        operationId: 'listPayments',
        summary: 'List payments, newest first (paginated like GET /transactions)',
        description: 'Filter by `reference` and `created_from` to reconcile a POST /payments whose answer never arrived (docs/payments.md).',
        querystring: PaymentsQuery,
        response: {
          200: Type.Object({ data: Type.Array(Payment), meta: Type.Object({ pagination: Pagination }) }, { additionalProperties: false }),
          ...errorResponses(...authenticatedReadErrors),
        },
      },
    },
    async (request) => payments.list(callerOf(request), request.query),
  );

  routes.get(
    '/payments/:id',
    {
      config: { scope: 'payments:read' },
      schema: { tags, operationId: 'getPayment', summary: 'Get a payment', params: PaymentParams, response: { 200: DataOf(Payment), ...errorResponses(...authenticatedReadErrors, 404) } },
    },
    async (request) => ({ data: await payments.get(callerOf(request), request.params.id) }),
  );
}

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): settlement. */
export function sandboxPaymentRoutes(app: FastifyInstance, settlement: SandboxPayments): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Sandbox'];

  routes.post(
    '/sandbox/payments/:id/settle',
    {
      config: { scope: 'payments:write' },
      schema: {
        tags,
        operationId: 'sandboxSettlePayment',
        summary: 'Settle a pending payment (sandbox only)',
        params: PaymentParams,
        body: SettleBody,
        response: { 200: DataOf(Payment), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: (await settlement.settle(callerOf(request).customerId, request.params.id, request.body.outcome)) as PaymentRecord }),
  );
}
