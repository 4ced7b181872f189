import type { Clock } from '../clock.js';

/**
 * A bounded map whose entries expire `ttlMs` after they were stored (by the injectable clock; `undefined` never
 * expires) and that forgets its oldest entry past `maxEntries`. Read caches of rows that rarely or never change
 * (docs/operations.md "Caches"): one lookup saved per request on the hot paths.
 */
export class ExpiringCache<K, V> {
  readonly #entries = new Map<K, { value: V; expiresAtMs: number }>();
  /** Counts deletions: a load that started before one may have read what was just deleted, so it is not stored. */
  #deletions = 0;

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number | undefined,
    private readonly maxEntries: number,
  ) {}

  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAtMs <= this.clock.now().getTime()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    if (this.#entries.size >= this.maxEntries && !this.#entries.has(key)) this.#entries.delete(this.#entries.keys().next().value as K);
    this.#entries.set(key, { value, expiresAtMs: this.ttlMs === undefined ? Number.POSITIVE_INFINITY : this.clock.now().getTime() + this.ttlMs });
  }

  delete(key: K): void {
    this.#deletions += 1;
    this.#entries.delete(key);
  }

  /** Forgets every entry whose key matches (a customer's fee schedules, say). */
  deleteWhere(matches: (key: K) => boolean): void {
    this.#deletions += 1;
    for (const key of this.#entries.keys()) if (matches(key)) this.#entries.delete(key);
  }

  /**
   * The cached value, or the one `load` reads. It is stored unless it is undefined (a miss is not remembered) or
   * something was deleted while it loaded: a key revoked meanwhile must not come back from a read that began before.
   */
  async getOrLoad(key: K, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const cached = this.get(key);
    if (cached !== undefined) return cached;
    const deletionsBefore = this.#deletions;
    const loaded = await load();
    if (loaded !== undefined && this.#deletions === deletionsBefore) this.set(key, loaded);
    return loaded;
  }
}

/**
 * The read caches of one application, made by buildApp with the app's clock and handed down to the services that
 * read through them. Each cache is made on first use and shared by name, so a change made through one service (a
 * revoked key, a new fee schedule) is seen at once by the others of the app; another process sees it when the entry
 * expires. Something that runs without an app (the CLI) makes its own, with the clock it was given.
 */
export class ReadCaches {
  readonly #byName = new Map<string, ExpiringCache<unknown, unknown>>();

  constructor(private readonly clock: Clock) {}

  /** The cache `name`, whose entries live `ttlMs` by this registry's clock (`undefined`: for good), at most `maxEntries`. */
  named<K, V>(name: string, ttlMs: number | undefined, maxEntries: number): ExpiringCache<K, V> {
    let cache = this.#byName.get(name);
    if (!cache) {
      cache = new ExpiringCache<unknown, unknown>(this.clock, ttlMs, maxEntries);
      this.#byName.set(name, cache);
    }
    return cache as ExpiringCache<K, V>;
  }
}
