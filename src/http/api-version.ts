import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rejectedVersionEchoLengthMax } from '../config/limits.js';

/** docs/spec.md §9: v1 and v2 are supported; v2 currently routes through the v1 handlers. */
const supportedApiVersions = ['v1', 'v2'] as const;
export type ApiVersion = (typeof supportedApiVersions)[number];
const defaultApiVersion: ApiVersion = 'v1';

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
    /** Set on the last-resort 500, which carries no X-API-Version (docs/spec.md §7 rule 6). */
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

/** docs/spec.md §9 rules 2 and 3: the version a request selects, or the unsupported token it names. */
export type VersionChoice = { version: ApiVersion } | { rejected: string };

function chooseVersion(pathToken: string | undefined, header: string | string[] | undefined): VersionChoice {
  if (pathToken !== undefined) {
    const token = pathToken.toLowerCase();
    // The path wins over a disagreeing header (rule 3), which is then not looked at.
    return isSupported(token) ? { version: token } : { rejected: pathToken };
  }
  const headerToken = (Array.isArray(header) ? header.join(',') : header ?? '').trim();
  if (headerToken === '') return { version: defaultApiVersion };
  const token = headerToken.toLowerCase();
  return isSupported(token) ? { version: token } : { rejected: headerToken };
}

/** The version of a request: its path prefix (recorded by stripVersionPrefix before routing), else its header. */
export function versionOf(raw: IncomingMessage): VersionChoice {
  return chooseVersion((raw as VersionedMessage).pathVersion, raw.headers[versionHeader]);
}

/**
 * The supported version a request selects, read from the bytes of a request Node's HTTP parser refused (so it
 * never became a request): its request line, then an X-API-Version header line. Undefined when the request line
 * cannot be read or names an unsupported version (its answer is then the unreadable request's, not the version's).
 */
export function versionOfUnreadableRequest(bytes: Buffer | undefined): ApiVersion | undefined {
  const text = bytes?.toString('latin1') ?? '';
  const head = text.slice(0, text.includes('\r\n\r\n') ? text.indexOf('\r\n\r\n') : undefined);
  const target = /^[A-Z]+ (\S+) HTTP\/1\.[01]\r?\n/.exec(head)?.[1];
  if (target === undefined) return undefined;
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '');
  const header = /^x-api-version:[ \t]*([^\r\n]*)$/im.exec(head)?.[1];
  const choice = chooseVersion(versionPrefix.exec(path)?.[1], header);
  return 'version' in choice ? choice.version : undefined;
}

/** docs/spec.md §7 rule 4: the flat body naming the rejected token and the supported versions, and the token's echo. */
export function unsupportedVersionAnswer(token: string): { body: string; echo: string } {
  const body = { error: `Unsupported API version "${echoable(token)}". Supported versions: ${supportedApiVersions.join(', ')}.` };
  return { body: JSON.stringify(body), echo: echoable(token) };
}

function unsupported(reply: FastifyReply, token: string): FastifyReply {
  const { body, echo } = unsupportedVersionAnswer(token);
  reply.request.apiVersion = echo;
  return reply.code(400).type('application/json; charset=utf-8').send(body);
}

/** A CORS preflight (Fetch standard): OPTIONS with Access-Control-Request-Method. Any other OPTIONS is a request. */
export function isPreflight(request: FastifyRequest): boolean {
  return request.method === 'OPTIONS' && request.headers['access-control-request-method'] !== undefined;
}

/** Resolves the version of every request (docs/spec.md §9 rule 2) and stamps it on every response (rule 4). */
export function installApiVersioning(app: FastifyInstance): void {
  app.decorateRequest('apiVersion', undefined);
  app.decorateRequest('lastResort', false);

  app.addHook('onRequest', async (request, reply) => {
    const choice = versionOf(request.raw);
    if ('rejected' in choice) return unsupported(reply, choice.rejected);
    request.apiVersion = choice.version;
  });

  app.addHook('onSend', async (request, reply) => {
    if (request.apiVersion === undefined || request.lastResort || isPreflight(request)) return;
    reply.header(versionHeader, request.apiVersion);
  });
}
