import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { idempotencyHeaders, onCreatedOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import type { PayeeService } from './service.js';
import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { CreatePayeeBody, Payee, PayeeParams, PayeeStatusBody, type PayeeRecord } from './schemas.js';

export function payeeRoutes(app: FastifyInstance, payees: PayeeService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Payees'];

  routes.post(
    '/payees',
    {
      config: { scope: 'payees:write', idempotency: { kind: 'create', readScope: 'payees:read' } },
      schema: {
        tags,
        operationId: 'createPayee',
        summary: 'Create a payee',
        description:
          'The currency follows from the bank details: iban → EUR, sortCode + accountNumber → GBP, routingNumber + accountNumber → USD. ' +
          'requires_vop is true for EUR payees whose IBAN is in SEPA. ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.',
        headers: idempotencyHeaders(false),
        body: CreatePayeeBody,
        // 404: an endUserId that is not one of the caller's end users.
        response: { 201: DataOf(Payee), ...errorResponses(...authenticatedWriteErrors, 404, 409, 502) },
      },
    },
    async (request) => {
      await payees.create(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/payees',
    {
      config: { scope: 'payees:read' },
      schema: { tags, operationId: 'listPayees', summary: 'List payees', response: { 200: DataOf(Type.Array(Payee)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await payees.list(callerOf(request)) }),
  );

  routes.get(
    '/payees/:id',
    {
      config: { scope: 'payees:read' },
      schema: {
        tags,
        operationId: 'getPayee',
        summary: 'Get a payee',
        params: PayeeParams,
        response: { 200: DataOf(Payee), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await payees.get(callerOf(request), request.params.id) }),
  );
}

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): the provider changes a payee's status. */
export function sandboxPayeeRoutes(app: FastifyInstance, statuses: SandboxStatuses<PayeeRecord>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/sandbox/payees/:id/status',
    {
      config: { scope: 'payees:write' },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxSetPayeeStatus',
        summary: 'Set the status of a payee (sandbox only)',
        description:
          'As the provider would: active or inactive (any case), both ways. Emits payee.status_updated; the status the payee ' +
          'already has answers 200 and emits nothing. An inactive payee cannot be paid (POST /payments answers 422 PAYEE_NOT_ACTIVE).',
        params: PayeeParams,
        body: PayeeStatusBody,
        // 422: the payee changed status meanwhile, again and again (INVALID_STATUS_TRANSITION).
        response: { 200: DataOf(Payee), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await statuses.set(callerOf(request).customerId, request.params.id, request.body.status) }),
  );
}
