import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/auth.js';
import { answered, createdAnswer, idempotencyHeaders, reservationOf } from '../../http/idempotency.js';
import { DataOf, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import { TransactionRecord } from '../transactions/index.js';
import { DepositBody, DepositParams } from './schemas.js';
import type { DepositService } from './service.js';

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): funding. */
export function sandboxDepositRoutes(app: FastifyInstance, deposits: DepositService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Sandbox'];

  routes.post(
    '/sandbox/fiat-accounts/:id/deposits',
    {
      // The scope follows the account credited: fiat-accounts:write for a fiat account, virtual-accounts:write for a
      // virtual one (DepositService checks which once the account is known).
      config: { scope: ['fiat-accounts:write', 'virtual-accounts:write'], idempotency: { kind: 'operation', readScope: ['fiat-accounts:read', 'virtual-accounts:read'] } },
      schema: {
        tags,
        operationId: 'sandboxCreateFiatDeposit',
        summary: 'Deposit money from outside into a fiat account or a virtual account (sandbox only)',
        description: 'Money-moving: accepts an Idempotency-Key (docs/idempotency.md); a retry with the same key replays the first answer.',
        params: DepositParams,
        headers: idempotencyHeaders(false),
        body: DepositBody,
        // 422 ACCOUNT_NOT_ACTIVE: the account (or a virtual account's master) is closed.
        response: { 201: DataOf(TransactionRecord), ...errorResponses(...authenticatedWriteErrors, 404, 409, 422) },
      },
    },
    // Which of the two reads the answer is known once the account is (DepositService narrows it).
    async (request) => answered(request, createdAnswer(await deposits.deposit(callerOf(request), request.params.id, request.body, reservationOf(request)))),
  );
}
