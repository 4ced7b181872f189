import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * Moves WAL checkpoints off the event loop (docs/decisions/0004-sqlite-group-commit.md).
 *
 * SQLite copies the WAL back into the database file when a COMMIT finds the WAL over `wal_autocheckpoint` pages,
 * and that copy (with its fsync of the database file) runs inside the COMMIT, on the event loop's thread: every
 * request in flight waits for it, which is where the slowest payments' latency came from. A worker thread with its
 * own connection runs PASSIVE checkpoints instead, every `checkpointIntervalMs`: they copy what no reader still
 * needs and never block a writer. The writer keeps a high `wal_autocheckpoint` as a fallback, should the worker
 * fall behind or fail.
 */

/** How often the worker checkpoints; a PASSIVE checkpoint with nothing to copy costs microseconds. */
const checkpointIntervalMs = 100;
/** The writer's own checkpoint threshold, in pages: only reached if the worker cannot keep up or has stopped. */
export const fallbackAutocheckpointPages = 10_000;
const stopTimeoutMs = 5000;

// Plain CommonJS evaluated in the worker: no file to ship next to the compiled code, nothing to transpile in tests.
const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driverPath);
const db = new Database(workerData.file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // A failed checkpoint is retried at the next tick; meanwhile the WAL grows towards the writer's fallback.
  }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export class SqliteCheckpointer {
  readonly #worker: Worker;
  readonly #exited: Promise<'exited'>;

  constructor(file: string) {
    const driverPath = createRequire(import.meta.url).resolve('better-sqlite3');
    this.#worker = new Worker(workerSource, { eval: true, workerData: { driverPath, file, intervalMs: checkpointIntervalMs } });
    this.#exited = new Promise((resolve) => this.#worker.once('exit', () => resolve('exited')));
    // A worker that cannot start leaves the writer's fallback checkpoints in charge; it must not crash the server.
    this.#worker.on('error', () => undefined);
    // The owner stops it on close; it must never be what keeps a finished CLI command alive.
    this.#worker.unref();
  }

  /** Lets a checkpoint in progress finish, then closes the worker's connection; idempotent. */
  async stop(): Promise<void> {
    // Waiting on an unreferenced worker would let the event loop empty, and Node exit, before it has closed.
    this.#worker.ref();
    this.#worker.postMessage('stop');
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), stopTimeoutMs).unref());
    if ((await Promise.race([this.#exited, timeout])) === 'timeout') await this.#worker.terminate();
  }
}
