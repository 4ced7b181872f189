/**
 * At most `limit` concurrent runs per key (a customer id); further runs of the same key wait their turn in order,
 * holding nothing — in particular no pooled database connection. Keys with nothing running or waiting are forgotten.
 */
export class PerKeyLimiter {
  readonly #running = new Map<string, { active: number; waiting: Array<() => void> }>();

  constructor(private readonly limit: number) {}

  /** Whether a run of `key` started now would wait its turn. */
  isFull(key: string): boolean {
    return (this.#running.get(key)?.active ?? 0) >= this.limit;
  }

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    let state = this.#running.get(key);
    if (!state) {
      state = { active: 0, waiting: [] };
      this.#running.set(key, state);
    }
    if (state.active >= this.limit) await new Promise<void>((resolve) => state.waiting.push(resolve));
    else state.active += 1;
    try {
      return await work();
    } finally {
      const next = state.waiting.shift();
      if (next) next();
      else {
        state.active -= 1;
        if (state.active === 0) this.#running.delete(key);
      }
    }
  }
}
