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

  constructor(
    readonly name: string,
    private readonly task: () => Promise<number>,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
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
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
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
