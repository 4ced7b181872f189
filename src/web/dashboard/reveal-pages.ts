import type { FastifyInstance } from 'fastify';
import { pageRoute } from '../page-route.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

const titles = { api_key: 'Your new key', webhook_secret: 'Signing secret of the new subscription', webhook_rotated_secret: 'The new signing secret' } as const;

/**
 * The single-use reveal (docs/dashboard.md "Forms"): the page a form that made a secret redirects to. It shows the
 * secret once and forgets it; a reload, the back button or the address opened later says it was already shown, and
 * creates nothing.
 */
export function revealPages(context: FastifyInstance, services: WebServices): void {
  context.get<{ Params: { token: string } }>('/reveal/:token', pageRoute, async (request, reply) => {
    const reveal = await services.reveals.take(request.dashboard!, request.params.token);
    if (!reveal) return renderPage(services, request, reply, '/dashboard/reveal', 'Already shown', { reveal: undefined }, 410);
    return renderPage(services, request, reply, '/dashboard/reveal', titles[reveal.kind], { reveal });
  });
}
