import type { FastifyBaseLogger } from 'fastify';

/**
 * A background loop that repeatedly runs one task (which processes whatever is due and says how much). It runs
 * again at once while there is work, waits `intervalMs` when there is none, and stops cleanly: stop() waits for
 * the run in progress. Work is found in the database, so a restart resumes where the last process stopped.
 */
export class PollingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** True while the timer waits out the interval (no pass running). */
  private waiting = false;
  private waking = false;

  constructor(
    readonly name: string,
    private readonly task: () => Promise<number>,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
    /** Work the task started and did not wait for (webhook attempts), ended by stop() after the loop. */
    private readonly stopStarted?: () => Promise<void>,
  ) {}

  /** One pass, for tests and for the loop. */
  async runOnce(): Promise<number> {
    return this.task();
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.stopStarted?.();
  }

  /** Runs the task now instead of after the interval, when work may have appeared (deliveries queued, a slot freed). */
  wake(): void {
    if (this.stopped || this.timer === undefined || this.waking) return;
    this.waking = true;
    // A pass in progress runs again at once if it found work; otherwise this wakes the wait that follows it.
    void Promise.resolve(this.running).then(() => {
      this.waking = false;
      if (this.stopped || !this.waiting) return;
      clearTimeout(this.timer);
      this.schedule(0);
    });
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.waiting = delayMs > 0;
    this.timer = setTimeout(() => {
      this.waiting = false;
      this.running = this.task().then(
        (processed) => this.schedule(processed > 0 ? 0 : this.intervalMs),
        (error: unknown) => {
          this.log.error({ err: error, worker: this.name }, 'worker pass failed');
          this.schedule(this.intervalMs);
        },
      );
    }, delayMs);
    this.timer.unref();
  }
}
