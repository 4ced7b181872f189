import type { components } from './schema.js';

/** The error codes of the API (docs/errors.md), and the one this client gives the flat unsupported-version answer. */
export type ErrorCode = components['schemas']['Error']['error']['code'] | 'UNSUPPORTED_API_VERSION';

/**
 * The API refused the request: the error envelope `{ error: { code, message, details } }` as a typed error, with
 * the request id to quote to support. Thrown by every operation on a non-2xx answer, after the client's retries.
 */
export class CustomerApiError extends Error {
  override readonly name = 'CustomerApiError';

  constructor(
    /** The HTTP status. */
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    /** Structured detail; for VALIDATION_ERROR `{ fields: [{ location, path, reason }] }`. */
    readonly details: unknown,
    /** The X-Request-Id of the answer. */
    readonly requestId: string | null,
  ) {
    super(message);
  }

  /** From an answer and its parsed body (the envelope, the flat version error, or anything a proxy sent). */
  static from(response: Response, body: unknown): CustomerApiError {
    const requestId = response.headers.get('x-request-id');
    const error = (body as { error?: unknown } | undefined)?.error;
    if (typeof error === 'string') return new CustomerApiError(response.status, 'UNSUPPORTED_API_VERSION', error, null, requestId);
    if (typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string') {
      const { code, message, details } = error as { code: ErrorCode; message?: unknown; details?: unknown };
      return new CustomerApiError(response.status, code, typeof message === 'string' ? message : code, details ?? null, requestId);
    }
    return new CustomerApiError(response.status, 'INTERNAL_ERROR', `The server answered ${response.status} without the error envelope`, body ?? null, requestId);
  }
}

/**
 * No answer came (the connection failed or the attempt timed out) and the client did not retry, because the request
 * may have been carried out: for `createPayment`, look it up by its reference before sending it again
 * (`findPayments`, docs/sdk.md "Payments and ambiguous failures").
 */
export class CustomerApiConnectionError extends Error {
  override readonly name = 'CustomerApiConnectionError';

  constructor(
    message: string,
    /** What failed: the fetch error or the timeout. */
    override readonly cause: unknown,
  ) {
    super(message);
  }
}
