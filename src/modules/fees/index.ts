export { type FeeQuoter, type PaymentScheme, feeTransactionTypes, paymentSchemeCurrencies, paymentSchemes, schemeCarries } from './fee-quote.js';
export { presentFeePreview } from './presenter.js';
export { FeePreview, type FeePreviewRecord } from './schemas.js';
export { FeeService, type SetFeeScheduleInput } from './service.js';
