import type { FastifyInstance } from 'fastify';
import { csrfTokenRoutes } from './routes.js';
import type { CsrfTokenService } from './service.js';

/** The CSRF tokens plugin: GET /csrf-token (the check itself is the edge's, http/csrf.ts). */
export async function csrfTokensPlugin(app: FastifyInstance, { csrfTokens }: { csrfTokens: CsrfTokenService }): Promise<void> {
  csrfTokenRoutes(app, csrfTokens);
}

export { CsrfTokenService } from './service.js';
