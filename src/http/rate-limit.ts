import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import ipaddr from 'ipaddr.js';
import { Redis } from 'ioredis';
import { DomainError, type ErrorCode } from '../errors.js';

export interface RateLimitOptions {
  /** Per API key; undefined turns all rate limiting off (benchmarks). */
  perSecond: number | undefined;
  /** Per client address, before authentication. */
  perIpPerSecond: number | undefined;
  /** Refused authentications (401/403) per client address per minute; past it, the address is refused until the minute ends. */
  failedAuthPerIpPerMinute: number | undefined;
  redisUrl: string | undefined;
}

const windowMs = 1000;
const failureWindowMs = 60_000;
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

function refuseAddress(reply: FastifyReply, message: string, limit: number, ttlMs: number): never {
  const retryAfterSeconds = Math.max(1, Math.ceil(ttlMs / 1000));
  reply.header('ratelimit-limit', limit).header('ratelimit-remaining', 0).header('ratelimit-reset', retryAfterSeconds).header('retry-after', retryAfterSeconds);
  throw rateLimited(message, limit, ttlMs);
}

function rateLimited(message: string, limit: number, ttlMs: number): DomainError {
  return new DomainError('RATE_LIMITED', message, { limit, retry_after_seconds: Math.max(1, Math.ceil(ttlMs / 1000)) });
}

/**
 * Three limits, in memory per instance or in Redis (shared) when REDIS_URL is set:
 *
 * - per client address, on every request to a private route, checked before the API key is even looked at, so
 *   floods of bad or missing keys are limited too (RATE_LIMIT_PER_IP_PER_SECOND, default 1000);
 * - refused authentications per client address, in one-minute windows (RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE,
 *   default 60): past it every request of the address is refused until the minute ends, before any lookup;
 * - per API key, after authentication (RATE_LIMIT_PER_SECOND, default 100).
 *
 * Addresses are IPv4 addresses or IPv6 /64s. Behind a proxy, TRUST_PROXY must name the proxy, not `true`: with
 * `true` a client can write any address into X-Forwarded-For (docs/operations.md).
 *
 * With RATE_LIMIT_PER_SECOND=off none of these apply, but `app.createRateLimit` still works (web/dashboard sign-in).
 *
 * Install before authentication: the address limit is an instance hook that must run first; the key limit is added
 * to each route, and route hooks run after the instance's (authentication included). Headers follow the IETF
 * RateLimit draft: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After.
 */
export async function installRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: false })
    : undefined;
  if (redis) {
    // Without a listener ioredis reports connection errors as unhandled; the limiter below fails open instead.
    redis.on('error', (error: Error) => app.log.warn({ err: error }, 'rate-limit store unreachable'));
    app.addHook('onClose', async () => void redis.quit());
  }
  if (options.perSecond === undefined) {
    // No request limits, but limiters stay available to the code that always needs one (dashboard sign-in).
    await app.register(rateLimit, { global: false, skipOnError: true, ...(redis ? { redis, nameSpace: 'customer-api-rate-limit:' } : {}) });
    return;
  }
  await app.register(rateLimit, {
    global: true,
    max: options.perSecond,
    timeWindow: windowMs,
    enableDraftSpec: true,
    // A Redis outage must not take the API down with it: requests pass unlimited until it is back.
    skipOnError: true,
    ...(redis ? { redis, nameSpace: 'customer-api-rate-limit:' } : {}),
    keyGenerator: (request) => (request.apiKey ? `key:${request.apiKey.id}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) =>
      rateLimited(`Too many requests: at most ${context.max} per second per API key. Retry after ${context.after}.`, context.max, context.ttl),
  });

  const perIp = options.perIpPerSecond;
  const checkAddress = perIp === undefined ? undefined : app.createRateLimit({ max: perIp, timeWindow: windowMs, keyGenerator: (request) => `address:${addressKey(request.ip)}` });
  const failures = options.failedAuthPerIpPerMinute;
  const checkFailures =
    failures === undefined ? undefined : app.createRateLimit({ max: failures, timeWindow: failureWindowMs, keyGenerator: (request) => `refused:${addressKey(request.ip)}` });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.is404 || request.routeOptions.config.public) return;
    if (checkFailures) {
      const refused = await checkFailures(request, { increment: false });
      if (!refused.isAllowed && refused.remaining === 0) {
        refuseAddress(reply, `Too many refused authentications from your address: at most ${refused.max} per minute. Retry after ${Math.ceil(refused.ttl / 1000)} s.`, refused.max, refused.ttl);
      }
    }
    if (checkAddress) {
      const result = await checkAddress(request);
      if (!result.isAllowed && result.isExceeded) {
        refuseAddress(reply, `Too many requests from your address: at most ${result.max} per second. Retry after ${Math.ceil(result.ttl / 1000)} s.`, result.max, result.ttl);
      }
    }
  });
  if (checkFailures) {
    app.addHook('onError', async (request, _reply, error) => {
      if (error instanceof DomainError && authenticationRefusals.has(error.code)) await checkFailures(request);
    });
  }
}
