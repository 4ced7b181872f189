import type { FastifyInstance } from 'fastify';
import type { CsrfTokenService } from '../modules/csrf-tokens/index.js';
import type { RefusalLimit } from './rate-limit.js';

/** Spec §5 rule 4: POST, PATCH and DELETE also need X-CSRF-Token, bound to the key that fetched it. */
const writeMethods = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

/** A refused token counts as a refused authentication (http/rate-limit.ts). */
export function installCsrfProtection(app: FastifyInstance, csrfTokens: CsrfTokenService, limitRefusal: RefusalLimit): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.apiKey === null || !writeMethods.has(request.method)) return;
    try {
      csrfTokens.verify(request.apiKey.id, request.headers['x-csrf-token']);
    } catch (error) {
      throw await limitRefusal(request, reply, error);
    }
  });
}
