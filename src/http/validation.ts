import { Ajv, type ErrorObject, type Options, type SchemaValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { FastifyInstance } from 'fastify';
import { normalizeTimestamp } from '../clock.js';
import { validationError, type FieldError } from '../errors.js';
import { isAssignedCountryCode } from './country-codes.js';
import {
  canonicalEnumValue,
  caseInsensitiveEnumKeyword,
  countryCodeKeyword,
  jsonDepthExceeds,
  jsonLimitsKeyword,
  nullAsAbsent,
  prepareRequestSchema,
  singleLineKeyword,
  timestampKeyword,
} from './request-schema.js';
import { singleLineProblem, textProblems } from './text-hygiene.js';

/** Where a modifying keyword writes the value it normalised. */
interface DataContext {
  parentData?: Record<string | number, unknown>;
  parentDataProperty?: string | number;
}

/** A custom keyword's validate function; like Ajv's own, it reports why through its `errors` property. */
type KeywordValidator<Schema> = ((schema: Schema, data: unknown, parentSchema?: unknown, context?: DataContext) => boolean) & {
  errors?: Array<Partial<ErrorObject>>;
};

function replaceValue(context: DataContext | undefined, value: unknown): void {
  if (context?.parentData !== undefined && context.parentDataProperty !== undefined) context.parentData[context.parentDataProperty] = value;
}

function keywordError(keyword: string, message: string, params: Record<string, unknown> = {}): Partial<ErrorObject> {
  return { keyword, message, params };
}

const caseInsensitiveEnum: KeywordValidator<string[]> = (values, data, _parent, context) => {
  if (typeof data !== 'string') return true; // `type` reports it
  const canonical = canonicalEnumValue(values, data);
  if (canonical === undefined) {
    caseInsensitiveEnum.errors = [keywordError('enum', `must be one of ${values.join(', ')}`, { allowedValues: values })];
    return false;
  }
  if (canonical !== data) replaceValue(context, canonical);
  return true;
};

const rfc3339Timestamp: KeywordValidator<boolean> = (_enabled, data, _parent, context) => {
  if (typeof data !== 'string') return true;
  const normalized = normalizeTimestamp(data);
  if (normalized === undefined) {
    rfc3339Timestamp.errors = [keywordError('format', 'must be an RFC 3339 date-time between the years 0000 and 9999 in UTC, e.g. 2026-01-31T09:30:00.000Z')];
    return false;
  }
  if (normalized !== data) replaceValue(context, normalized);
  return true;
};

const countryCode: KeywordValidator<boolean> = (_enabled, data, _parent, context) => {
  if (typeof data !== 'string') return true;
  // ASCII letters first: toUpperCase turns "ıt" into "IT" and "ß" into "SS".
  const code = /^[A-Za-z]{2}$/.test(data) ? data.toUpperCase() : undefined;
  if (code === undefined || !isAssignedCountryCode(code)) {
    countryCode.errors = [keywordError('format', 'must be an assigned ISO 3166-1 alpha-2 country code, such as DE')];
    return false;
  }
  if (code !== data) replaceValue(context, code);
  return true;
};

const singleLine: KeywordValidator<boolean> = (_enabled, data) => {
  if (typeof data !== 'string') return true;
  const problem = singleLineProblem(data);
  if (problem === undefined) return true;
  singleLine.errors = [keywordError(singleLineKeyword, problem)];
  return false;
};

const jsonLimits: KeywordValidator<{ depthMax: number; bytesMax: number }> = (limits, data) => {
  if (jsonDepthExceeds(data, limits.depthMax)) {
    jsonLimits.errors = [keywordError(jsonLimitsKeyword, `must not nest objects and arrays more than ${limits.depthMax} levels deep`)];
    return false;
  }
  if (Buffer.byteLength(JSON.stringify(data)) > limits.bytesMax) {
    jsonLimits.errors = [keywordError(jsonLimitsKeyword, `must be at most ${limits.bytesMax} bytes as JSON`)];
    return false;
  }
  return true;
};

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...options });
  addFormats.default(ajv);
  const keyword = (name: string, schemaType: 'array' | 'boolean' | 'object', modifying: boolean, validate: KeywordValidator<never>) =>
    ajv.addKeyword({ keyword: name, schemaType, modifying, errors: true, validate: validate as unknown as SchemaValidateFunction });
  keyword(caseInsensitiveEnumKeyword, 'array', true, caseInsensitiveEnum);
  keyword(timestampKeyword, 'boolean', true, rfc3339Timestamp);
  keyword(countryCodeKeyword, 'boolean', true, countryCode);
  keyword(singleLineKeyword, 'boolean', false, singleLine);
  keyword(jsonLimitsKeyword, 'object', false, jsonLimits);
  return ajv;
}

