import type { FastifyError, FastifyInstance, FastifyRequest } from 'fastify';
import { storageFaultRetryAfterSecondsMax } from '../config/limits.js';
import { DomainError } from '../errors.js';

/** What a browser sees for each refusal: the page says it in words, with the API's status code. */
const titles: Record<number, string> = {
  400: 'That did not work',
  403: 'This form has expired',
  404: 'Not found',
  408: 'The upload took too long',
  413: 'Too large',
  415: 'Not a form',
  429: 'Too many attempts',
  503: 'Temporarily unavailable',
  507: 'Out of storage space',
};

/**
 * Errors of the browser pages are pages, not the API's JSON envelope. A refused request (4xx) shows its message;
 * a fault of the database or disk is a 503 or 507 page that says to try again shortly (docs/operations.md "Faults");
 * anything else is logged and shown as a generic failure, never with its details.
 */
export function installPageErrors(context: FastifyInstance, homePath: string, layoutData: (request: FastifyRequest) => Record<string, unknown> = () => ({})): void {
  context.setErrorHandler(async (error: FastifyError | DomainError, request, reply) => {
    const fault = error instanceof DomainError ? undefined : request.server.storageFaults.observe(error);
    if (fault !== undefined) {
      reply.header('retry-after', storageFaultRetryAfterSecondsMax);
      const status = fault === 'full' ? 507 : 503;
      const message = 'The server cannot reach or write its data for the moment. Try again in a few seconds.';
      return reply.code(status).view('/error', { ...layoutData(request), title: titles[status], message, homePath, status });
    }
    const status = error instanceof DomainError || (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) ? (error.statusCode ?? 500) : 500;
    if (status === 500) request.log.error({ err: error }, 'page failed');
    const message =
      status === 500
        ? 'Something went wrong on our side. Try again; if it keeps happening, tell your operator.'
        : status === 403 && error instanceof DomainError && error.code === 'CSRF_TOKEN_INVALID'
          ? 'The form was out of date or came from another site. Go back, reload the page and try again.'
          : error.message;
    if (error instanceof DomainError && error.code === 'RATE_LIMITED') {
      const details = error.details as { retry_after_seconds?: number };
      if (details.retry_after_seconds) reply.header('retry-after', details.retry_after_seconds);
    }
    return reply.code(status).view('/error', { ...layoutData(request), title: titles[status] ?? 'Something went wrong', message, homePath, status });
  });
  context.setNotFoundHandler(async (request, reply) =>
    reply.code(404).view('/error', { ...layoutData(request), title: titles[404], message: 'There is nothing at this address, or it is not yours to see.', homePath, status: 404 }),
  );
}
