import type { FastifyInstance } from 'fastify';
import type { CsrfTokenService } from '../modules/csrf-tokens/service.js';

/** Spec §5 rule 4: POST, PATCH and DELETE also need X-CSRF-Token, bound to the key that fetched it. */
const writeMethods = new Set(['POST', 'PATCH', 'PUT', 'DELETE']);

export function installCsrfProtection(app: FastifyInstance, csrfTokens: CsrfTokenService): void {
  app.addHook('onRequest', async (request) => {
    if (request.apiKey === null || !writeMethods.has(request.method)) return;
    csrfTokens.verify(request.apiKey.id, request.headers['x-csrf-token']);
  });
}
