import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardSignInAttemptsMax, dashboardSignInWindowMs } from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import { addressKey } from '../../http/rate-limit.js';
import type { DashboardUserRow } from '../../modules/dashboard-users/index.js';
import { FormState, formOf, formProblems, formText, refusedForm, type FieldLabels } from '../form.js';
import { pageRoute, signedOutPageRoute } from '../page-route.js';
import { returnPath } from './return-path.js';
import type { WebServices } from './services.js';
import { clearSessionCookie, sessionCookie, setSessionCookie, signedOutBinding } from './session.js';

const passwordLabels: FieldLabels = { password: { label: 'New password', paths: ['/password'] } };

/**
 * Sign-in, the one-time link on which a user chooses a password, and sign-out (docs/dashboard.md). Sign-in
 * attempts are limited per client address and per email address, in Redis when REDIS_URL is set.
 */
export function signInPages(context: FastifyInstance, services: WebServices): void {
  const limiter = (scope: string, keyOf: (request: FastifyRequest) => string) =>
    context.createRateLimit({ max: dashboardSignInAttemptsMax, timeWindow: dashboardSignInWindowMs, keyGenerator: (request) => `sign-in-${scope}:${keyOf(request)}` });
  const perAddress = limiter('address', (request) => addressKey(request.ip));
  const perEmail = limiter('email', (request) => (formText(formOf(request.body), 'email') ?? '').toLowerCase().slice(0, 254));

  /** The sign-in form; `next` (the page to return to, already checked) rides along in a hidden field. */
  const signInForm = (request: FastifyRequest, reply: FastifyReply, status: number, data: { email?: string; problems?: string[]; next: string }) =>
    reply.code(status).view('/dashboard/sign-in', { title: 'Sign in', csrf: services.formTokens.issue(signedOutBinding(request, reply)), ...data, next: data.next === '/dashboard' ? undefined : data.next });

  /** A new session id, whatever cookie the browser came with: the old session (if any) ends here. */
  async function startSession(request: FastifyRequest, reply: FastifyReply, user: DashboardUserRow, next = '/dashboard') {
    const previous = await services.users.resumeSession(request.cookies[sessionCookie]);
    if (previous) await services.users.endSession(previous);
    const { sessionId } = await services.users.startSession(user);
    setSessionCookie(request, reply, sessionId, services.config.dashboardSessionMaxMs);
    return reply.redirect(next, 303);
  }

  context.get('/sign-in', signedOutPageRoute, async (request, reply) => signInForm(request, reply, 200, { next: returnPath(formText(formOf(request.query), 'next')) }));

  context.post('/sign-in', signedOutPageRoute, async (request, reply) => {
    const form = formOf(request.body);
    const email = formText(form, 'email') ?? '';
    const next = returnPath(formText(form, 'next'));
    for (const check of [perAddress, perEmail]) {
      const limit = await check(request);
      if (!limit.isAllowed && limit.isExceeded) {
        reply.header('retry-after', Math.max(1, Math.ceil(limit.ttl / 1000)));
        return signInForm(request, reply, 429, { email, next, problems: [`Too many sign-in attempts. Try again in ${Math.ceil(limit.ttl / 60_000)} minutes.`] });
      }
    }
    try {
      return await startSession(request, reply, await services.users.signIn(email, typeof form.password === 'string' ? form.password : ''), next);
    } catch (error) {
      const problems = formProblems(error);
      if (!problems) throw error;
      return signInForm(request, reply, (error as DomainError).statusCode, { email, next, problems });
    }
  });

  const linkForm = (request: FastifyRequest, reply: FastifyReply, status: number, email: string, refused?: { form: FormState; problems: FormState['summary'] }) =>
    reply.code(status).view('/dashboard/choose-password', { title: 'Choose a password', email, form: new FormState(), ...refused, csrf: services.formTokens.issue(signedOutBinding(request, reply)) });

  context.get<{ Params: { token: string } }>('/link/:token', signedOutPageRoute, async (request, reply) => {
    const user = await services.users.linkUser(request.params.token);
    if (!user) throw new DomainError('NOT_FOUND', 'This sign-in link has been used or has expired. Ask your operator for a new one.');
    return linkForm(request, reply, 200, user.email);
  });

  context.post<{ Params: { token: string } }>('/link/:token', signedOutPageRoute, async (request, reply) => {
    const form = formOf(request.body);
    const password = typeof form.password === 'string' ? form.password : '';
    const confirmation = typeof form.password_confirmation === 'string' ? form.password_confirmation : '';
    try {
      return await startSession(request, reply, await services.users.setPasswordWithLink(request.params.token, password, confirmation));
    } catch (error) {
      const user = error instanceof DomainError && error.code === 'VALIDATION_ERROR' ? await services.users.linkUser(request.params.token) : undefined;
      // Passwords are never sent back into the page: the form keeps nothing typed, and says what is wrong by the field.
      const refused = user && refusedForm(error, {}, passwordLabels);
      if (!user || !refused) throw error;
      return linkForm(request, reply, 400, user.email, refused);
    }
  });

  context.post('/sign-out', pageRoute, async (request, reply) => {
    await services.users.endSession(request.dashboard!);
    clearSessionCookie(request, reply);
    // Back after sign-out must not show a page from the browser's memory (Chrome's back/forward cache keeps even
    // no-store pages in some versions).
    reply.header('clear-site-data', '"cache"');
    return reply.redirect('/dashboard/sign-in', 303);
  });
}
