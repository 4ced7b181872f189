import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants as zlibConstants, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { assetHashLength } from '../config/limits.js';
import { notFound } from '../errors.js';
import { pageRoute } from './page-route.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The response names its own Cache-Control (a content-hashed asset): the default no-store is not added. */
    ownCacheControl?: boolean;
  }
}

type Encoding = 'br' | 'gzip';

interface Asset {
  type: string;
  body: Buffer;
  /** The body compressed once at start, per encoding. */
  encoded: Record<Encoding, Buffer>;
}

/** The pages' style sheet, script and icon, read once at start (from src/web/assets, like the views). */
const assetsDirectory = fileURLToPath(new URL('../../src/web/assets', import.meta.url));
const files: ReadonlyArray<[name: string, type: string]> = [
  ['pages.css', 'text/css; charset=utf-8'],
  ['pages.js', 'text/javascript; charset=utf-8'],
  ['favicon.svg', 'image/svg+xml'],
];

/** `pages.css` → `pages.3f2a…9c.css`: the address changes whenever the content does, so it can be cached for good. */
function hashedName(name: string, body: Buffer): string {
  const hash = createHash('sha256').update(body).digest('hex').slice(0, assetHashLength);
  const dot = name.lastIndexOf('.');
  return `${name.slice(0, dot)}.${hash}${name.slice(dot)}`;
}

const byName = new Map<string, Asset>();
const byHashedName = new Map<string, Asset>();
const urls: Record<string, string> = {};
for (const [name, type] of files) {
  const body = readFileSync(`${assetsDirectory}/${name}`);
  const asset: Asset = {
    type,
    body,
    encoded: { br: brotliCompressSync(body, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: zlibConstants.BROTLI_MAX_QUALITY } }), gzip: gzipSync(body, { level: 9 }) },
  };
  const hashed = hashedName(name, body);
  byName.set(name, asset);
  byHashedName.set(hashed, asset);
  urls[name] = `/assets/${hashed}`;
}

/** The address of each asset by its file name (`assetUrls['pages.css']`), for the layouts (views.ts). */
export const assetUrls: Readonly<Record<string, string>> = urls;

/**
 * The encoding to send, by the request's Accept-Encoding (RFC 9110 §12.5.3): brotli, else gzip, each unless refused
 * with q=0 (named, or through `*`); none when neither is accepted.
 */
export function chosenEncoding(header: string | undefined): Encoding | undefined {
  const weights = new Map<string, number>();
  for (const part of (header ?? '').split(',')) {
    const [token = '', ...parameters] = part.trim().toLowerCase().split(';');
    const q = parameters.map((parameter) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(parameter)?.[1]).find((value) => value !== undefined);
    if (token !== '') weights.set(token, q === undefined ? 1 : Number(q));
  }
  const weight = (encoding: Encoding) => weights.get(encoding) ?? weights.get('*') ?? 0;
  const best = (['br', 'gzip'] as const).filter((encoding) => weight(encoding) > 0).sort((a, b) => weight(b) - weight(a))[0];
  return best;
}

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset) {
  const encoding = chosenEncoding(request.headers['accept-encoding']);
  reply.header('vary', 'accept-encoding').type(asset.type);
  if (encoding === undefined) return reply.send(asset.body);
  return reply.header('content-encoding', encoding).send(asset.encoded[encoding]);
}

/**
 * The assets (docs/dashboard.md "Assets"): under their content-hashed address, cached by browsers and proxies for a
 * year (`immutable`: a new version has a new address); under the plain name, for pages rendered before an upgrade,
 * uncached. Compressed with brotli or gzip when the browser takes it. The icon also answers /favicon.ico, which
 * browsers ask for on their own.
 */
export function assetRoutes(context: FastifyInstance): void {
  context.get('/assets/:name', { ...pageRoute, config: { ...pageRoute.config, ownCacheControl: true } }, async (request, reply) => {
    const name = (request.params as { name: string }).name;
    const hashed = byHashedName.get(name);
    if (hashed) {
      reply.header('cache-control', 'public, max-age=31536000, immutable');
      return send(request, reply, hashed);
    }
    const plain = byName.get(name);
    // A 404 of its own: the not-found handler, called from a route that exists, answered 405 "GET not allowed".
    if (!plain) throw notFound('asset');
    reply.header('cache-control', 'no-cache');
    return send(request, reply, plain);
  });
  context.get('/favicon.ico', { ...pageRoute, config: { ...pageRoute.config, ownCacheControl: true } }, async (request, reply) => {
    reply.header('cache-control', 'public, max-age=86400');
    return send(request, reply, byName.get('favicon.svg')!);
  });
}
