import { dashboardReturnPathLengthMax } from '../../config/limits.js';

const home = '/dashboard';
const base = 'http://dashboard.invalid';
/** Pages not worth returning to: they sign in, out or choose a password, or show a secret once. */
const noReturn = /^\/dashboard\/(sign-in|sign-out|link|reveal)(\/|$)/;

/**
 * Where sign-in returns to (docs/dashboard.md "Getting in"): the dashboard page first asked for, given only as a
 * path of this site under /dashboard — never another site (`//evil.example`, `https://…`, `/\evil.example` and
 * such resolve elsewhere and are dropped), never sign-in itself. Anything else returns to the overview.
 */
export function returnPath(text: string | undefined): string {
  if (text === undefined || text.length > dashboardReturnPathLengthMax || !text.startsWith('/') || /[\\\p{Cc}\s]/u.test(text)) return home;
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    return home;
  }
  if (url.origin !== base || !(url.pathname === home || url.pathname.startsWith(`${home}/`)) || noReturn.test(url.pathname)) return home;
  // Rebuilt from the parsed parts, so what is sent back is exactly what was checked.
  return `${url.pathname}${url.search}`;
}

/** The sign-in address that returns to `path` afterwards (the overview needs no `next`). */
export function signInPathFor(path: string): string {
  const target = returnPath(path);
  return target === home ? '/dashboard/sign-in' : `/dashboard/sign-in?${new URLSearchParams({ next: target }).toString()}`;
}
