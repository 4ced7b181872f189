import type { FastifyReply, FastifyRequest } from 'fastify';
import type { WebServices } from './services.js';
import { sessionBinding } from './session.js';

const sections = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/api-keys', label: 'API keys' },
  { href: '/dashboard/accounts', label: 'Accounts' },
  { href: '/dashboard/transactions', label: 'Transactions' },
  { href: '/dashboard/end-users', label: 'End users' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/events', label: 'Events' },
];

/** The section a path belongs to: the longest section path it starts with. */
function currentSection(path: string): string {
  return sections.filter((section) => path === section.href || path.startsWith(`${section.href}/`)).sort((a, b) => b.href.length - a.href.length)[0]?.href ?? '';
}

/**
 * Renders a signed-in page inside the layout. Every template gets, besides `data`: `title`, `nav`, `email`,
 * `csrf` (the form token every POST form must carry as `_csrf`), `sandbox` (simulation buttons shown) and
 * `now` (ISO time, for "expires in" texts).
 */
export function renderPage(services: WebServices, request: FastifyRequest, reply: FastifyReply, template: string, title: string, data: Record<string, unknown> = {}, status = 200) {
  const session = request.dashboard!;
  const current = currentSection(request.url.split('?')[0] ?? '');
  return reply.code(status).view(template, {
    ...data,
    title,
    nav: sections.map((section) => ({ ...section, current: section.href === current })),
    email: session.email,
    csrf: services.formTokens.issue(sessionBinding(session)),
    sandbox: services.config.apiEnvironment === 'sandbox',
    now: services.clock.now().toISOString(),
  });
}
