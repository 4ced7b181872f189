import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { idempotencyHeaders, onCreatedOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import type { FiatAccountService } from './service.js';
import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { CreateFiatAccountBody, FiatAccount, FiatAccountParams, FiatAccountStatusBody, type FiatAccountRecord } from './schemas.js';

export function fiatAccountRoutes(app: FastifyInstance, fiatAccounts: FiatAccountService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Fiat accounts'];

  routes.post(
    '/fiat-accounts',
    {
      config: { scope: 'fiat-accounts:write', idempotency: { kind: 'create', readScope: 'fiat-accounts:read' } },
      schema: {
        tags,
        operationId: 'createFiatAccount',
        summary: 'Create a fiat account',
        description: 'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.',
        headers: idempotencyHeaders(false),
        body: CreateFiatAccountBody,
        // 404: a linkedBusinessId that is not one of yours; 409 IDEMPOTENCY_KEY_IN_USE; 422 END_USER_NOT_BUSINESS; 502 PROVIDER_UNAVAILABLE.
        response: { 201: DataOf(FiatAccount), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422, 502) },
      },
    },
    async (request) => {
      await fiatAccounts.create(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/fiat-accounts',
    {
      config: { scope: 'fiat-accounts:read' },
      schema: { tags, operationId: 'listFiatAccounts', summary: 'List fiat accounts', response: { 200: DataOf(Type.Array(FiatAccount)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await fiatAccounts.list(callerOf(request)) }),
  );

  routes.get(
    '/fiat-accounts/:id',
    {
      config: { scope: 'fiat-accounts:read' },
      schema: {
        tags,
        operationId: 'getFiatAccount',
        summary: 'Get a fiat account',
        params: FiatAccountParams,
        response: { 200: DataOf(FiatAccount), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await fiatAccounts.get(callerOf(request), request.params.id) }),
  );
}

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): the provider changes an account's status. */
export function sandboxFiatAccountRoutes(app: FastifyInstance, statuses: SandboxStatuses<FiatAccountRecord>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/sandbox/fiat-accounts/:id/status',
    {
      config: { scope: 'fiat-accounts:write' },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxSetFiatAccountStatus',
        summary: 'Set the status of a fiat account (sandbox only)',
        description:
          'As the provider would: active, frozen or closed (any case). Emits fiat_account.status_updated; the status the account ' +
          'already has answers 200 and emits nothing. A frozen account cannot send money, a closed one cannot send or receive, ' +
          'and closed is final (422 INVALID_STATUS_TRANSITION).',
        params: FiatAccountParams,
        body: FiatAccountStatusBody,
        response: { 200: DataOf(FiatAccount), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await statuses.set(callerOf(request).customerId, request.params.id, request.body.status) }),
  );
}
