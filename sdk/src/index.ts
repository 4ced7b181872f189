export { CustomerApi, type CallOptions, type CustomerApiOptions, type OperationMethods, type OperationName, type PagedOperationName, type RequestOf, type ResponseOf } from './client.js';
export { CustomerApiConnectionError, CustomerApiError, type ErrorCode } from './errors.js';
export { operations } from './operations.js';
export { verifyWebhook, Webhook, WebhookVerificationError, type WebhookEvent } from './webhooks.js';
export type * from './schema.js';