/** What Fastify calls: true, or false with the errors on the function (as Ajv's own validators do). */
interface RequestValidator {
  (data: unknown): boolean;
  errors?: FastifySchemaValidationError[];
}

/**
 * Bodies are validated exactly as sent (docs/architecture.md, Stack: no type coercion, unknown properties refused); query strings,
 * path parameters and headers are text by nature, so those are coerced ("2" → 2 for `page`), and unknown query
 * parameters are dropped rather than refused on every route (cache busters such as `_=123`; removeAdditional only
 * acts where `additionalProperties: false` is declared, which no headers schema does). Every part first passes the
 * text rules of text-hygiene.ts; then optional nulls are dropped and the schema, prepared by request-schema.ts, is
 * checked, the single-line rule for the strings it declares included. allErrors lets one response list every
 * failing field.
 */
export function installValidators(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => compileRequestValidator(schema, httpPart));
}

const bodyAjv = makeAjv({ coerceTypes: false });
const textAjv = makeAjv({ coerceTypes: true, removeAdditional: true });

function compileRequestValidator(schema: unknown, httpPart: string | undefined): RequestValidator {
  const prepared = prepareRequestSchema(schema);
  const validateSchema = (httpPart === 'body' ? bodyAjv : textAjv).compile(prepared as object);
  const dropNulls = nullAsAbsent(prepared);
  const textErrorsOf = (data: unknown) =>
    textProblems(data).map((problem) => ({ keyword: 'text', instancePath: problem.path, schemaPath: '', message: problem.reason, params: {} }));
  const validator: RequestValidator = (data) => {
    // A query's unknown parameters are dropped by the schema check, whatever they hold: its text rules apply to
    // what is kept. Elsewhere every string is checked, before anything is normalised.
    const query = httpPart === 'querystring';
    const textBefore = query ? [] : textErrorsOf(data);
    dropNulls?.(data);
    const valid = validateSchema(data);
    const textErrors = query ? textErrorsOf(data) : textBefore;
    if (valid && textErrors.length === 0) return true;
    validator.errors = [...textErrors, ...(validateSchema.errors ?? [])];
    return false;
  };
  return validator;
}

/**
 * The same rules for a body that did not come as JSON (a dashboard form, turned into the API's body shape first):
 * returns the body, normalised as the API would have received it, or throws the API's VALIDATION_ERROR.
 */
export function bodyChecker<T>(schema: object): (data: unknown) => T {
  const validator = compileRequestValidator(schema, 'body');
  return (data) => {
    if (!validator(data)) throw validationError(fieldErrors(validator.errors ?? [], 'body'));
    return data as T;
  };
}

const locationByContext: Record<string, FieldError['location']> = {
  body: 'body',
  querystring: 'query',
  params: 'params',
  headers: 'headers',
};

function reasonOf(error: ErrorObject | FastifySchemaValidationError): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'additionalProperties') return 'is not an allowed field';
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    return `must be one of ${params.allowedValues.join(', ')}`;
  }
  return error.message ?? 'is not valid';
}

function pathOf(error: ErrorObject | FastifySchemaValidationError): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    return `${error.instancePath}/${params.missingProperty}`;
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    return `${error.instancePath}/${params.additionalProperty}`;
  }
  return error.instancePath;
}

/** Ajv errors → one entry per failing field (the first reason wins), as JSON pointers into the request part. */
export function fieldErrors(errors: FastifySchemaValidationError[], context: string): FieldError[] {
  const location = locationByContext[context] ?? 'body';
  const byPath = new Map<string, FieldError>();
  for (const error of errors) {
    // anyOf reports each branch and then itself; the branch errors say nothing useful to a client.
    if (error.keyword === 'anyOf' || error.keyword === 'oneOf') continue;
    const path = pathOf(error);
    if (!byPath.has(path)) byPath.set(path, { location, path, reason: reasonOf(error) });
  }
  return [...byPath.values()];
}
