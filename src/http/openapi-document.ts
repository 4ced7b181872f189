/**
 * Finishes the OpenAPI document that @fastify/swagger generates from the route schemas, so that a generator makes a
 * good client of it (docs/openapi.md): named component schemas referenced everywhere, the headers the API reads and
 * sends, the unsupported-version answer as a response of its own, and an example request and response on every
 * operation. Pure functions of the document: the route schemas stay the one source.
 */

import { openApiExampleDepthMax, requestIdLengthMax } from '../config/limits.js';
import { countryCodeFormat } from './request-schema.js';

type Json = Record<string, unknown>;
export type OpenApiDocument = Json & { paths: Record<string, Record<string, Json>>; components?: Json };

const httpMethods = ['get', 'put', 'post', 'delete', 'patch'] as const;

const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A stable text of a schema for comparison: keys sorted, its own description left out (a use may describe it). */
function shapeOf(schema: Json): string {
  const sorted = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(sorted);
    if (!isObject(value)) return value;
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted(value[key])]));
  };
  const { description: _description, ...rest } = schema;
  return JSON.stringify(sorted(rest));
}

/**
 * Moves every schema that carries a `title` into `components.schemas` under that title and puts a `$ref` in its
 * place, innermost first, so a record named inside another is referenced from it too. Two different schemas under one
 * title are a mistake in the route schemas, refused here so the document never says one thing and serves another.
 */
function hoistNamedSchemas(document: OpenApiDocument): void {
  const named = new Map<string, Json>();
  const shapes = new Map<string, string>();
  const visit = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(visit);
    if (!isObject(value)) return value;
    const visited = Object.fromEntries(Object.entries(value).map(([key, child]) => [key, key === 'examples' || key === 'example' ? child : visit(child)]));
    const title = visited.title;
    if (typeof title !== 'string') return visited;
    const shape = shapeOf(visited);
    const known = shapes.get(title);
    if (known === undefined) {
      shapes.set(title, shape);
      named.set(title, visited);
    } else if (known !== shape) {
      throw new Error(`OpenAPI: two different schemas are named ${title}`);
    }
    const reference: Json = { $ref: `#/components/schemas/${title}` };
    const description = visited.description;
    if (typeof description === 'string' && description !== named.get(title)!.description) reference.description = description;
    return reference;
  };
  document.paths = visit(document.paths) as OpenApiDocument['paths'];
  const components = (document.components ??= {});
  components.schemas = Object.fromEntries([...named].sort(([a], [b]) => a.localeCompare(b)));
}

function operationsOf(document: OpenApiDocument): Json[] {
  return Object.values(document.paths).flatMap((item) => httpMethods.flatMap((method) => (isObject(item[method]) ? [item[method]] : [])));
}

