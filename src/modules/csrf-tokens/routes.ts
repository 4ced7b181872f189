import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { DataOf, Timestamp, authenticatedReadErrors, errorResponses } from '../../http/schemas.js';
import type { CsrfTokenService } from './service.js';

const CsrfTokenRecord = Type.Object(
  {
    csrf_token: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'Send as X-CSRF-Token on POST, PATCH and DELETE', examples: ['9f2c4e6a8b0d1f3e5a7c9e1b3d5f7a9c2e4b6d8f0a1c3e5b7d9f1a3c5e7b9d1f'] }),
    expires_at: Timestamp,
  },
  { additionalProperties: false },
);

export function csrfTokenRoutes(app: FastifyInstance, csrfTokens: CsrfTokenService): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/csrf-token',
    {
      schema: {
        tags: ['Authentication'],
        operationId: 'getCsrfToken',
        summary: 'Get a CSRF token bound to the calling API key',
        response: { 200: DataOf(CsrfTokenRecord), ...errorResponses(...authenticatedReadErrors) },
      },
    },
    async (request) => ({ data: csrfTokens.issue(callerOf(request).id) }),
  );
}
