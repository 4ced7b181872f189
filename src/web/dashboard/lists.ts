import { Type } from 'typebox';
import { pageLimitDefault, pageLimitMax, pageMax } from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import { bodyChecker } from '../../http/validation.js';
import { formOf, formProblems, formText } from '../form.js';

/** A list page's own paging (lists the API does not page): as the API's, a larger limit is clamped, not refused. */
export const checkPageQuery = bodyChecker<{ page?: number; limit?: number }>(
  Type.Object(
    {
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax })),
      limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
    },
    { additionalProperties: false },
  ),
);

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

/** A page number of a page with several lists (`fiat_page=2`): 1 when absent, the 400 page when not a page number. */
export function pageNumberOf(query: unknown, name: string): number {
  const text = formText(formOf(query), name);
  if (text === undefined) return 1;
  if (!/^\d{1,10}$/.test(text) || Number(text) < 1 || Number(text) > pageMax) {
    throw new DomainError('VALIDATION_ERROR', `This page address is not valid: ${name}: must be a page number from 1 to ${pageMax}.`);
  }
  return Number(text);
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
 * chose it in their order; `page` (or `pageParameter`, where one page has several lists) takes its place among them
 * if listed there, else it comes last.
 */
export function pagerOf(path: string, pagination: { page: number; limit: number; total: number }, keep: Record<string, string | undefined>, pageParameter = 'page'): Pager {
  const { page, limit, total } = pagination;
  const pages = Math.max(1, Math.ceil(total / limit));
  const href = (target: number) => {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries({ ...keep, [pageParameter]: String(target) })) if (value !== undefined) params.set(name, value);
    return `${path}?${params.toString()}`;
  };
  return { page, pages, total, previous: page > 1 ? href(Math.min(page - 1, pages)) : undefined, next: page < pages ? href(page + 1) : undefined };
}
