import type { FastifyReply, FastifyRequest } from 'fastify';
import { dashboardNoticeCookieMaxAgeSeconds, dashboardNoticeLengthMax } from '../../config/limits.js';
import { cookieSecure } from '../page-headers.js';
import type { WebServices } from './services.js';
import { sessionBinding } from './session.js';

/**
 * The notice of a form that succeeded ("Saved."), carried across its 303 redirect to the page that shows it
 * (Post/Redirect/Get: docs/dashboard.md "Forms"). It travels in a short-lived cookie signed with the form-token key
 * and bound to the session, so any instance can show it, another session's cookie shows nothing, and a page can
 * not be made to say what the server did not.
 */
const noticeCookie = 'customer_api_notice';

const cookieOptions = (request: FastifyRequest, maxAgeSeconds: number) => ({
  path: '/dashboard',
  httpOnly: true,
  secure: cookieSecure(request),
  sameSite: 'strict' as const,
  maxAge: maxAgeSeconds,
});

const signature = (services: WebServices, request: FastifyRequest, encoded: string) => services.formTokens.issue(`notice:${sessionBinding(request.dashboard!)}:${encoded}`);

/** Redirects (303) to `location`, the next page showing `notice`. */
export function redirectWithNotice(services: WebServices, request: FastifyRequest, reply: FastifyReply, location: string, notice: string) {
  const encoded = Buffer.from(notice.slice(0, dashboardNoticeLengthMax), 'utf8').toString('base64url');
  reply.setCookie(noticeCookie, `${encoded}.${signature(services, request, encoded)}`, cookieOptions(request, dashboardNoticeCookieMaxAgeSeconds));
  return reply.redirect(location, 303);
}

/** The notice waiting for this page, if any; shown once (the cookie is cleared). */
export function takeNotice(services: WebServices, request: FastifyRequest, reply: FastifyReply): string | undefined {
  const value = request.cookies[noticeCookie];
  if (value === undefined || !request.dashboard) return undefined;
  reply.clearCookie(noticeCookie, cookieOptions(request, 0));
  const [encoded = '', presented] = value.split('.');
  if (!services.formTokens.verify(`notice:${sessionBinding(request.dashboard)}:${encoded}`, presented)) return undefined;
  return Buffer.from(encoded, 'base64url').toString('utf8');
}
