import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { pageRoute } from './page-route.js';

/** The pages' only style sheet and script, read once at start (from src/web/assets, like the views). */
const assetsDirectory = fileURLToPath(new URL('../../src/web/assets', import.meta.url));
const assets = new Map(
  [
    ['pages.css', 'text/css; charset=utf-8'],
    ['pages.js', 'text/javascript; charset=utf-8'],
  ].map(([name, type]) => [name!, { type: type!, body: readFileSync(`${assetsDirectory}/${name}`) }]),
);

export function assetRoutes(context: FastifyInstance): void {
  context.get('/assets/:name', pageRoute, async (request, reply) => {
    const asset = assets.get((request.params as { name: string }).name);
    if (!asset) return reply.callNotFound();
    return reply.type(asset.type).send(asset.body);
  });
}
