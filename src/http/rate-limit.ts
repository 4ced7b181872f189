import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { DomainError } from '../errors.js';

export interface RateLimitOptions {
  perSecond: number | undefined;
  redisUrl: string | undefined;
}

/**
 * Per API key, in a one-second window (in memory per instance; in Redis, shared, when REDIS_URL is set).
 * Runs after authentication (route-level hooks follow the instance hooks), so the key id is known.
 * Headers follow the IETF RateLimit draft: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After.
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
    timeWindow: 1000,
    enableDraftSpec: true,
    // A Redis outage must not take the API down with it: requests pass unlimited until it is back.
    skipOnError: true,
    ...(redis ? { redis, nameSpace: 'customer-api-rate-limit:' } : {}),
    keyGenerator: (request) => (request.apiKey ? `key:${request.apiKey.id}` : `ip:${request.ip}`),
    errorResponseBuilder: (_request, context) =>
      new DomainError('RATE_LIMITED', `Too many requests: at most ${context.max} per second per API key. Retry after ${context.after}.`, {
        limit: context.max,
        retry_after_seconds: Math.max(1, Math.ceil(context.ttl / 1000)),
      }),
  });
}
