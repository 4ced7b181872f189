import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * OpenAPI 3.1 generated from the route schemas, served at /openapi.json, with an interactive reference at /docs.
 * Must be registered before the routes so it sees them.
 */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  // The reference is public like the document it renders; its routes are registered by the UI plugin.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...route.config, public: true, rateLimit: false };
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Customer API',
        version: '1.0.0',
        description:
          'Customer-facing API of a payments and digital-asset platform. Every path may carry a /v1 or /v2 prefix ' +
          '(spec §9); the X-API-Version header selects a version when the path has none. Errors use the envelope ' +
          '`{ error: { code, message, details } }`; codes are listed in docs/errors.md.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          bearer: { type: 'http', scheme: 'bearer' },
          csrfToken: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'Required on POST, PATCH and DELETE; from GET /csrf-token' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true }, uiHooks: {} });
  app.get('/openapi.json', { config: { public: true, rateLimit: false }, schema: { hide: true } }, async () => app.swagger());
}
