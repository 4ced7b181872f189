import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * Headers of every browser page (dashboard, hosted onboarding and the API reference at /docs): a
 * Content-Security-Policy that runs only this server's own script and style files (no inline script or style, no
 * eval), submits forms only here and forbids framing (clickjacking); the same in X-Frame-Options for old browsers;
 * no Referer, so a sign-in or onboarding token in the URL never leaves in one.
 */
const pageDirectives: Readonly<Record<string, string>> = {
  'default-src': "'none'",
  'script-src': "'self'",
  'style-src': "'self'",
  'img-src': "'self'",
  'connect-src': "'self'",
  'form-action': "'self'",
  'frame-ancestors': "'none'",
  'base-uri': "'none'",
};

/** The pages' policy, with the directives a page needs otherwise (each override says why where it is made). */
export function contentSecurityPolicy(overrides: Readonly<Record<string, string>> = {}): string {
  return Object.entries({ ...pageDirectives, ...overrides }).map(([name, value]) => `${name} ${value}`).join('; ');
}

const pageContentSecurityPolicy = contentSecurityPolicy();

export function installPageHeaders(context: FastifyInstance, policy = pageContentSecurityPolicy): void {
  context.addHook('onSend', async (_request, reply) => {
    // A response that names a stricter or its own policy (a stored document, a page with a customer's logo) keeps it.
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', policy);
    reply.header('x-frame-options', 'DENY');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('cross-origin-opener-policy', 'same-origin');
  });
}

const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Cookies are Secure except over plain HTTP to this machine (a newcomer's http://localhost:3000). */
export function cookieSecure(request: FastifyRequest): boolean {
  return request.protocol === 'https' || !loopbackHosts.has(request.hostname.toLowerCase());
}
