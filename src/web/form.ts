import type { FastifyInstance } from 'fastify';
import { DomainError, type FieldError } from '../errors.js';
import { InvalidInputError } from '../modules/customers/index.js';

/** A parsed urlencoded form: each field a string, or an array when it was sent several times (checkboxes). */
export type FormBody = Record<string, string | string[] | undefined>;

/**
 * The pages take form bodies only. The API's JSON parser is inherited from the root context, and a JSON body would
 * reach the handlers with numbers and objects where a form only ever has strings (a 500 in formText): here it is
 * refused before any handler runs, like every other body that is not a form (415 page).
 */
export function refuseJsonBodies(context: FastifyInstance): void {
  context.removeContentTypeParser('application/json');
}

export function formOf(body: unknown): FormBody {
  return body !== null && typeof body === 'object' ? (body as FormBody) : {};
}

/** One text field, trimmed; undefined when absent or empty (an empty input means "not given"). */
export function formText(form: FormBody, name: string): string | undefined {
  const raw = form[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/** A number typed in a form as the JSON number the API takes; anything else stays text for the schema to refuse. */
export function formNumber(text: string | undefined): number | string | undefined {
  return text !== undefined && /^-?\d{1,15}(\.\d{1,15})?$/.test(text) ? Number(text) : text;
}

/** Every value of a repeated field (checkboxes), or the lines of a textarea when `lines` is set; empties dropped. */
export function formList(form: FormBody, name: string, options: { lines?: boolean } = {}): string[] {
  const raw = form[name];
  const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  const split = options.lines ? values.flatMap((value) => value.split(/[\r\n,]+/)) : values;
  return split.map((value) => value.trim()).filter((value) => value !== '');
}

/** What a refused form shows: the API's own field errors, in words ("url: must be an https URL"). */
export function formProblems(error: unknown): string[] | undefined {
  // The operator services (API keys) say what is wrong the way the CLI shows it.
  if (error instanceof InvalidInputError) return [error.message.replace(/^--[a-z-]+ /, '')];
  if (!(error instanceof DomainError) || error.statusCode >= 500) return undefined;
  const fields = (error.details as { fields?: FieldError[] } | undefined)?.fields;
  if (!fields || fields.length === 0) return [error.message];
  return fields.map((field) => `${field.path.replace(/^\//, '').replaceAll('/', '.') || 'form'}: ${field.reason}`);
}

/**
 * A refused action or form shows its reasons on the page, with the API's status (400 not valid, 422 not possible
 * now); an unknown (or another customer's) id is no form problem: it stays the 404 page.
 */
export function formRefusal(error: unknown): { problems: string[]; status: number } | undefined {
  if (error instanceof DomainError && error.code === 'NOT_FOUND') return undefined;
  const problems = formProblems(error);
  return problems && { problems, status: error instanceof DomainError ? error.statusCode : 400 };
}

/** A datetime-local value has no zone (the labels say UTC); anything else goes on as typed, for the schema to judge. */
export function utcFromLocalInput(local: string): string {
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})(:\d{2}(?:\.\d{1,3})?)?$/.exec(local);
  return match ? `${match[1]}${match[2] ?? ':00'}Z` : local;
}