/** The headers every response may carry, and those of some: described once in components.headers. */
const responseHeaders: Record<string, Json> = {
  'X-Request-Id': { description: 'The request id: the client’s X-Request-Id when it sent a valid one, otherwise a new UUID. Quote it to support.', schema: { type: 'string' } },
  'X-API-Version': { description: 'The API version that answered (v1 or v2).', schema: { type: 'string', enum: ['v1', 'v2'] } },
  'RateLimit-Limit': { description: 'Requests allowed per second for this API key (when rate limiting is on).', schema: { type: 'integer' } },
  'RateLimit-Remaining': { description: 'Requests left in the current second.', schema: { type: 'integer' } },
  'RateLimit-Reset': { description: 'Seconds until the window resets.', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  'Idempotent-Replayed': { description: '`true` when this answer is the stored answer of an earlier request with the same Idempotency-Key (docs/idempotency.md).', schema: { type: 'string', enum: ['true'] } },
};
const headerReference = (name: string): Json => ({ $ref: `#/components/headers/${name}` });

/** The request headers every operation reads, described once in components.parameters. */
const requestParameters: Record<string, Json> = {
  ApiVersion: {
    name: 'X-API-Version',
    in: 'header',
    required: false,
    description:
      'The API version (docs/spec.md §9): v1 (the default) or v2. A /v1 or /v2 path prefix takes precedence. An unsupported version is answered 400 with the flat body of the `UnsupportedApiVersion` response, not the error envelope.',
    schema: { type: 'string', enum: ['v1', 'v2'] },
  },
  RequestId: {
    name: 'X-Request-Id',
    in: 'header',
    required: false,
    description: 'An id of the client’s choosing for this request, echoed in the answer and written in the server’s logs; a new UUID replaces one that does not match the pattern.',
    schema: { type: 'string', pattern: `^[A-Za-z0-9._:-]{1,${requestIdLengthMax}}$` },
  },
};
const parameterReference = (name: string): Json => ({ $ref: `#/components/parameters/${name}` });

/** Statuses whose answer tells when to come back. */
const retryAfterStatuses = new Set(['429', '503', '507']);

/**
 * Declares the headers: the version and request id on every operation, the Idempotency-Key parameter the route
 * schemas carry as one named parameter, and on every response the headers it can carry.
 */
function documentHeaders(document: OpenApiDocument): void {
  const components = (document.components ??= {});
  const parameters: Json = { ...requestParameters };
  for (const operation of operationsOf(document)) {
    const own = (operation.parameters as Json[] | undefined) ?? [];
    const idempotent = own.find((parameter) => parameter.in === 'header' && String(parameter.name).toLowerCase() === 'idempotency-key');
    if (idempotent) parameters.IdempotencyKey = { ...idempotent, name: 'Idempotency-Key' };
    const kept = own.filter((parameter) => parameter !== idempotent);
    operation.parameters = [...kept, ...(idempotent ? [parameterReference('IdempotencyKey')] : []), parameterReference('ApiVersion'), parameterReference('RequestId')];
    const authenticated = !(Array.isArray(operation.security) && operation.security.length === 0);
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      if (typeof response.$ref === 'string') continue;
      const headers: Json = { 'X-Request-Id': headerReference('X-Request-Id') };
      if (status !== '500') headers['X-API-Version'] = headerReference('X-API-Version');
      if (authenticated) for (const name of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']) headers[name] = headerReference(name);
      if (retryAfterStatuses.has(status)) headers['Retry-After'] = headerReference('Retry-After');
      if (idempotent && status.startsWith('2')) headers['Idempotent-Replayed'] = headerReference('Idempotent-Replayed');
      response.headers = { ...(response.headers as Json | undefined), ...headers };
    }
  }
  components.parameters = parameters;
  components.headers = responseHeaders;
}

/** The name of the flat body of an unsupported version in components.schemas (http/schemas.ts VersionErrorBody). */
export const versionErrorSchemaName = 'UnsupportedApiVersionError';

/**
 * The flat body of an unsupported version (docs/spec.md §7 rule 4) is a response of its own, referenced where it is
 * the only 400 an operation can answer; everywhere else a 400 is the error envelope, and the version parameter says
 * when the flat body comes instead. A union in every 400 made generated clients read `error.error.code` wrongly.
 */
function documentVersionError(document: OpenApiDocument): void {
  const components = (document.components ??= {});
  const schema = { $ref: `#/components/schemas/${versionErrorSchemaName}` };
  components.responses = {
    UnsupportedApiVersion: {
      description: 'Unsupported API version: the flat body of docs/spec.md §7 rule 4, not the error envelope',
      headers: { 'X-Request-Id': headerReference('X-Request-Id') },
      content: { 'application/json': { schema, example: { error: 'API version v3 is not supported; supported versions: v1, v2' } } },
    },
  };
  for (const operation of operationsOf(document)) {
    const responses = operation.responses as Record<string, Json>;
    const content = responses['400']?.content as Record<string, Json> | undefined;
    if ((content?.['application/json']?.schema as Json | undefined)?.$ref === schema.$ref) responses['400'] = { $ref: '#/components/responses/UnsupportedApiVersion' };
  }
}

/**
 * A value that satisfies the schema, from its own example where it has one, built from its parts otherwise. An answer
 * shows every field; a request only the required ones, since optional fields of a request are often alternatives (an
 * IBAN or a sort code) that together would be refused: the main request bodies carry a whole example of their own.
 */
function exampleOf(schema: Json | undefined, schemas: Record<string, Json>, request: boolean, depth = 0): unknown {
  if (schema === undefined || depth > openApiExampleDepthMax) return null;
  const part = (child: Json | undefined) => exampleOf(child, schemas, request, depth + 1);
  if (typeof schema.$ref === 'string') return part(schemas[schema.$ref.split('/').pop()!]);
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = (schema.anyOf ?? schema.oneOf) as Json[] | undefined;
  if (branches) return part(branches.find((branch) => branch.type !== 'null') ?? branches[0]);
  const type: unknown = Array.isArray(schema.type) ? (schema.type as unknown[]).find((candidate) => candidate !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = Object.entries((schema.properties as Record<string, Json> | undefined) ?? {});
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const shown = request ? properties.filter(([name]) => required.has(name)) : properties;
      return Object.fromEntries(shown.map(([name, property]) => [name, part(property)]));
    }
    case 'array': {
      const item = part(schema.items as Json | undefined);
      return Array.from({ length: Math.max(1, Number(schema.minItems ?? 1)) }, () => item);
    }
    case 'integer':
    case 'number':
      return Math.max(Number(schema.minimum ?? 1), Number(schema.exclusiveMinimum ?? 0) + 1);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return stringExample(schema);
    default:
      return null;
  }
}

