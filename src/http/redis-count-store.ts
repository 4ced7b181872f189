import { once } from 'node:events';
import { jitteredBackoffMs } from '../backoff.js';
import { createRequire } from 'node:module';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { Counter, Gauge } from 'prom-client';
import type { Clock } from '../clock.js';
import {
  rateLimitRedisCoolDownMs,
  rateLimitRedisFailuresToOpen,
  redisConnectTimeoutMs,
  redisReconnectDelayMsMax,
  redisReconnectDelayMsMin,
} from '../config/limits.js';
import { CircuitBreaker } from './circuit-breaker.js';
import { LocalCountStore, type CountCallback, type CountStore, type WindowOptions } from './local-count-store.js';

interface ChildStore extends CountStore {
  child(options: object): ChildStore;
}

// The Redis store of @fastify/rate-limit (its Lua increment and key names), which the package does not export by name.
const RedisStore = createRequire(import.meta.url)('@fastify/rate-limit/store/RedisStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
  redis: Redis,
  nameSpace: string,
) => ChildStore;

const nameSpace = 'customer-api-rate-limit:';

/** Why a call was counted by this instance alone (the `reason` label of rate_limit_store_fallbacks_total). */
type FallbackReason = 'timeout' | 'error' | 'unavailable';
const fallbackReasons: readonly FallbackReason[] = ['timeout', 'error', 'unavailable'];

/** Redis did not answer within the deadline: it may still count the call, but the request does not wait for it. */
class DeadlineMissed extends Error {}

/** What every store of one Redis client shares: whether Redis is worth asking, and the fallback counter. */
interface Shared {
  readonly breaker: CircuitBreaker;
  readonly timeoutMs: number;
  readonly fallbacks: Counter<'reason'>;
  /** Closes a connection that has stopped answering; the client then makes a new one. */
  replaceConnection(): void;
}

/**
 * Calls `done` with `call`'s answer, or with DeadlineMissed once `deadlineMs` has passed, whichever comes first. The
 * timer fires in the event loop's timer phase, before the loop reads its sockets: a loop kept busy past the deadline
 * (a synchronous SQLite write) would blame Redis for its own delay. So the deadline gives up only after one more round
 * of I/O (setImmediate runs after it), which delivers a reply that arrived meanwhile.
 */
function withinDeadline(deadlineMs: number, call: (callback: CountCallback) => void, done: CountCallback): void {
  let settled = false;
  const settle: CountCallback = (error, count) => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    done(error, count);
  };
  const timer = setTimeout(() => setImmediate(() => settle(new DeadlineMissed(`Redis did not answer within ${deadlineMs} ms`))), deadlineMs);
  call(settle);
}

/**
 * A store of @fastify/rate-limit that counts in Redis, shared by every instance, while Redis answers within its
 * deadline, and in this instance's memory otherwise, at once: a request never waits for a Redis that is slow, down
 * or frozen longer than the deadline, and while the breaker is open not at all. Each fallback is counted by the
 * in-memory store, which answers each increment with its own count, so "count, then compare" holds there too.
 */
class RedisCountStore {
  readonly #redis: ChildStore;
  readonly #local: LocalCountStore;
  readonly #shared: Shared;

  constructor(redis: ChildStore, local: LocalCountStore, shared: Shared) {
    this.#redis = redis;
    this.#local = local;
    this.#shared = shared;
  }

  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void {
    const { breaker } = this.#shared;
    if (!breaker.allows()) return this.#countHere('unavailable', key, callback, timeWindow);
    withinDeadline(this.#shared.timeoutMs, (answer) => this.#redis.incr(key, answer, timeWindow, max), (error, count) => {
      if (error || !count) {
        breaker.failed(error);
        const missed = error instanceof DeadlineMissed;
        // A frozen server keeps its connection open: once Redis is given up (or a trial call misses too), a new
        // connection, which a server that is gone refuses and one that is back answers.
        if (missed && !breaker.closed) this.#shared.replaceConnection();
        return this.#countHere(missed ? 'timeout' : 'error', key, callback, timeWindow);
      }
      breaker.succeeded();
      callback(null, count);
    });
  }

  /** The store of one limiter (`createRateLimit`) or route: counters of its own, in Redis and in memory. */
  child(options: object): RedisCountStore {
    return new RedisCountStore(this.#redis.child(options), this.#local.child(), this.#shared);
  }

  #countHere(reason: FallbackReason, key: string, callback: CountCallback, timeWindow: number): void {
    this.#shared.fallbacks.inc({ reason });
    this.#local.incr(key, callback, timeWindow);
  }
}

