import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { checkExpiresAt } from '../../modules/api-keys/index.js';
import { scopeResources } from '../../modules/api-keys/index.js';
import { formList, formOf, formRefusal, formText, utcFromLocalInput } from '../form.js';
import { pageRoute } from '../page-route.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

/** API keys (spec §5.2: "keys are issued from the customer dashboard"): list, create (shown once), revoke. */
export function apiKeyPages(context: FastifyInstance, services: WebServices): void {
  const list = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) =>
    renderPage(services, request, reply, '/dashboard/api-keys', 'API keys', {
      keys: (await services.apiKeys.list(request.dashboard!.customerId)).reverse(),
      resources: scopeResources,
      ...extra,
    }, status);

  context.get<{ Querystring: { revoked?: unknown } }>('/api-keys', pageRoute, async (request, reply) => {
    // After a revocation (redirected here, so a reload does not post it again) the page says which key it was.
    const revokedId = request.query.revoked;
    const keys = await services.apiKeys.list(request.dashboard!.customerId);
    const revoked = typeof revokedId === 'string' ? keys.find((key) => key.id === revokedId && key.revoked_at !== null) : undefined;
    return list(request, reply, revoked ? { notice: `Key ${revoked.prefix}… is revoked; requests with it are refused from now on.` } : {});
  });

  context.post('/api-keys', pageRoute, async (request, reply) => {
    const form = formOf(request.body);
    // A datetime-local input has no zone; the label says UTC.
    const typedExpiry = formText(form, 'expires_at');
    const expiry = typedExpiry === undefined ? undefined : utcFromLocalInput(typedExpiry);
    const chosenScopes = formList(form, 'scopes');
    const everything = formText(form, 'access') === 'all';
    if (!everything && chosenScopes.length === 0) {
      return list(request, reply, { problems: ['scopes: tick at least one scope, or choose "Everything"'] }, 400);
    }
    // Ticked scopes under "Everything" are ambiguous: a narrow key was probably meant; never widen it silently.
    if (everything && chosenScopes.length > 0) {
      return list(request, reply, { problems: ['scopes: choose "Only the scopes ticked below" to limit the key, or untick the scopes for "Everything"'] }, 400);
    }
    if (expiry !== undefined && Date.parse(expiry) <= services.clock.now().getTime()) {
      return list(request, reply, { problems: ['expires_at: must be in the future'] }, 400);
    }
    try {
      const created = await services.apiKeys.create({
        customerId: request.dashboard!.customerId,
        scopes: everything ? ['*'] : chosenScopes,
        allowedIps: formList(form, 'allowed_ips', { lines: true }),
        ...(expiry !== undefined ? { expiresAt: checkExpiresAt(expiry) } : {}),
      });
      return await list(request, reply, { created }, 201);
    } catch (error) {
      const refused = formRefusal(error);
      if (!refused) throw error;
      return list(request, reply, { problems: refused.problems }, refused.status);
    }
  });

  context.post<{ Params: { keyId: string } }>('/api-keys/:keyId/revoke', pageRoute, async (request, reply) => {
    const revoked = await services.apiKeys.revokeOwn(request.dashboard!.customerId, request.params.keyId);
    return reply.redirect(`/dashboard/api-keys?revoked=${revoked.id}`, 303);
  });
}
