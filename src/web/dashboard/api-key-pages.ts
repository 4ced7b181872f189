import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiKeyNameLengthMax } from '../../config/limits.js';
import { checkExpiresAt, keyInputProblems } from '../../modules/api-keys/index.js';
import { scopeResources } from '../../modules/api-keys/index.js';
import { fieldProblems, formList, formOf, formText, refuseForm, refusedForm, utcFromLocalInput, type FieldLabels, type FieldProblem } from '../form.js';
import { pageRoute } from '../page-route.js';
import { redirectWithNotice } from './notices.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

/** The create form's fields, and the option names by which the key service names them (as the CLI's). */
const keyFields: FieldLabels = {
  name: { label: 'Name', paths: ['--name'] },
  access: { label: 'Access' },
  scopes: { label: 'Scopes', paths: ['--scope'] },
  allowed_ips: { label: 'IP allow-list', paths: ['--allow-ip'] },
  expires_at: { label: 'Expires at', paths: ['--expires-at'] },
};

/** API keys (docs/spec.md §5.2: "keys are issued from the customer dashboard"): list, create (shown once), revoke. */
export function apiKeyPages(context: FastifyInstance, services: WebServices): void {
  const list = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) =>
    renderPage(services, request, reply, '/dashboard/api-keys', 'API keys', {
      keys: (await services.apiKeys.list(request.dashboard!.customerId)).reverse(),
      resources: scopeResources,
      nameLengthMax: apiKeyNameLengthMax,
      ...extra,
    }, status);

  context.get('/api-keys', pageRoute, async (request, reply) => list(request, reply));

  context.post('/api-keys', pageRoute, async (request, reply) => {
    const form = formOf(request.body);
    // Every problem at once: the form's own (a choice missing, an expiry past) and the key service's.
    const problems: FieldProblem[] = [];
    const chosenScopes = formList(form, 'scopes');
    const everything = formText(form, 'access') === 'all';
    if (!everything && chosenScopes.length === 0) problems.push({ field: 'scopes', message: 'tick at least one scope, or choose "Everything"' });
    // Ticked scopes under "Everything" are ambiguous: a narrow key was probably meant; never widen it silently.
    if (everything && chosenScopes.length > 0) problems.push({ field: 'scopes', message: 'choose "Only the scopes ticked below" to limit the key, or untick the scopes for "Everything"' });
    // A datetime-local input has no zone; the label says UTC.
    const typedExpiry = formText(form, 'expires_at');
    let expiresAt: string | undefined;
    try {
      expiresAt = typedExpiry === undefined ? undefined : checkExpiresAt(utcFromLocalInput(typedExpiry));
    } catch (error) {
      problems.push(...(fieldProblems(error, keyFields) ?? []));
    }
    if (expiresAt !== undefined && Date.parse(expiresAt) <= services.clock.now().getTime()) problems.push({ field: 'expires_at', message: 'must be in the future' });
    const name = formText(form, 'name');
    const input = {
      ...(name !== undefined ? { name } : {}),
      scopes: everything ? ['*'] : chosenScopes,
      allowedIps: formList(form, 'allowed_ips', { lines: true }),
      ...(expiresAt !== undefined ? { expiresAt } : {}),
    };
    problems.push(...(fieldProblems(keyInputProblems(input), keyFields) ?? []));
    if (problems.length > 0) {
      const refused = refuseForm(form, keyFields, problems);
      return list(request, reply, refused, refused.status);
    }
    let created;
    try {
      created = await services.apiKeys.create({ customerId: request.dashboard!.customerId, ...input });
    } catch (error) {
      const refused = refusedForm(error, form, keyFields);
      if (!refused) throw error;
      return list(request, reply, refused, refused.status);
    }
    // The key is shown once, on its reveal page: a reload there (or here) makes no second key.
    const revealId = await services.reveals.store(request.dashboard!, 'api_key', created.id, created.key);
    return redirectWithNotice(services, request, reply, `/dashboard/reveal/${revealId}`, `Key ${created.prefix}…${created.name === null ? '' : ` (${created.name})`} created.`);
  });

  context.post<{ Params: { keyId: string } }>('/api-keys/:keyId/revoke', pageRoute, async (request, reply) => {
    const revoked = await services.apiKeys.revokeOwn(request.dashboard!.customerId, request.params.keyId);
    const name = revoked.name === null ? '' : ` (${revoked.name})`;
    return redirectWithNotice(services, request, reply, '/dashboard/api-keys', `Key ${revoked.prefix}…${name} is revoked; requests with it are refused from now on.`);
  });
}
