import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rejectedVersionEchoLengthMax } from '../config/limits.js';

/** Spec §9: v1 and v2 are supported; v2 currently routes through the v1 handlers. */
export const supportedApiVersions = ['v1', 'v2'] as const;
export type ApiVersion = (typeof supportedApiVersions)[number];
export const defaultApiVersion: ApiVersion = 'v1';

const versionHeader = 'x-api-version';
// A leading path segment that looks like a version ("/v3/...", "/V1"); anything else is a resource path.
const versionPrefix = /^\/(v[0-9]+)(?=\/|\?|$)/i;

interface VersionedMessage extends IncomingMessage {
  pathVersion?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The version that handles the request, or the rejected token; undefined only before resolution. */
    apiVersion: string | undefined;
    /** Set on the last-resort 500, which carries no X-API-Version (spec §7 rule 6). */
    lastResort: boolean;
  }
}

function isSupported(token: string): token is ApiVersion {
  return (supportedApiVersions as readonly string[]).includes(token);
}

/**
 * Fastify's rewriteUrl: strips a version prefix so `/v1/x`, `/v2/x` and `/x` reach the same route, and
 * remembers the prefix for resolution. Runs before routing, so it can only record, not answer.
 */
export function stripVersionPrefix(this: unknown, raw: IncomingMessage): string {
  const url = raw.url ?? '/';
  const match = versionPrefix.exec(url);
  if (!match) return url;
  (raw as VersionedMessage).pathVersion = match[1];
  const rest = url.slice(match[0].length);
  return rest.startsWith('/') ? rest : `/${rest}`;
}

function echoable(token: string): string {
  // Header values must be visible ASCII; the echo is a hint, so cut and clean it rather than fail.
  return token.slice(0, rejectedVersionEchoLengthMax).replace(/[^\x21-\x7e]/g, '');
}

function unsupported(reply: FastifyReply, token: string): FastifyReply {
  reply.request.apiVersion = echoable(token);
  const body = { error: `Unsupported API version "${echoable(token)}". Supported versions: ${supportedApiVersions.join(', ')}.` };
  return reply.code(400).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

/** Resolves the version of every request (spec §9 rule 2) and stamps it on every response (rule 4). */
export function installApiVersioning(app: FastifyInstance): void {
  app.decorateRequest('apiVersion', undefined);
  app.decorateRequest('lastResort', false);

  app.addHook('onRequest', async (request, reply) => {
    const fromPath = (request.raw as VersionedMessage).pathVersion;
    if (fromPath !== undefined) {
      const token = fromPath.toLowerCase();
      if (!isSupported(token)) return unsupported(reply, fromPath);
      // The path wins over a disagreeing header (rule 3), which is then not looked at.
      request.apiVersion = token;
      return;
    }
    const header = request.headers[versionHeader];
    const headerToken = (Array.isArray(header) ? header.join(',') : header ?? '').trim();
    if (headerToken === '') {
      request.apiVersion = defaultApiVersion;
      return;
    }
    const token = headerToken.toLowerCase();
    if (!isSupported(token)) return unsupported(reply, headerToken);
    request.apiVersion = token;
  });

  app.addHook('onSend', async (request, reply) => {
    if (request.apiVersion === undefined || request.lastResort || isPreflight(request)) return;
    reply.header(versionHeader, request.apiVersion);
  });
}
