import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { storageFaultRetryAfterSecondsMax, storageFaultRetryAfterSecondsMin } from '../config/limits.js';
import { DomainError, errorStatusByCode, type ErrorCode } from '../errors.js';
import type { StorageFaultState } from '../storage/fault-state.js';
import type { StorageFault } from '../storage/faults.js';
import { unsupportedVersionAnswer, versionOf, versionOfUnreadableRequest } from './api-version.js';
import { fieldErrors } from './validation.js';

/** Fastify's own request errors, translated into the catalogue with our words (theirs can name internals). */
const frameworkErrors: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Request bodies must be sent as application/json.' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The request body is larger than this endpoint accepts.' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'INVALID_JSON', message: 'The request body is not valid JSON.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'INVALID_JSON', message: 'The request body does not match its Content-Length.' },
  FST_ERR_CTP_INVALID_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'The Content-Type header is not valid.' },
  FST_ERR_CTP_INVALID_UTF8: { code: 'INVALID_JSON', message: 'The request body is not valid UTF-8.' },
};

/** Error bodies are serialised here, never by a route's response schema: one writer, one shape. */
function errorBody(code: ErrorCode, message: string, details: unknown = {}): string {
  return JSON.stringify({ error: { code, message, details } });
}

function send(reply: FastifyReply, code: ErrorCode, message: string, details: unknown = {}): FastifyReply {
  return reply.code(errorStatusByCode[code]).type('application/json; charset=utf-8').send(errorBody(code, message, details));
}

/** A refusal as the status and exact body the error handler sends for it (an idempotent answer stores these). */
export function errorAnswer(error: DomainError): { status: number; body: string } {
  return { status: error.statusCode, body: errorBody(error.code, error.message, error.details) };
}

/*
 * Errors raised before a request reaches the routes — by the URL router or by Node's HTTP parser — skip the hooks
 * that set the usual headers, so these two write them themselves (docs/errors.md "Before routing"), X-API-Version
 * included wherever the version can be resolved (docs/spec.md §9 rule 4).
 */

const headersBeforeRouting = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'content-type': 'application/json; charset=utf-8' };

/**
 * The methods a request's path is served with, in this order. OPTIONS is never one: the CORS plugin's catch-all
 * OPTIONS route answers preflights only (app.ts), and no operation is served with OPTIONS.
 */
const servedMethods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

function allowedMethods(request: FastifyRequest, path: string): string[] {
  return servedMethods.filter((method) => request.server.findRoute({ method, url: path }) !== null);
}

/** No route for the method: 405 with Allow when another method serves the path, else 404 (docs/errors.md). */
function routeNotFound(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const path = request.url.split('?')[0] ?? '/';
  const shownPath = path.slice(0, 200);
  const allowed = allowedMethods(request, path);
  if (allowed.length === 0) return send(reply, 'ROUTE_NOT_FOUND', `No route ${request.method} ${shownPath}.`);
  reply.header('allow', allowed.join(', '));
  return send(reply, 'METHOD_NOT_ALLOWED', `Method ${request.method} is not allowed on ${shownPath}. Allowed: ${allowed.join(', ')}.`, { allowed });
}

function isJsonSyntaxError(error: FastifyError): boolean {
  return error instanceof SyntaxError && error.statusCode === 400;
}

