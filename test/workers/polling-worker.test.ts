import Fastify from 'fastify';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PollingWorker } from '../../src/workers/polling-worker.js';

/**
 * The background loop (src/workers/polling-worker.ts): after a pass that found work it runs again at once, unless its
 * task is woken instead (runAgainAfterWork: false), when it waits for wake() or its interval. Timers are vitest's.
 */
describe('PollingWorker', () => {
  const intervalMs = 60_000;
  const log = Fastify({ logger: false }).log;
  let worker: PollingWorker | undefined;

  beforeEach(() => vi.useFakeTimers());
  afterEach(async () => {
    const stopping = worker?.stop();
    await vi.runOnlyPendingTimersAsync();
    await stopping;
    vi.useRealTimers();
  });

  /** A task that always finds one thing to do, and counts its passes. */
  const busyTask = () => {
    const passes = { count: 0 };
    return { passes, task: async () => (passes.count += 1, 1) };
  };

  it('runs again at once after a pass that found work', async () => {
    const { passes, task } = busyTask();
    worker = new PollingWorker('busy', task, intervalMs, log);
    worker.start();
    await vi.advanceTimersByTimeAsync(50);
    expect(passes.count).toBeGreaterThan(5);
  });

  it('with runAgainAfterWork false, waits after a pass that found work until woken or the interval is over', async () => {
    const { passes, task } = busyTask();
    worker = new PollingWorker('woken', task, intervalMs, log, { runAgainAfterWork: false });
    worker.start();
    await vi.advanceTimersByTimeAsync(50);
    expect(passes.count).toBe(1);
    worker.wake();
    await vi.advanceTimersByTimeAsync(50);
    expect(passes.count).toBe(2);
    await vi.advanceTimersByTimeAsync(intervalMs);
    expect(passes.count).toBe(3);
  });
});
