import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { DomainError } from '../errors.js';

export interface RateLimitOptions {
  /** Per API key; undefined turns all rate limiting off (benchmarks). */
  perSecond: number | undefined;
  /** Per client address, before authentication. */
  perIpPerSecond: number | undefined;
  redisUrl: string | undefined;
}

const windowMs = 1000;

function rateLimited(message: string, limit: number, ttlMs: number): DomainError {
  return new DomainError('RATE_LIMITED', message, { limit, retry_after_seconds: Math.max(1, Math.ceil(ttlMs / 1000)) });
}

/**
 * Two limits, in one-second windows, in memory per instance or in Redis (shared) when REDIS_URL is set:
 *
 * - per client address, on every request to a private route, checked before the API key is even looked at, so
 *   floods of bad or missing keys are limited too (RATE_LIMIT_PER_IP_PER_SECOND, default 1000);
 * - per API key, after authentication (RATE_LIMIT_PER_SECOND, default 100).
 *
 * Install before authentication: the address limit is an instance hook that must run first; the key limit is added
 * to each route, and route hooks run after the instance's (authentication included). Headers follow the IETF
 * RateLimit draft: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After.
 */
export async function installRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  if (options.perSecond === undefined) return;
  const redis = options.redisUrl
    ? new Redis(options.redisUrl, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: false })
    : undefined;
  if (redis) {
    // Without a listener ioredis reports connection errors as unhandled; the limiter below fails open instead.
    redis.on('error', (error: Error) => app.log.warn({ err: error }, 'rate-limit store unreachable'));
    app.addHook('onClose', async () => void redis.quit());
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
  if (perIp === undefined) return;
  const checkAddress = app.createRateLimit({ max: perIp, timeWindow: windowMs, keyGenerator: (request) => `address:${request.ip}` });
  app.addHook('onRequest', async (request, reply) => {
    if (request.is404 || request.routeOptions.config.public) return;
    const result = await checkAddress(request);
    if (result.isAllowed || !result.isExceeded) return;
    const retryAfterSeconds = Math.max(1, Math.ceil(result.ttl / 1000));
    reply.header('ratelimit-limit', result.max).header('ratelimit-remaining', 0).header('ratelimit-reset', retryAfterSeconds).header('retry-after', retryAfterSeconds);
    throw rateLimited(`Too many requests from your address: at most ${result.max} per second. Retry after ${retryAfterSeconds} s.`, result.max, result.ttl);
  });
}
