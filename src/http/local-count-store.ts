import type { Clock } from '../clock.js';
import { rateLimitLocalCountersMax } from '../config/limits.js';

interface Count {
  current: number;
  ttl: number;
}
/** How a store of @fastify/rate-limit answers an increment: the key's count in its window, and the window's time left. */
export type CountCallback = (error: Error | null, count?: Count) => void;
/** The options of a limiter that its store reads. */
export interface WindowOptions {
  continueExceeding?: boolean;
  exponentialBackoff?: boolean;
}
export interface CountStore {
  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void;
}

/**
 * The in-memory store of @fastify/rate-limit's limiters, per instance: without Redis, and while Redis is away. A key
 * is counted in fixed windows of `timeWindow` from its first request, timed by the app's clock (the package's own
 * store reads the wall clock), and each increment is answered with its own count: the package's store hands every
 * caller the same live counter, which the limiter reads only after an await, so concurrent increments all saw the
 * last count (of twelve concurrent refusals against a limit of three, none got through); exactly `max` pass here.
 * Like the package's store it keeps the most recently counted keys only (rateLimitLocalCountersMax): a key
 * forgotten starts a new window. The limiters use neither `continueExceeding` nor `exponentialBackoff`.
 */
export class LocalCountStore {
  readonly #windows = new Map<string, { count: number; startedAtMs: number }>();

  constructor(private readonly clock: Clock) {}

  incr(key: string, callback: CountCallback, timeWindow: number): void {
    const nowMs = this.clock.now().getTime();
    let window = this.#windows.get(key);
    // Taken out and put back: the Map's order is then the order of last use, oldest first.
    this.#windows.delete(key);
    if (!window || window.startedAtMs + timeWindow <= nowMs) window = { count: 0, startedAtMs: nowMs };
    window.count += 1;
    this.#windows.set(key, window);
    if (this.#windows.size > rateLimitLocalCountersMax) this.#windows.delete(this.#windows.keys().next().value as string);
    callback(null, { current: window.count, ttl: window.startedAtMs + timeWindow - nowMs });
  }

  /** The store of one limiter (`createRateLimit`) or route: counters of its own. */
  child(): LocalCountStore {
    return new LocalCountStore(this.clock);
  }
}

/** The `store` option of @fastify/rate-limit (a class the plugin constructs) for counters timed by `clock`. */
export function localCountStore(clock: Clock): new () => LocalCountStore {
  return class extends LocalCountStore {
    constructor() {
      super(clock);
    }
  };
}
