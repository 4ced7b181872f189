import type { FastifyInstance } from 'fastify';
import { pageRoute } from '../page-route.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

/** The landing page after sign-in: where things are, and in the sandbox, how to walk the whole flow. */
export function overviewPages(context: FastifyInstance, services: WebServices): void {
  context.get('/', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    const [keys, endUsers, accounts, webhooks] = await Promise.all([
      services.apiKeys.list(caller.customerId),
      services.endUsers.list(caller),
      services.fiatAccounts.list(caller),
      services.webhooks.list(caller),
    ]);
    return renderPage(services, request, reply, '/dashboard/overview', 'Overview', {
      counts: {
        keys: keys.filter((key) => key.revoked_at === null && (key.expires_at === null || key.expires_at > services.clock.now().toISOString())).length,
        endUsers: endUsers.length,
        accounts: accounts.length,
        webhooks: webhooks.length,
      },
      apiUrl: services.config.publicUrl,
    });
  });
}
