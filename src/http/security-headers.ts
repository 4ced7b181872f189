import type { FastifyInstance } from 'fastify';

/**
 * Every response: `X-Content-Type-Options: nosniff`, so a browser never reads a JSON body as another type. Every
 * response that is not the public API reference: `Cache-Control: no-store`, so no shared or browser cache keeps
 * customer data (errors included: they can name ids). The reference (/docs, /openapi.json) may be cached, and the
 * pages' static assets set their own.
 */
export function installSecurityHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    const cacheableReference = request.routeOptions.config?.public === true && (request.url.startsWith('/docs') || request.url.startsWith('/openapi.json'));
    // The pages' static assets (web/assets.ts) say themselves how long they keep.
    const ownCacheControl = request.routeOptions.config?.ownCacheControl === true && reply.hasHeader('cache-control');
    if (!cacheableReference && !ownCacheControl) reply.header('cache-control', 'no-store');
  });
}
