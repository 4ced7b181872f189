import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import type { DashboardSession } from '../../modules/dashboard-users/index.js';
import { DomainError } from '../../errors.js';
import { cookieSecure } from '../page-headers.js';
import { signInPathFor } from './return-path.js';
import type { WebServices } from './services.js';
import { dashboardFormCookieMaxAgeSeconds, dashboardTokenRandomBytes } from '../../config/limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A dashboard page that works without a session (sign-in, sign-in link). */
    signedOut?: boolean;
  }
  interface FastifyRequest {
    /** The signed-in dashboard user and the customer they act for; null on signed-out pages. */
    dashboard: (DashboardSession & { caller: AuthenticatedKey }) | null;
  }
}

export const sessionCookie = 'customer_api_session';
/** Binds the CSRF token of the signed-out forms (sign-in, choose a password) to this browser. */
const formCookie = 'customer_api_form';
const cookiePath = '/dashboard';

function cookieOptions(request: FastifyRequest, maxAgeSeconds: number) {
  return { path: cookiePath, httpOnly: true, secure: cookieSecure(request), sameSite: 'strict' as const, maxAge: maxAgeSeconds };
}

export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, sessionId: string, maxAgeMs: number): void {
  reply.setCookie(sessionCookie, sessionId, cookieOptions(request, Math.floor(maxAgeMs / 1000)));
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply): void {
  reply.clearCookie(sessionCookie, cookieOptions(request, 0));
}

/** The signed-out forms' binding: the browser's form cookie, set here when it has none. */
export function signedOutBinding(request: FastifyRequest, reply: FastifyReply): string {
  let nonce = request.cookies[formCookie];
  if (nonce === undefined || !/^[A-Za-z0-9_-]{43}$/.test(nonce)) {
    nonce = randomBytes(dashboardTokenRandomBytes).toString('base64url');
    reply.setCookie(formCookie, nonce, cookieOptions(request, dashboardFormCookieMaxAgeSeconds));
  }
  return `signed-out:${nonce}`;
}

export const sessionBinding = (session: DashboardSession) => `session:${session.idHash}`;

/**
 * Every dashboard request: a page that needs a session gets it from the session cookie (never from an API key:
 * x-api-key and Authorization are not looked at here), or is sent to sign-in; every POST carries the form token
 * of its session or, signed out, of its form cookie.
 */
export function installSessionGuard(context: FastifyInstance, services: WebServices): void {
  context.decorateRequest('dashboard', null);
  context.addHook('preHandler', async (request, reply) => {
    const signedOut = request.routeOptions.config.signedOut === true;
    if (!signedOut) {
      const session = await services.users.resumeSession(request.cookies[sessionCookie]);
      const customer = session && (await services.customers.get(session.customerId));
      if (!session || !customer) {
        if (request.cookies[sessionCookie] !== undefined) clearSessionCookie(request, reply);
        // A page asked for is returned to after sign-in; a form sent without a session is not sent again.
        return reply.redirect(request.method === 'GET' ? signInPathFor(request.url) : '/dashboard/sign-in', 303);
      }
      const caller: AuthenticatedKey = { id: `dashboard:${session.userId}`, customerId: customer.id, frOwnerBusinessId: customer.fr_owner_business_id, scopes: ['*'] };
      request.dashboard = { ...session, caller };
    }
    if (request.method !== 'POST') return;
    const binding = request.dashboard ? sessionBinding(request.dashboard) : `signed-out:${request.cookies[formCookie] ?? ''}`;
    const presented = (request.body as Record<string, unknown> | undefined)?._csrf;
    if (!services.formTokens.verify(binding, presented)) throw new DomainError('CSRF_TOKEN_INVALID', 'The form token is missing or not valid.');
  });
}
