import { Writable } from 'node:stream';

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: unknown;
}

/** The application's log lines (its JSON log stream), parsed as they are written. */
export class CapturedLog {
  readonly lines: LogLine[] = [];
  readonly stream: Writable;
  private waiters: Array<() => void> = [];

  constructor() {
    this.stream = new Writable({
      write: (chunk: Buffer | string, _encoding, callback) => {
        for (const line of chunk.toString().split('\n')) if (line.trim()) this.lines.push(JSON.parse(line) as LogLine);
        for (const wake of this.waiters.splice(0)) wake();
        callback();
      },
    });
  }

  /**
   * Resolves once `count` lines with the message `msg` have been written since line `from` (an earlier
   * `lines.length`): an event the application reports, not a guess at how long it takes. Rejects after `timeoutMs`.
   */
  async waitFor(msg: string, count = 1, { from = 0, timeoutMs = 10_000 } = {}): Promise<LogLine[]> {
    const deadline = Date.now() + timeoutMs;
    const matching = () => this.lines.slice(from).filter((line) => line.msg === msg);
    while (matching().length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} log lines "${msg}", got ${matching().length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return matching();
  }
}
