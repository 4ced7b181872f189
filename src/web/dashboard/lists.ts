import { DomainError } from '../../errors.js';
import { formOf, formProblems, formText } from '../form.js';

/**
 * A list page's query as the API's query schema takes it: an empty field (a filter's "any") is absent; page and
 * limit are numbers when they are digits (anything else is left for the schema to refuse, in words); the other
 * named filters stay text.
 */
export function listQuery(query: unknown, filterNames: readonly string[]): Record<string, unknown> {
  const raw = formOf(query);
  const fields: Record<string, unknown> = {};
  for (const name of ['page', 'limit', ...filterNames]) {
    const text = formText(raw, name);
    if (text === undefined) continue;
    fields[name] = (name === 'page' || name === 'limit') && /^\d{1,15}$/.test(text) ? Number(text) : text;
  }
  return fields;
}

/** A refused query answers the 400 page saying which parameter is wrong ("page: must be >= 1"). */
export function checkListQuery<T>(check: (data: unknown) => T, fields: Record<string, unknown>): T {
  try {
    return check(fields);
  } catch (error) {
    const problems = formProblems(error);
    if (!problems || !(error instanceof DomainError)) throw error;
    throw new DomainError('VALIDATION_ERROR', `This page address is not valid: ${problems.join('; ')}.`, error.details);
  }
}

export interface Pager {
  page: number;
  pages: number;
  total: number;
  previous: string | undefined;
  next: string | undefined;
}

/**
 * The links to the pages before and after this one (the `/dashboard/pager` template), keeping the parameters that
 * chose it in their order; `page` takes its place among them if listed there, else it comes last.
 */
export function pagerOf(path: string, pagination: { page: number; limit: number; total: number }, keep: Record<string, string | undefined>): Pager {
  const { page, limit, total } = pagination;
  const pages = Math.max(1, Math.ceil(total / limit));
  const href = (target: number) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...keep, page: String(target) })) if (value !== undefined) params.set(name, value);
    return `${path}?${params.toString()}`;
  };
  return { page, pages, total, previous: page > 1 ? href(Math.min(page - 1, pages)) : undefined, next: page < pages ? href(page + 1) : undefined };
}
