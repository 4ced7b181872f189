/**
 * The closed catalogue of error codes (docs/spec.md §7 leaves them open) and the one code → HTTP status map.
 * docs/errors.md documents each; a test keeps the two in step.
 */
export const errorStatusByCode = {
  VALIDATION_ERROR: 400,
  IDEMPOTENCY_KEY_NOT_SUPPORTED: 400,
  INVALID_JSON: 400,
  UNAUTHENTICATED: 401,
  INSUFFICIENT_SCOPE: 403,
  IP_NOT_ALLOWED: 403,
  CSRF_TOKEN_INVALID: 403,
  NOT_FOUND: 404,
  IDEMPOTENCY_KEY_IN_USE: 409,
  TEST_CLOCK_ALREADY_ATTACHED: 409,
  REQUEST_TIMEOUT: 408,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INSUFFICIENT_FUNDS: 422,
  INVALID_STATUS_TRANSITION: 422,
  END_USER_NOT_BUSINESS: 422,
  ACCOUNT_NOT_MASTER: 422,
  ACCOUNT_NOT_ACTIVE: 422,
  PAYEE_NOT_ACTIVE: 422,
  CURRENCY_MISMATCH: 422,
  FEE_SCHEDULE_NOT_FOUND: 422,
  STORAGE_QUOTA_EXCEEDED: 422,
  LIMIT_EXCEEDED: 422,
  ADDRESS_REQUIRED: 422,
  QUOTE_EXPIRED: 422,
  QUOTE_ALREADY_CONFIRMED: 422,
  MIN_DESTINATION_AMOUNT_NOT_MET: 422,
  PROVIDER_REFUSED: 422,
  WEBHOOK_DISABLED: 422,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  PROVIDER_UNAVAILABLE: 502,
  NOT_READY: 503,
  SHUTTING_DOWN: 503,
  DATABASE_UNAVAILABLE: 503,
  STORAGE_UNAVAILABLE: 503,
  STORAGE_FULL: 507,
} as const;

export type ErrorCode = keyof typeof errorStatusByCode;

/** A failure the client can act on; only the error handler turns it into a response body. */
export class DomainError extends Error {
  override name = 'DomainError';
  readonly statusCode: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: unknown = {},
  ) {
    super(message);
    this.statusCode = errorStatusByCode[code];
  }
}

/** One field that failed validation: a JSON pointer into the request part and why. */
export interface FieldError {
  location: 'body' | 'query' | 'params' | 'headers';
  path: string;
  reason: string;
}

export function validationError(fields: FieldError[], message = 'The request is not valid.'): DomainError {
  return new DomainError('VALIDATION_ERROR', message, { fields });
}

export function notFound(resource: string): DomainError {
  return new DomainError('NOT_FOUND', `No such ${resource}.`);
}
