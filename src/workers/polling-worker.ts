import type { FastifyBaseLogger } from 'fastify';
import { jitteredBackoffMs } from '../backoff.js';
import { workerFaultBackoffBaseMs, workerFaultBackoffMaxMs } from '../config/limits.js';
import type { StorageFaultState } from '../storage/fault-state.js';

/**
 * A background loop that repeatedly runs one task (which processes whatever is due and says how much). It runs
 * again at once while there is work (unless told that the task is woken instead), waits `intervalMs` when there is
 * none or until wake(), and stops cleanly: stop() waits for the run in progress. Work is found in the database, so a
 * restart resumes where the last process stopped.
 * A pass that meets a storage fault (the database away, the disk full) waits longer each time, with jitter, and the
 * worker logs once when it pauses and once when it resumes, not once per pass (docs/operations.md "Faults").
 */
export class PollingWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  /** True while the timer waits out the interval (no pass running). */
  private waiting = false;
  private waking = false;
  private storageFaults: StorageFaultState | undefined;
  /** Passes in a row that met a storage fault: the backoff's exponent. */
  private faultedPasses = 0;

  constructor(
    readonly name: string,
    private readonly task: () => Promise<number>,
    private readonly intervalMs: number,
    private readonly log: FastifyBaseLogger,
    private readonly options: {
      /** Work the task started and did not wait for (webhook attempts), ended by stop() after the loop. */
      stopStarted?: () => Promise<void>;
      /**
       * False for a task whose pass takes all the work it can take at once, and is woken (wake()) when more can be
       * taken: after a pass that found work, the loop then waits for a wake or the interval instead of running again.
       */
      runAgainAfterWork?: boolean;
    } = {},
  ) {}

  /** Where the storage faults that passes meet are told (readiness, metrics), and how they are recognised. */
  reportStorageFaults(faults: StorageFaultState): void {
    this.storageFaults = faults;
  }

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
    await this.options.stopStarted?.();
  }

  /** Runs the task now instead of after the interval, when work may have appeared (deliveries queued, a slot freed). */
  wake(): void {
    // While the storage is faulty, the backoff decides when to look again.
    if (this.stopped || this.timer === undefined || this.waking || this.faultedPasses > 0) return;
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
        (processed) => {
          if (this.faultedPasses > 0) this.log.info({ worker: this.name, faultedPasses: this.faultedPasses }, 'worker resumed: the storage answers again');
          this.faultedPasses = 0;
          this.schedule(processed > 0 && this.options.runAgainAfterWork !== false ? 0 : this.intervalMs);
        },
        (error: unknown) => {
          const fault = this.storageFaults?.observe(error);
          if (fault === undefined) {
            this.log.error({ err: error, worker: this.name }, 'worker pass failed');
            this.schedule(this.intervalMs);
            return;
          }
          this.faultedPasses += 1;
          if (this.faultedPasses === 1) this.log.warn({ err: error, worker: this.name, storageFault: fault }, 'worker paused by a storage fault: retrying with backoff');
          this.schedule(faultBackoffMs(this.faultedPasses));
        },
      );
    }, delayMs);
    this.timer.unref();
  }
}

const faultBackoffMs = (faultedPasses: number) => jitteredBackoffMs(faultedPasses, workerFaultBackoffBaseMs, workerFaultBackoffMaxMs);
