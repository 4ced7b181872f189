import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { type FeePreviewOperation, feeRoutes } from './routes.js';

/** The fees plugin: POST /fees/preview (the schedules are set with the CLI, docs/fees.md). */
export async function feesPlugin(app: FastifyInstance, { feePreview }: { feePreview: FeePreviewOperation<TSchema> }): Promise<void> {
  feeRoutes(app, feePreview);
}

export { type FeeQuoter, type PaymentScheme, feeTransactionTypes, paymentSchemeCurrencies, paymentSchemes, schemeCarries } from './fee-quote.js';
export { presentFeePreview } from './presenter.js';
export { FeePreview, type FeePreviewRecord } from './schemas.js';
export { FeeService, type SetFeeScheduleInput } from './service.js';
export { type FeePreviewOperation } from './routes.js';
