import { createRequire } from 'node:module';

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

// The in-memory store of @fastify/rate-limit, which the package does not export by name (nor type).
const LocalStore = createRequire(import.meta.url)('@fastify/rate-limit/store/LocalStore.js') as new (
  continueExceeding: boolean,
  exponentialBackoff: boolean,
) => CountStore;

/**
 * @fastify/rate-limit's in-memory store, each increment answered with its own count. The package's store hands every
 * caller the same live counter, which the limiter reads only after an await: by then concurrent increments have
 * moved it on and all of them see the last count (of twelve concurrent refusals against a limit of three, none got
 * through). A copy taken as the increment happens is that increment's count, so exactly `max` pass. Redis answers
 * each increment with its own count already.
 */
export class LocalCountStore {
  readonly #store: CountStore;

  constructor(options: WindowOptions) {
    this.#store = new LocalStore(options.continueExceeding ?? false, options.exponentialBackoff ?? false);
  }

  incr(key: string, callback: CountCallback, timeWindow: number, max: number): void {
    this.#store.incr(key, (error, count) => callback(error, count && { current: count.current, ttl: count.ttl }), timeWindow, max);
  }

  /**
   * The store of one limiter (`createRateLimit`) or route: counters of its own. The package passes the limiter's
   * options here, though its types call them route options.
   */
  child(options: object): LocalCountStore {
    return new LocalCountStore(options);
  }
}
