import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaValidationError } from 'fastify/types/schema.js';
import type { FastifyInstance } from 'fastify';
import type { FieldError } from '../errors.js';

function makeAjv(options: Options): Ajv {
  const ajv = new Ajv({ allErrors: true, removeAdditional: false, useDefaults: true, strict: false, ...options });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Bodies are validated exactly as sent (DESIGN §2: no coercion, unknown properties refused); query strings,
 * path parameters and headers are text by nature, so those are coerced ("2" → 2 for `page`).
 * allErrors lets one response list every failing field.
 */
export function installValidators(app: FastifyInstance): void {
  const bodyAjv = makeAjv({ coerceTypes: false });
  const textAjv = makeAjv({ coerceTypes: true });
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : textAjv).compile(schema));
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