/** The `store` option of @fastify/rate-limit: a class the plugin constructs with its options. */
export type RateLimitStoreClass = new (options: WindowOptions) => RedisCountStore;

/**
 * Connects the rate limits to Redis at `url`, with a circuit breaker: per instance while Redis is away, shared again
 * when it answers. Start-up waits for the connection at most redisConnectTimeoutMs, so that a healthy Redis counts
 * the very first requests, and a Redis that is down or unreachable delays nothing more.
 *
 * The client fails fast rather than queue: no offline queue, nothing carried over a reconnection (an increment is
 * worthless once its request has been answered), reconnections with capped, jittered backoff. A connection is ready
 * as soon as it is made, without the ready check or the client-info commands: both wait for answers that a frozen
 * server never gives, and leave the client stuck (a server still loading its data answers errors instead, which fall
 * back like any other). A connection that stops answering is replaced by the store, not by ioredis's socketTimeout,
 * whose timer outlives its connection in ioredis 5 and then closes the next one too.
 *
 * Needs app.metricsRegistry (installMetrics) for its two series.
 */
export async function connectRateLimitRedis(app: FastifyInstance, options: { url: string; timeoutMs: number; clock: Clock }): Promise<RateLimitStoreClass> {
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    enableReadyCheck: false,
    disableClientInfo: true,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    connectTimeout: redisConnectTimeoutMs,
    retryStrategy: (attempt) => jitteredBackoffMs(attempt, redisReconnectDelayMsMin, redisReconnectDelayMsMax),
  });
  // Every failed reconnection emits an error: the breaker's two lines are the ones an operator reads.
  redis.on('error', (error: Error) => app.log.debug({ err: error }, 'rate-limit Redis connection failed'));
  app.addHook('onClose', async () => redis.disconnect());

  const breaker = new CircuitBreaker({
    failuresToOpen: rateLimitRedisFailuresToOpen,
    coolDownMs: rateLimitRedisCoolDownMs,
    clock: options.clock,
    onOpen: (failure) => app.log.warn({ err: failure }, 'Redis unavailable: rate limits are counted by each instance on its own until it answers again'),
    onClose: () => app.log.info('Redis answers again: rate limits are shared by all instances again'),
  });
  const registry = app.metricsRegistry;
  new Gauge({
    name: 'rate_limit_store_redis_available',
    help: 'Rate limits counted in Redis, shared by all instances (1), or by this instance alone while Redis is away (0)',
    registers: [registry],
    collect() {
      this.set(breaker.closed ? 1 : 0);
    },
  });
  const fallbacks = new Counter({
    name: 'rate_limit_store_fallbacks_total',
    help: 'Rate-limit calls counted by this instance alone: Redis missed its deadline (timeout), failed (error), or was not asked while away (unavailable)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of fallbackReasons) fallbacks.inc({ reason }, 0);

  try {
    await once(redis, 'ready', { signal: AbortSignal.timeout(redisConnectTimeoutMs) });
  } catch (failure) {
    breaker.open(failure instanceof Error && failure.name === 'AbortError' ? new Error(`no connection to Redis within ${redisConnectTimeoutMs} ms of start-up`) : failure);
  }

  // Once per connection: the calls that missed together all ask, and the connection takes a moment to close.
  let replacing = false;
  redis.on('close', () => (replacing = false));
  const replaceConnection = () => {
    // Only a connection that is up: one being made or awaiting its retry is left to ioredis.
    if (redis.status !== 'ready' || replacing) return;
    replacing = true;
    redis.disconnect(true);
  };
  const shared: Shared = { breaker, timeoutMs: options.timeoutMs, fallbacks, replaceConnection };
  return class extends RedisCountStore {
    constructor(windowOptions: WindowOptions) {
      super(new RedisStore(windowOptions.continueExceeding ?? false, windowOptions.exponentialBackoff ?? false, redis, nameSpace), new LocalCountStore(options.clock), shared);
    }
  };
}
