import type { FastifyInstance } from 'fastify';
import { DomainError, type FieldError } from '../errors.js';
import { InvalidInputError, InvalidInputErrors } from '../modules/customers/index.js';

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

/**
 * A field of a form as a person sees it: its label, and where its problems come from — the API body's field paths
 * (`/eventTypes`, which also takes `/eventTypes/0`) and the operator services' option names (`--allow-ip`).
 */
interface FieldLabel {
  label: string;
  paths?: readonly string[];
  /** The input's id when it is not the field's name (two forms on one page). */
  id?: string;
}

/** A form's fields by input name (which is also the input's id), for refused forms to put each problem by its field. */
export type FieldLabels = Readonly<Record<string, FieldLabel>>;

/** One problem of a refused form: the field it belongs to (none: the form's as a whole) and what is wrong, in words. */
export interface FieldProblem {
  field?: string;
  message: string;
}

/** "counterpartyName" or "counterparty_name" → "Counterparty name": a field no label names still reads as words. */
function words(name: string): string {
  const spaced = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replaceAll('_', ' ').toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** The form field of an API path or option name, if the labels name one. */
function fieldOf(path: string, labels: FieldLabels): string | undefined {
  return Object.entries(labels).find(([, field]) => (field.paths ?? []).some((known) => path === known || path.startsWith(`${known}/`)))?.[0];
}

/** The problems an error of the API or of an operator service reports, each put by its field; undefined: no refusal. */
export function fieldProblems(error: unknown, labels: FieldLabels): FieldProblem[] | undefined {
  if (error instanceof InvalidInputError) {
    // The operator services (API keys) say what is wrong the way the CLI shows it: "--allow-ip "x" is not …".
    const each = error instanceof InvalidInputErrors ? error.problems : [error];
    return each.map((problem) => {
      const option = /^(--[a-z-]+):? /.exec(problem.message)?.[1];
      const field = option === undefined ? undefined : fieldOf(option, labels);
      return { ...(field !== undefined ? { field } : {}), message: problem.message.replace(/^--[a-z-]+:? /, '') };
    });
  }
  if (!(error instanceof DomainError) || error.statusCode >= 500) return undefined;
  const fields = (error.details as { fields?: FieldError[] } | undefined)?.fields;
  if (!fields || fields.length === 0) return [{ message: error.message }];
  return fields.map((problem) => {
    const field = fieldOf(problem.path, labels);
    if (field !== undefined) return { field, message: problem.reason };
    // A path no field names (a query parameter, a field of a form without labels) in words, never as a pointer.
    const name = problem.path.split('/').filter((segment) => segment !== '' && !/^\d+$/.test(segment)).pop();
    return { message: name === undefined ? problem.reason : `${words(name)}: ${problem.reason}` };
  });
}

/**
 * A form as its page shows it: what was typed (kept when the form is refused, empty on a fresh form) and every
 * problem at once, each next to its field (`aria-invalid`, `aria-describedby` naming its message) and all of them
 * listed at the top, linked to their fields. Every form template takes one as `it.form`
 * (views/field-problem.eta; docs/dashboard.md "Forms").
 */
export class FormState {
  constructor(
    readonly sent: FormBody = {},
    readonly problems: readonly FieldProblem[] = [],
    private readonly labels: FieldLabels = {},
  ) {}

  /** A field's text as typed ('' when not sent; `fallback`: on a fresh form, what the field starts with). */
  value(name: string, fallback = ''): string {
    if (Object.keys(this.sent).length === 0) return fallback;
    const raw = this.sent[name];
    return (Array.isArray(raw) ? raw[0] : raw) ?? '';
  }

  /** Whether a checkbox or radio of this value was sent (`fallback`: on a fresh form, whether it starts ticked). */
  has(name: string, value: string, fallback = false): boolean {
    if (Object.keys(this.sent).length === 0) return fallback;
    const raw = this.sent[name];
    return (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).includes(value);
  }

  /** The messages of one field. */
  problemsOf(name: string): string[] {
    return this.problems.filter((problem) => problem.field === name).map((problem) => problem.message);
  }

  /** The id of a field's input. */
  idOf(name: string): string {
    return this.labels[name]?.id ?? name;
  }

  /** The id of a field's message, which its input names in aria-describedby. */
  problemId(name: string): string {
    return `${this.idOf(name)}-problem`;
  }

  /** The attributes of an input whose field has problems; '' otherwise. Names are the form's own, never typed text. */
  invalidAttributes(name: string): string {
    return this.problemsOf(name).length === 0 ? '' : ` aria-invalid="true" aria-describedby="${this.problemId(name)}"`;
  }

  /** The list at the top of the page: each problem in words with its field's label, linked to the field. */
  get summary(): Array<{ text: string; href?: string }> {
    return this.problems.map((problem) => {
      const label = problem.field === undefined ? undefined : (this.labels[problem.field]?.label ?? words(problem.field));
      return label === undefined || problem.field === undefined ? { text: problem.message } : { text: `${label}: ${problem.message}`, href: `#${this.idOf(problem.field)}` };
    });
  }
}

/** A form refused before it reached a service (a choice missing), with the problems the page found itself. */
export function refuseForm(sent: FormBody, labels: FieldLabels, problems: FieldProblem[], status = 400): { form: FormState; problems: FormState['summary']; status: number } {
  // One field may stand for several API paths (a business's address is also its director's): each problem once.
  const distinct = problems.filter((problem, index) => problems.findIndex((other) => other.field === problem.field && other.message === problem.message) === index);
  const form = new FormState(sent, distinct, labels);
  return { form, problems: form.summary, status };
}

/**
 * A refused form, kept as typed, with each of the error's problems by its field; undefined when the error is no
 * refusal of the form (an unknown or another customer's id stays the 404 page; a fault stays a fault).
 */
export function refusedForm(error: unknown, sent: FormBody, labels: FieldLabels): { form: FormState; problems: FormState['summary']; status: number } | undefined {
  if (error instanceof DomainError && error.code === 'NOT_FOUND') return undefined;
  const problems = fieldProblems(error, labels);
  return problems && refuseForm(sent, labels, problems, error instanceof DomainError ? error.statusCode : 400);
}

/** The forms of a page that has several (`it.forms.<name>`): each fresh, but the one refused as it was sent. */
export function pageForms<Name extends string>(names: readonly Name[], refused?: { name: Name; form: FormState }): Record<Name, FormState> {
  const forms = Object.fromEntries(names.map((name) => [name, new FormState()])) as Record<Name, FormState>;
  if (refused) forms[refused.name] = refused.form;
  return forms;
}

/** What a refused form shows, as lines of words ("Url: must be an https URL"); see FormState for forms with fields. */
export function formProblems(error: unknown): string[] | undefined {
  return fieldProblems(error, {})?.map((problem) => problem.message);
}

/**
 * A refused action or form shows its reasons on the page, with the API's status (400 not valid, 422 not possible
 * now); an unknown (or another customer's) id is no form problem: it stays the 404 page. Forms with fields use
 * refusedForm, which also puts each problem by its field.
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
