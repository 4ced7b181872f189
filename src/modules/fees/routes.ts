import type { FastifyInstance } from 'fastify';
import type { Static, TSchema } from 'typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/auth.js';
import { DataOf, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { FeePreview, type FeePreviewRecord } from './schemas.js';

/**
 * How a payment's fee is previewed: the body POST /payments takes with every field optional, and the operation that
 * resolves its scheme, accounts and payee as the payment would. The payments module provides both (it depends on
 * fees, so fees takes them as an option rather than importing them).
 */
export interface FeePreviewOperation<Body extends TSchema> {
  body: Body;
  preview(caller: AuthenticatedKey, input: Static<Body>): Promise<FeePreviewRecord>;
}

export function feeRoutes<Body extends TSchema>(app: FastifyInstance, feePreview: FeePreviewOperation<Body>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/fees/preview',
    {
      // It changes nothing, so a read scope; it is still a POST, so the platform asks for X-CSRF-Token.
      config: { scope: 'fees:read' },
      schema: {
        tags: ['Fees'],
        operationId: 'previewFees',
        summary: 'Preview the fee of a payment',
        description:
          "The fee POST /payments charges for the same body, from the caller's own fee schedule or the default one (docs/fees.md). " +
          'Every payment field is accepted and optional here; the scheme is resolved as for the payment.',
        body: feePreview.body,
        // 404: a payeeId that is not yours. 422: FEE_SCHEDULE_NOT_FOUND, or CURRENCY_MISMATCH with the payee.
        response: { 200: DataOf(FeePreview), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await feePreview.preview(callerOf(request), request.body as Static<Body>) }),
  );
}
