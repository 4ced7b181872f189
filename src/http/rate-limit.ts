import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { Clock } from '../clock.js';
import { DomainError, type ErrorCode } from '../errors.js';
import { localCountStore } from './local-count-store.js';
import { connectRateLimitRedis } from './redis-count-store.js';
import { rateLimitFailedAuthWindowMs, rateLimitWindowMs } from '../config/limits.js';

export interface RateLimitOptions {
  /** Per API key; undefined turns all rate limiting off (benchmarks). */
  perSecond: number | undefined;
  /** Per client address, before authentication. */
  perIpPerSecond: number | undefined;
  /** Refused authentications (401/403) per client address per minute; past it, its further refusals answer 429 until the minute ends (valid keys pass). */
  failedAuthPerIpPerMinute: number | undefined;
  redisUrl: string | undefined;
  /** How long a call waits for Redis before this instance counts it alone. */
  redisTimeoutMs: number;
  /** Times the in-memory windows and the Redis breaker's cool-down (Redis times its own windows). */
  clock: Clock;
}

/** The refusals that count against an address: bad keys, and keys used where they may not be. */
const authenticationRefusals = new Set<ErrorCode>(['UNAUTHENTICATED', 'IP_NOT_ALLOWED', 'INSUFFICIENT_SCOPE', 'CSRF_TOKEN_INVALID']);

/**
 * Who a client address is for rate limiting: an IPv4 address, or the /64 of an IPv6 address (a single host is
 * commonly given a whole /64 and could otherwise rotate through it).
 */
export function addressKey(ip: string): string {
  try {
    const address = ipaddr.process(ip);
    if (address.kind() === 'ipv4') return address.toString();
    return `${(address as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
  } catch {
    return ip;
  }
}

/** The 429 of an address limit, its headers set on the reply. */
function addressRefusal(reply: FastifyReply, message: string, limit: number, ttlMs: number): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  reply.header('ratelimit-limit', limit).header('ratelimit-remaining', 0).header('ratelimit-reset', retryAfterSeconds).header('retry-after', retryAfterSeconds);
  return rateLimited(message, limit, ttlMs);
}

function rateLimited(message: string, limit: number, ttlMs: number): DomainError {
  return new DomainError('RATE_LIMITED', message, { limit, retry_after_seconds: Math.max(1, Math.ceil(ttlMs / 1000)) });
}

/**
 * What a refused authentication answers (http/auth.ts, http/csrf.ts): the refusal itself, or 429 once the client's
 * address has had too many refusals this minute. Any other error passes through.
 */
export type RefusalLimit = (request: FastifyRequest, reply: FastifyReply, error: unknown) => Promise<unknown>;

const refusalsUnlimited: RefusalLimit = async (_request, _reply, error) => error;

/**
 * Three limits, in memory per instance or in Redis (shared) when REDIS_URL is set, per instance again while Redis
 * is slow, down or frozen (http/redis-count-store.ts):
 *
 * - per client address, on every request to a private route, checked before the API key is even looked at, so
 *   floods of bad or missing keys are limited too (RATE_LIMIT_PER_IP_PER_SECOND, default 1000);
 * - refused authentications per client address, in one-minute windows (RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE,
 *   default 60): past it further refusals answer 429 instead of 401/403 until the minute ends. Only refusals meet
 *   this limit: a valid key from the same address (a load balancer, a NAT) is answered as usual;
 * - per API key, after authentication (RATE_LIMIT_PER_SECOND, default 100); requests without a key (the browser
 *   pages) per client address instead.
 *
 * Addresses are IPv4 addresses or IPv6 /64s. Behind a proxy, TRUST_PROXY must name the proxy, not `true`: with
 * `true` a client can write any address into X-Forwarded-For (docs/operations.md).
 *
 * With RATE_LIMIT_PER_SECOND=off none of these apply, but `app.createRateLimit` still works (web/dashboard sign-in).
 *
 * Install before authentication: the address limit is an instance hook that must run first; the key limit is added
 * to each route, and route hooks run after the instance's (authentication included). Authentication answers its
 * refusals through the RefusalLimit returned. Headers follow the IETF RateLimit draft: RateLimit-Limit,
 * RateLimit-Remaining, RateLimit-Reset, Retry-After.
 */
export async function installRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<RefusalLimit> {
  const store = options.redisUrl ? await connectRateLimitRedis(app, { url: options.redisUrl, timeoutMs: options.redisTimeoutMs, clock: options.clock }) : localCountStore(options.clock);
  if (options.perSecond === undefined) {
    // No request limits, but limiters stay available to the code that always needs one (dashboard sign-in).
    await app.register(rateLimit, { global: false, store });
    return refusalsUnlimited;
  }
  await app.register(rateLimit, {
    global: true,
    max: options.perSecond,
    timeWindow: rateLimitWindowMs,
    enableDraftSpec: true,
    store,
    keyGenerator: (request) => (request.apiKey ? `key:${request.apiKey.id}` : `ip:${addressKey(request.ip)}`),
    errorResponseBuilder: (request, context) =>
      rateLimited(`Too many requests: at most ${context.max} per second per ${request.apiKey ? 'API key' : 'client address'}. Retry after ${context.after}.`, context.max, context.ttl),
  });

  const perIp = options.perIpPerSecond;
  const checkAddress = perIp === undefined ? undefined : app.createRateLimit({ max: perIp, timeWindow: rateLimitWindowMs, keyGenerator: (request) => `address:${addressKey(request.ip)}` });
  const failures = options.failedAuthPerIpPerMinute;
  const checkFailures =
    failures === undefined ? undefined : app.createRateLimit({ max: failures, timeWindow: rateLimitFailedAuthWindowMs, keyGenerator: (request) => `refused:${addressKey(request.ip)}` });

  if (checkAddress) {
    app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      if (request.is404 || request.routeOptions.config.public) return;
      const result = await checkAddress(request);
      if (!result.isAllowed && result.isExceeded) {
        throw addressRefusal(reply, `Too many requests from your address: at most ${result.max} per second. Retry after ${Math.ceil(result.ttl / 1000)} s.`, result.max, result.ttl);
      }
    });
  }
  if (!checkFailures) return refusalsUnlimited;
  return async (request, reply, error) => {
    if (!(error instanceof DomainError) || !authenticationRefusals.has(error.code)) return error;
    // Counted, then compared: each refusal's own increment decides, so concurrent refusals cannot pass together
    // on a count read before any of them was added.
    const refused = await checkFailures(request);
    if (refused.isAllowed || !refused.isExceeded) return error;
    return addressRefusal(reply, `Too many refused authentications from your address: at most ${refused.max} per minute. Retry after ${Math.ceil(refused.ttl / 1000)} s.`, refused.max, refused.ttl);
  };
}
