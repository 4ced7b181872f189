import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { idempotencyHeaders, onCreatedOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import type { VirtualAccountService } from './service.js';
import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import { CreateVirtualAccountBody, VirtualAccount, VirtualAccountParams, VirtualAccountStatusBody, type VirtualAccountRecord } from './schemas.js';

export function virtualAccountRoutes(app: FastifyInstance, virtualAccounts: VirtualAccountService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Virtual accounts'];

  routes.post(
    '/virtual-accounts',
    {
      config: { scope: 'virtual-accounts:write', idempotency: { kind: 'create', readScope: 'virtual-accounts:read' } },
      schema: {
        tags,
        operationId: 'createVirtualAccount',
        summary: 'Create a virtual account under a master fiat account',
        description:
          'Opens a virtual account (its own IBAN) under one of your master fiat accounts of the same currency, ' +
          'optionally held in the name of one of your end users. 404 when the master account or end user is not ' +
          'yours; 422 ACCOUNT_NOT_MASTER, CURRENCY_MISMATCH or ACCOUNT_NOT_ACTIVE (closed) when the master cannot host it. ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.',
        headers: idempotencyHeaders(false),
        body: CreateVirtualAccountBody,
        response: { 201: DataOf(VirtualAccount), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422, 502) },
      },
    },
    async (request) => {
      await virtualAccounts.create(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/virtual-accounts',
    {
      config: { scope: 'virtual-accounts:read' },
      schema: {
        tags,
        operationId: 'listVirtualAccounts',
        summary: 'List virtual accounts',
        response: { 200: DataOf(Type.Array(VirtualAccount)), ...errorResponses(...authenticatedReadErrors) },
      },
    },
    async (request) => ({ data: await virtualAccounts.list(callerOf(request)) }),
  );

  routes.get(
    '/virtual-accounts/:id',
    {
      config: { scope: 'virtual-accounts:read' },
      schema: {
        tags,
        operationId: 'getVirtualAccount',
        summary: 'Get a virtual account',
        params: VirtualAccountParams,
        response: { 200: DataOf(VirtualAccount), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await virtualAccounts.get(callerOf(request), request.params.id) }),
  );
}

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): the provider changes a virtual account's status. */
export function sandboxVirtualAccountRoutes(app: FastifyInstance, statuses: SandboxStatuses<VirtualAccountRecord>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/sandbox/virtual-accounts/:id/status',
    {
      config: { scope: 'virtual-accounts:write' },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxSetVirtualAccountStatus',
        summary: 'Set the status of a virtual account (sandbox only)',
        description:
          'As the provider would: active, frozen or closed (any case). Emits virtual_account.status_updated; the status the account ' +
          'already has answers 200 and emits nothing. A frozen account cannot send money, a closed one cannot send or receive, ' +
          'and closed is final (422 INVALID_STATUS_TRANSITION).',
        params: VirtualAccountParams,
        body: VirtualAccountStatusBody,
        response: { 200: DataOf(VirtualAccount), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await statuses.set(callerOf(request).customerId, request.params.id, request.body.status) }),
  );
}
