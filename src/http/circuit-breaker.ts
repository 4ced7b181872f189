import type { Clock } from '../clock.js';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the breaker. */
  failuresToOpen: number;
  /** How long an open breaker refuses calls before letting one through to try; up to half again is added at random. */
  coolDownMs: number;
  clock: Clock;
  /** Called once when the dependency is given up (closed → open), with the failure that did it. */
  onOpen(failure: unknown): void;
  /** Called once when the dependency answers again (open → closed). */
  onClose(): void;
}

/**
 * Whether a dependency is worth calling. Closed: every call goes through. After `failuresToOpen` failures in a row
 * it opens: calls are refused (the caller answers without the dependency) for a cool-down, then one call goes
 * through as a probe (half-open) while the others are still refused; the probe's success closes the breaker, its
 * failure opens it for another cool-down. The jitter keeps instances that lost the dependency together from probing
 * it together. onOpen and onClose mark the two changes an operator cares about; probes that fail change nothing.
 */
export class CircuitBreaker {
  readonly #options: CircuitBreakerOptions;
  #state: 'closed' | 'open' | 'half-open' = 'closed';
  #failures = 0;
  #probeAtMs = 0;

  constructor(options: CircuitBreakerOptions) {
    this.#options = options;
  }

  /** True while calls go through (closed). */
  get closed(): boolean {
    return this.#state === 'closed';
  }

  /** Whether this call may go to the dependency; the caller then reports its outcome (succeeded or failed). */
  allows(): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'half-open' || this.#options.clock.now().getTime() < this.#probeAtMs) return false;
    this.#state = 'half-open';
    return true;
  }

  succeeded(): void {
    this.#failures = 0;
    if (this.#state === 'closed') return;
    this.#state = 'closed';
    this.#options.onClose();
  }

  failed(failure: unknown): void {
    if (this.#state === 'closed') {
      this.#failures += 1;
      if (this.#failures >= this.#options.failuresToOpen) this.open(failure);
    } else if (this.#state === 'half-open') {
      this.#coolDown();
    }
    // Open: a call that started before the breaker opened; the cool-down already runs.
  }

  /** Gives the dependency up at once (it is known to be away), as its failures would have. */
  open(failure: unknown): void {
    const wasClosed = this.#state === 'closed';
    this.#coolDown();
    if (wasClosed) this.#options.onOpen(failure);
  }

  #coolDown(): void {
    this.#state = 'open';
    this.#failures = 0;
    this.#probeAtMs = this.#options.clock.now().getTime() + this.#options.coolDownMs * (1 + Math.random() / 2);
  }
}
