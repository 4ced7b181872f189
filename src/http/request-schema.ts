/**
 * The rules every request schema follows beyond plain JSON Schema (docs/decisions/0005-request-input-rules.md).
 * Route schemas are written once with TypeBox and serve validation, serialisation and the OpenAPI document; the
 * validator compiles a prepared copy of each, so the document still shows plain `enum` and `date-time`:
 *
 * - an enum of strings matches regardless of case and hands the service its canonical spelling
 *   (`"DIRECTOR"` → `"director"`, `"eur"` → `"EUR"`);
 * - a `date-time` is any RFC 3339 timestamp and reaches the service as UTC with milliseconds (docs/spec.md §2);
 * - a country code (format `iso-3166-1-alpha-2`) is an assigned code in any case and reaches the service in upper
 *   case (`"de"` → `"DE"`);
 * - every string is single-line text (text-hygiene.ts), except base64 content (`contentEncoding: "base64"`), whose
 *   layout allows line breaks; free-form JSON (metadata) declares no strings, so it is stored as sent;
 * - an optional property sent as `null` is taken as absent (records answer `null` for absent values, and clients
 *   that round-trip a record send them back), unless the schema itself allows `null`.
 */

export const caseInsensitiveEnumKeyword = 'caseInsensitiveEnum';
export const timestampKeyword = 'rfc3339Timestamp';
export const countryCodeKeyword = 'isoCountryCode';
export const singleLineKeyword = 'singleLineText';
/** The format route schemas give a country field; the OpenAPI document shows it as is. */
export const countryCodeFormat = 'iso-3166-1-alpha-2';
/** Bounds of a free-form JSON value (metadata): `{ depthMax, bytesMax }`. */
export const jsonLimitsKeyword = 'x-json-limits';

type SchemaNode = Record<string, unknown>;

function isSchemaNode(value: unknown): value is SchemaNode {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function declaresString(schema: SchemaNode): boolean {
  return schema.type === 'string' || (Array.isArray(schema.type) && schema.type.includes('string'));
}

/** A copy of the schema with string enums, date-times and country codes replaced by the keywords above, and every string single-line. */
export function prepareRequestSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(prepareRequestSchema);
  if (!isSchemaNode(schema)) return schema;
  const prepared: SchemaNode = {};
  for (const [key, value] of Object.entries(schema)) prepared[key] = prepareRequestSchema(value);
  if (Array.isArray(prepared.enum) && prepared.enum.every((value) => typeof value === 'string')) {
    prepared[caseInsensitiveEnumKeyword] = prepared.enum;
    delete prepared.enum;
  }
  if (prepared.format === 'date-time') {
    delete prepared.format;
    prepared[timestampKeyword] = true;
  }
  if (prepared.format === countryCodeFormat) {
    delete prepared.format;
    prepared[countryCodeKeyword] = true;
  }
  if (declaresString(prepared) && prepared.contentEncoding !== 'base64') prepared[singleLineKeyword] = true;
  return prepared;
}

function allowsNull(schema: unknown): boolean {
  if (!isSchemaNode(schema)) return false;
  if (schema.type === 'null' || (Array.isArray(schema.type) && schema.type.includes('null'))) return true;
  const branches: unknown[] = [...(Array.isArray(schema.anyOf) ? (schema.anyOf as unknown[]) : []), ...(Array.isArray(schema.oneOf) ? (schema.oneOf as unknown[]) : [])];
  return branches.some(allowsNull);
}

type Mutation = (data: unknown) => void;

/**
 * The function that deletes optional properties sent as `null`, following the schema's declared properties (and
 * array items) only: free-form values such as metadata keep their nulls. Undefined when the schema has none.
 */
export function nullAsAbsent(schema: unknown): Mutation | undefined {
  if (!isSchemaNode(schema)) return undefined;
  if (isSchemaNode(schema.items)) {
    const each = nullAsAbsent(schema.items);
    return each && ((data) => Array.isArray(data) && data.forEach(each));
  }
  if (!isSchemaNode(schema.properties)) return undefined;
  const required = new Set(Array.isArray(schema.required) ? schema.required : []);
  const steps: Array<{ key: string; dropNull: boolean; inner: Mutation | undefined }> = [];
  for (const [key, property] of Object.entries(schema.properties)) {
    const dropNull = !required.has(key) && !allowsNull(property);
    const inner = nullAsAbsent(property);
    if (dropNull || inner) steps.push({ key, dropNull, inner });
  }
  if (steps.length === 0) return undefined;
  return (data) => {
    if (!isSchemaNode(data)) return;
    for (const { key, dropNull, inner } of steps) {
      if (data[key] === null && dropNull) delete data[key];
      else if (inner && data[key] !== undefined) inner(data[key]);
    }
  };
}

/** The canonical value of a case-insensitive enum, or undefined. */
export function canonicalEnumValue(values: readonly string[], text: string): string | undefined {
  const exact = values.find((value) => value === text);
  if (exact !== undefined) return exact;
  const folded = text.toLowerCase();
  return values.find((value) => value.toLowerCase() === folded);
}

/** Nesting depth of a JSON value (a scalar is 0), counted without recursion and without going past `limit + 1`. */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const pending: Array<{ value: unknown; depth: number }> = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const item of Object.values(current)) pending.push({ value: item, depth: depth + 1 });
  }
  return false;
}