const formatExamples: Record<string, string> = {
  uuid: '0196b2d4-5e6f-7a80-9b1c-2d3e4f5a6b7c',
  'date-time': '2026-03-02T09:30:00.000Z',
  date: '2026-03-02',
  email: 'jane.doe@example.com',
  uri: 'https://example.com/webhooks',
  [countryCodeFormat]: 'DE',
  // @fastify/swagger writes base64 content as format "byte".
  byte: 'JVBERi0xLjcK',
};

function stringExample(schema: Json): string {
  if (schema.contentEncoding === 'base64') return 'JVBERi0xLjcK';
  const known = formatExamples[String(schema.format)];
  if (known !== undefined) return known;
  const minLength = Number(schema.minLength ?? 1);
  return 'example'.padEnd(minLength, 'x');
}

/**
 * An example of the request body and of each 2xx answer on every operation, built from the schemas' own examples:
 * what a reader of the reference sees, and what a generated client's documentation shows.
 */
function documentExamples(document: OpenApiDocument): void {
  const schemas = ((document.components ??= {}).schemas ?? {}) as Record<string, Json>;
  for (const operation of operationsOf(document)) {
    const body = (operation.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
    for (const media of Object.values(body ?? {})) media.example ??= exampleOf(media.schema as Json, schemas, true);
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      if (!status.startsWith('2')) continue;
      for (const media of Object.values((response.content as Record<string, Json> | undefined) ?? {})) media.example ??= exampleOf(media.schema as Json, schemas, false);
    }
  }
}

/** The names of the error answers shared by operations, by status. */
const errorResponseNames: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '408': 'RequestTimeout',
  '409': 'Conflict',
  '413': 'PayloadTooLarge',
  '415': 'UnsupportedMediaType',
  '422': 'UnprocessableEntity',
  '429': 'TooManyRequests',
  '500': 'InternalError',
  '502': 'BadGateway',
  '503': 'ServiceUnavailable',
  '507': 'InsufficientStorage',
};

/**
 * An error answer that most operations share word for word becomes one entry of components.responses, referenced
 * from each: the document says it once, and a generator makes one type of it. An operation whose answer differs (its
 * own description) keeps it inline.
 */
function shareErrorResponses(document: OpenApiDocument): void {
  const byStatus = new Map<string, Map<string, { response: Json; count: number }>>();
  const operations = operationsOf(document);
  for (const operation of operations) {
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      if (errorResponseNames[status] === undefined || typeof response.$ref === 'string') continue;
      const shapes = byStatus.get(status) ?? new Map<string, { response: Json; count: number }>();
      const shape = JSON.stringify(response);
      const seen = shapes.get(shape);
      shapes.set(shape, { response, count: (seen?.count ?? 0) + 1 });
      byStatus.set(status, shapes);
    }
  }
  const shared = new Map<string, string>();
  const responses = ((document.components ??= {}).responses ??= {}) as Record<string, Json>;
  for (const [status, shapes] of byStatus) {
    const [shape, { response }] = [...shapes].sort(([, a], [, b]) => b.count - a.count)[0]!;
    responses[errorResponseNames[status]!] = response;
    shared.set(`${status} ${shape}`, `#/components/responses/${errorResponseNames[status]}`);
  }
  for (const operation of operations) {
    const own = operation.responses as Record<string, Json>;
    for (const [status, response] of Object.entries(own)) {
      const reference = shared.get(`${status} ${JSON.stringify(response)}`);
      if (reference !== undefined) own[status] = { $ref: reference };
    }
  }
}

const successDescriptions: Record<string, string> = { '200': 'OK', '201': 'Created', '202': 'Accepted: the work goes on after the answer', '204': 'No content' };

/** A success the route schema left undescribed (@fastify/swagger writes "Default Response") says what it is. */
function describeSuccesses(document: OpenApiDocument): void {
  for (const operation of operationsOf(document)) {
    for (const [status, response] of Object.entries(operation.responses as Record<string, Json>)) {
      if (response.description === 'Default Response' && successDescriptions[status] !== undefined) response.description = successDescriptions[status];
    }
  }
}

/** Everything above, in order: names first, so the rest reads references. */
export function finishDocument(document: OpenApiDocument): OpenApiDocument {
  hoistNamedSchemas(document);
  documentVersionError(document);
  describeSuccesses(document);
  documentHeaders(document);
  shareErrorResponses(document);
  documentExamples(document);
  return document;
}
