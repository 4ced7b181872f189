import { Type, type Static, type TSchema, type TUnsafe } from 'typebox';
import { errorStatusByCode, type ErrorCode } from '../errors.js';
import { countryCodeFormat } from './request-schema.js';
import { countryCodeLength } from '../config/limits.js';
import { versionErrorSchemaName } from './openapi-document.js';

/** Schema primitives shared by every route; TypeBox is the one source of validation, types and OpenAPI. */

// ajv-formats' "uuid" also accepts a `urn:uuid:` prefix; ids here are the bare 36-character form only.
export const Uuid = Type.String({
  format: 'uuid',
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$',
  description: 'UUID',
});
export const Timestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC timestamp with milliseconds' });

/**
 * Every country field of every body: an assigned ISO 3166-1 alpha-2 code (country-codes.ts) in any case, handed to
 * the service, stored and answered in upper case (docs/decisions/0005-request-input-rules.md).
 */
export const CountryCode = Type.String({
  minLength: countryCodeLength,
  maxLength: countryCodeLength,
  format: countryCodeFormat,
  description: 'An assigned ISO 3166-1 alpha-2 country code, any case (de is DE); stored and answered in upper case',
});

export function StringEnum<const T extends readonly string[]>(values: T, options: { description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * `T | null`. A scalar becomes `{ type: [T, "null"] }` rather than `anyOf`: the response serialiser picks an
 * anyOf branch by validating each value, which made every nullable field of every record cost a validation.
 */
export function Nullable<T extends TSchema>(schema: T): TUnsafe<Static<T> | null> {
  const type = (schema as { type?: unknown }).type;
  if (typeof type === 'string' && type !== 'object' && type !== 'array') {
    return Type.Unsafe<Static<T> | null>({ ...schema, type: [type, 'null'] });
  }
  return Type.Unsafe<Static<T> | null>(Type.Union([schema, Type.Null()]));
}

/** docs/spec.md §4 convention 2: every success body is `{ data: ... }`. */
export function DataOf<T extends TSchema>(schema: T) {
  return Type.Object({ data: schema }, { additionalProperties: false });
}

/** docs/spec.md §7 rule 1: the error envelope of every per-endpoint failure. */
export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: StringEnum(Object.keys(errorStatusByCode) as ErrorCode[]),
      message: Type.String(),
      details: Type.Unknown({ description: 'Structured detail; for VALIDATION_ERROR `{ fields: [{ location, path, reason }] }`' }),
    }),
  },
  { title: 'Error', description: 'Error envelope (spec §7 rule 1); codes in docs/errors.md' },
);

/** docs/spec.md §7 rule 4: the flat body of an unsupported API version. */
export const VersionErrorBody = Type.Object(
  { error: Type.String({ description: 'Names the rejected version and the supported versions' }) },
  { title: versionErrorSchemaName, description: 'Unsupported API version (spec §7 rule 4, §9 rule 7)' },
);

const errorDescriptions: Record<number, string> = {
  400: 'Validation error or malformed JSON (an unsupported API version answers the flat UnsupportedApiVersion body instead)',
  401: 'Missing, malformed, unknown, revoked or expired API key',
  403: 'Missing scope, IP address not allowed, or missing/invalid CSRF token',
  404: 'Unknown id, or an id of another customer',
  408: 'A large request body arrived too slowly (docs/operations.md "Uploads")',
  409: 'Idempotency key in use by an unfinished request',
  413: 'Request body over the route limit',
  415: 'Request body is not application/json',
  422: 'Business rule refused the request',
  429: 'Rate limited; see Retry-After',
  500: 'Internal error',
  502: 'The provider failed or did not answer; nothing was created',
  503: 'The database is unavailable or the data cannot be written for the moment (DATABASE_UNAVAILABLE, STORAGE_UNAVAILABLE), or not ready; see Retry-After',
  507: 'The storage is full (STORAGE_FULL); see Retry-After',
};

/** Response schemas of the error statuses a route can answer, for the OpenAPI document. */
export function errorResponses(...statuses: number[]): Record<number, TSchema> {
  const responses: Record<number, TSchema> = {};
  for (const status of statuses) {
    responses[status] = { ...ErrorEnvelope, description: errorDescriptions[status] ?? 'Error' };
  }
  return responses;
}

/** Errors every authenticated route can answer. */
export const authenticatedReadErrors = [400, 401, 403, 429, 500] as const;
/** Errors every authenticated write route can answer, body-related ones included. */
export const authenticatedWriteErrors = [400, 401, 403, 413, 415, 429, 500] as const;
/** The statuses of a route that takes large bodies (http/upload-gate.ts): 408 for a body that arrives too slowly. */
export const uploadErrors = [...authenticatedWriteErrors, 408] as const;