/**
 * Fastify's `frameworkErrors`: a URL that cannot be decoded (FST_ERR_BAD_URL) or a path parameter over the router's
 * length limit (FST_ERR_MAX_PARAM_LENGTH) is a malformed path: 400 VALIDATION_ERROR, like any malformed id.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const choice = versionOf(request.raw);
  let body: string;
  let version: string;
  if ('rejected' in choice) {
    // The version is checked first (docs/errors.md, order of checks), here as for every request.
    ({ body, echo: version } = unsupportedVersionAnswer(choice.rejected));
  } else {
    const reason = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'is longer than any id' : 'is not a valid URL path';
    body = errorBody('VALIDATION_ERROR', 'The request is not valid.', { fields: [{ location: 'params', path: '', reason }] });
    version = choice.version;
  }
  const headers = { ...headersBeforeRouting, 'x-request-id': request.id, 'x-api-version': version, 'content-length': Buffer.byteLength(body) };
  reply.raw.writeHead(400, headers);
  reply.raw.end(body);
}

/**
 * Node's 'clientError': a request its HTTP parser cannot read (a malformed header line, a conflicting length),
 * headers over the size limit, or a request that did not arrive within the request timeout. Answered on the socket
 * itself, then closed, as Node does.
 */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  let code: ErrorCode = 'VALIDATION_ERROR';
  let message = 'The request could not be read as HTTP.';
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    code = 'REQUEST_TIMEOUT';
    message = 'The request did not arrive in time.';
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    code = 'HEADERS_TOO_LARGE';
    message = 'The request headers are larger than the server accepts.';
  }
  const body = errorBody(code, message);
  const status = errorStatusByCode[code];
  // Node attaches the bytes it could not parse (error.rawPacket) to parser errors.
  const rawPacket = (error as { rawPacket?: unknown }).rawPacket;
  const version = versionOfUnreadableRequest(Buffer.isBuffer(rawPacket) ? rawPacket : undefined);
  const headers = {
    ...headersBeforeRouting,
    'x-request-id': randomUUID(),
    ...(version === undefined ? {} : { 'x-api-version': version }),
    'content-length': String(Buffer.byteLength(body)),
    connection: 'close',
  };
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${statusText[status] ?? 'Error'}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}`).join('\r\n')}\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

const statusText: Record<number, string> = { 400: 'Bad Request', 408: 'Request Timeout', 431: 'Request Header Fields Too Large' };

const storageFaultAnswers: Record<StorageFault, { code: ErrorCode; message: string }> = {
  unavailable: {
    code: 'DATABASE_UNAVAILABLE',
    message: 'The database is unavailable for the moment. Retry after Retry-After, a keyed request with the same Idempotency-Key; look a payment up by its reference first.',
  },
  unwritable: { code: 'STORAGE_UNAVAILABLE', message: 'The server cannot write its data for the moment. Nothing was stored; retry after Retry-After.' },
  full: { code: 'STORAGE_FULL', message: 'The server has no space left to store data. Nothing was stored; retry after Retry-After.' },
};

/** Whole seconds, drawn anew for each answer: clients of a database that comes back do not all return at once. */
function storageFaultRetryAfterSeconds(): number {
  const spread = storageFaultRetryAfterSecondsMax - storageFaultRetryAfterSecondsMin;
  return storageFaultRetryAfterSecondsMin + Math.floor(Math.random() * (spread + 1));
}

/** 503 or 507 for a fault of the storage (docs/errors.md, docs/operations.md "Faults"), with Retry-After. */
function sendStorageFault(reply: FastifyReply, fault: StorageFault): FastifyReply {
  const retryAfterSeconds = storageFaultRetryAfterSeconds();
  reply.header('retry-after', String(retryAfterSeconds));
  const { code, message } = storageFaultAnswers[fault];
  return send(reply, code, message, { retry_after_seconds: retryAfterSeconds });
}

/**
 * The only place that writes error bodies (docs/architecture.md rule 4). `storageFaults` tells a fault of the database or disk
 * (503/507, noted for readiness) from a bug (500).
 */
export function installErrorHandling(app: FastifyInstance, storageFaults?: StorageFaultState): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Fastify parses the body of an unmatched request before its not-found handler runs, so a malformed, empty
    // or oversized body would otherwise answer 400/413 for a route that does not exist (docs/errors.md, order of
    // checks: an unknown route answers 404). Our own errors and crashes keep their meaning.
    const isRequestError = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500;
    if (request.is404 && isRequestError && !(error instanceof DomainError)) return routeNotFound(request, reply);
    if (error instanceof DomainError) {
      // docs/spec.md §7 rule 2: the first request with the key is unfinished; a retry in a second is reasonable.
      if (error.code === 'IDEMPOTENCY_KEY_IN_USE') reply.header('retry-after', '1');
      // The instance is stopping: retry at once, on a new connection (this one closes after the answer).
      if (error.code === 'SHUTTING_DOWN') reply.header('retry-after', '1').header('connection', 'close');
      return send(reply, error.code, error.message, error.details);
    }
    if (error.validation) {
      const fields = fieldErrors(error.validation, error.validationContext ?? 'body');
      return send(reply, 'VALIDATION_ERROR', 'The request is not valid.', { fields });
    }
    const known = error.code ? frameworkErrors[error.code] : undefined;
    if (known) return send(reply, known.code, known.message);
    if (isJsonSyntaxError(error)) return send(reply, 'INVALID_JSON', 'The request body is not valid JSON.');
    if (error.statusCode === 413) return send(reply, 'PAYLOAD_TOO_LARGE', 'The request body is larger than this endpoint accepts.');
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      // Remaining malformed-request errors of the framework (e.g. __proto__ in a body).
      return send(reply, 'VALIDATION_ERROR', 'The request could not be read.');
    }
    const fault = storageFaults?.observe(error);
    if (fault !== undefined) {
      // The fault's first occurrence is logged once by storageFaults; each request only at debug level.
      request.log.debug({ err: error, storageFault: fault }, 'storage fault');
      return sendStorageFault(reply, fault);
    }
    request.log.error({ err: error }, 'unhandled error');
    request.lastResort = true;
    return send(reply, 'INTERNAL_ERROR', 'Something went wrong on our side. The request id identifies it in our logs.');
  });

  app.setNotFoundHandler((request, reply) => routeNotFound(request, reply));
}
