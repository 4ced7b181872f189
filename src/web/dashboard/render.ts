import type { FastifyReply, FastifyRequest } from 'fastify';
import { show } from '../show.js';
import { FormState } from '../form.js';
import { takeNotice } from './notices.js';
import type { WebServices } from './services.js';
import { sessionBinding } from './session.js';

const sections = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/api-keys', label: 'API keys' },
  { href: '/dashboard/accounts', label: 'Accounts' },
  { href: '/dashboard/transactions', label: 'Transactions' },
  { href: '/dashboard/end-users', label: 'End users' },
  { href: '/dashboard/payees', label: 'Payees' },
  { href: '/dashboard/otc', label: 'OTC exchange' },
  { href: '/dashboard/webhooks', label: 'Webhooks' },
  { href: '/dashboard/events', label: 'Events' },
  { href: '/dashboard/settings', label: 'Settings' },
];

/** The section a path belongs to: the longest section path it starts with. */
function currentSection(path: string): string {
  return sections.filter((section) => path === section.href || path.startsWith(`${section.href}/`)).sort((a, b) => b.href.length - a.href.length)[0]?.href ?? '';
}

/**
 * What the layout of a signed-in page needs: `title` aside, `nav`, `email`, `csrf` (the form token every POST
 * form must carry as `_csrf`), `sandbox` (simulation buttons shown) and `now` (ISO time, for "expires" texts).
 * Empty when signed out (sign-in pages, errors before the session is known).
 */
export function layoutData(services: WebServices, request: FastifyRequest): Record<string, unknown> {
  const session = request.dashboard;
  if (!session) return {};
  const current = currentSection(request.url.split('?')[0] ?? '');
  return {
    nav: sections.map((section) => ({ ...section, current: section.href === current })),
    email: session.email,
    csrf: services.formTokens.issue(sessionBinding(session)),
    sandbox: services.config.apiEnvironment === 'sandbox',
    now: services.clock.now().toISOString(),
  };
}

/**
 * Renders a signed-in page inside the layout, with `data`, the layout's own (layoutData) and the formatters (`show`); the notice of the form
 * that redirected here, unless `data` has its own; `form` (FormState) empty unless `data` has a refused one.
 */
export function renderPage(services: WebServices, request: FastifyRequest, reply: FastifyReply, template: string, title: string, data: Record<string, unknown> = {}, status = 200) {
  const notice = data.notice ?? takeNotice(services, request, reply);
  // A fresh form (nothing typed, no problems) unless the page shows a refused one.
  return reply.code(status).view(template, { form: new FormState(), ...data, notice, title, show, ...layoutData(services, request) });
}
