import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RefusalLimit } from './rate-limit.js';
import { unauthenticated, type ApiKeyService, type AuthenticatedKey } from '../modules/api-keys/index.js';
import { requireScope, type Scope } from '../modules/api-keys/index.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answered without an API key (health, readiness, metrics, API reference). Routes are private by default. */
    public?: boolean;
    /** The scope the key must hold (DESIGN §3), or several of which one suffices (the service then checks further). */
    scope?: Scope | readonly Scope[];
  }
  interface FastifyRequest {
    apiKey: AuthenticatedKey | null;
  }
}

/** How often a header appears in the request as sent (Node keeps only the first Authorization of several). */
function occurrences(request: FastifyRequest, name: string): number {
  const raw = request.raw.rawHeaders;
  let count = 0;
  for (let index = 0; index < raw.length; index += 2) if (raw[index]?.toLowerCase() === name) count += 1;
  return count;
}

/**
 * Spec §5 rule 1: the key comes as `x-api-key` or `Authorization: Bearer` (docs/authentication.md). An Authorization
 * header of another scheme (a gateway's `Basic …`) is not a credential of ours: beside an `x-api-key` it is ignored,
 * alone it is a missing key. Two credentials that could disagree are ambiguous and refused like any bad key: an
 * `x-api-key` and a Bearer token that differ, or either header sent twice.
 */
function presentedKey(request: FastifyRequest): string | undefined {
  if (occurrences(request, 'x-api-key') > 1 || occurrences(request, 'authorization') > 1) throw unauthenticated();
  const headerKey = request.headers['x-api-key'];
  if (Array.isArray(headerKey)) throw unauthenticated();
  const authorization = request.headers.authorization;
  let bearer: string | undefined;
  if (authorization !== undefined && /^bearer(\s|$)/i.test(authorization)) {
    const match = /^Bearer[ ]+(\S+)[ ]*$/i.exec(authorization);
    if (!match) throw unauthenticated();
    bearer = match[1];
  }
  if (headerKey !== undefined && bearer !== undefined && headerKey !== bearer) throw unauthenticated();
  return headerKey ?? bearer;
}

/** The authenticated key of a request on a private route (set by the hook below). */
export function callerOf(request: FastifyRequest): AuthenticatedKey {
  if (request.apiKey === null) throw unauthenticated();
  return request.apiKey;
}

/** Refusals (401/403) are answered through `limitRefusal`: past the refused-authentication limit, 429 instead. */
export function installAuthentication(app: FastifyInstance, apiKeys: ApiKeyService, limitRefusal: RefusalLimit): void {
  app.decorateRequest('apiKey', null);
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 || request.routeOptions.config.public) return;
    try {
      request.apiKey = await apiKeys.authenticate(presentedKey(request), request.ip);
      const scope = request.routeOptions.config.scope;
      if (scope !== undefined) requireScope(request.apiKey.scopes, scope);
    } catch (error) {
      throw await limitRefusal(request, reply, error);
    }
  });
}
