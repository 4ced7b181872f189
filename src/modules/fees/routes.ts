import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { callerOf } from '../../http/auth.js';
import { DataOf, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import type { FeeService } from './service.js';
import { FeePreview, FeePreviewBody } from './schemas.js';

export function feeRoutes(app: FastifyInstance, fees: FeeService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();

  routes.post(
    '/fees/preview',
    {
      // It changes nothing, so a read scope; it is still a POST, so the platform asks for X-CSRF-Token.
      config: { scope: 'fees:read' },
      schema: {
        tags: ['Fees'],
        summary: 'Preview the fee of a payment',
        description:
          "The fee a payment with this amount, currency and scheme is charged, from the caller's own fee schedule or the default one " +
          '(docs/fees.md). A payment computes its fee with the same code.',
        body: FeePreviewBody,
        // 422 FEE_SCHEDULE_NOT_FOUND: no schedule prices this transaction type, scheme and currency.
        response: { 200: DataOf(FeePreview), ...errorResponses(...authenticatedWriteErrors, 422) },
      },
    },
    async (request) => ({ data: await fees.preview(callerOf(request), request.body) }),
  );
}
