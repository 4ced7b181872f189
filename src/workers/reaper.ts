import type { Clock } from '../clock.js';

/**
 * One kind of row that expires: its owner deletes up to `limit` of those expired at `now`, oldest first, in one
 * short statement (workers/claim.ts `deleteDue`), and says how many went.
 */
type ExpiredRows = (now: Date, limit: number) => Promise<number>;

/**
 * The one reaper (docs/operations.md "Retention"): the owners of rows that expire (events, webhook deliveries and
 * their attempts; OTC quotes never confirmed; Idempotency-Keys; dashboard sessions and sign-in links; finished
 * provider operations) register how their rows are deleted, and each pass deletes one batch of each kind. Its worker
 * runs the next pass at once while a pass deleted something and waits its interval otherwise, so a backlog goes a
 * batch at a time and no statement holds a lock for long; every instance may run it, since the deletions skip the
 * rows another has picked.
 */
export class Reaper {
  private readonly kinds: ExpiredRows[] = [];

  constructor(
    private readonly clock: Clock,
    private readonly batchRows: number,
  ) {}

  add(kind: ExpiredRows): void {
    this.kinds.push(kind);
  }

  /** One batch of each kind; how many rows went in all. */
  async pass(): Promise<number> {
    const now = this.clock.now();
    let deleted = 0;
    for (const kind of this.kinds) deleted += await kind(now, this.batchRows);
    return deleted;
  }
}
