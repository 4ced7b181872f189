import type { ServerResponse } from 'node:http';
import {
  eventStreamBatchSize,
  eventStreamHeartbeatMs,
  eventStreamLateCommitGraceMs,
  eventStreamPollIntervalMs,
  eventStreamsPerCustomerMax,
} from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import { readableEventTypes } from '../../events/catalog.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { eventsAfterSequence, newestSequence, type StreamedEvent } from './repository.js';

/**
 * One SSE message: the stream's cursor after it as its id (an event committed late, behind the cursor, carries the
 * cursor, so a resume from it repeats nothing), the type as its event name, the delivered body (one JSON line) as data.
 */
function sseMessage(event: StreamedEvent, cursor: number): string {
  return `id: ${cursor}\nevent: ${event.event_type}\ndata: ${event.payload}\n\n`;
}

/**
 * The live event streams of this instance (docs/webhooks.md "Event stream"): each sends its customer's events, as far
 * as the key may read them, in outbox order, woken by this instance's commits and polling for other instances'.
 */
export class EventStreams {
  private readonly openPerCustomer = new Map<string, number>();
  private readonly streams = new Set<EventStream>();
  private closed = false;

  constructor(private readonly storage: Storage) {
    // One listener for all streams: the commit signal has no way to remove one.
    storage.committed.listen(() => {
      for (const stream of this.streams) stream.wake();
    });
  }

  /** Refuses (429) a customer's stream beyond the limit; otherwise takes its slot until `release`. */
  reserve(customerId: string): () => void {
    const open = this.openPerCustomer.get(customerId) ?? 0;
    if (open >= eventStreamsPerCustomerMax) {
      throw new DomainError('RATE_LIMITED', `At most ${eventStreamsPerCustomerMax} event streams may be open per customer; close one first.`, { limit: eventStreamsPerCustomerMax });
    }
    this.openPerCustomer.set(customerId, open + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.openPerCustomer.get(customerId) ?? 1) - 1;
      if (left === 0) this.openPerCustomer.delete(customerId);
      else this.openPerCustomer.set(customerId, left);
    };
  }

  /** Where a stream without a cursor starts: after the customer's newest event, so it sends only new ones. */
  async currentCursor(customerId: string): Promise<number> {
    return newestSequence(this.storage.db, customerId);
  }

  /** Sends the caller's events after `afterSequence` on `response` until the client leaves or the server stops. */
  async run(caller: AuthenticatedKey, afterSequence: number, response: ServerResponse, release: () => void): Promise<void> {
    const lateCommitGraceMs = this.storage.dialect === 'postgres' ? eventStreamLateCommitGraceMs : 0;
    const stream = new EventStream(this.storage, caller, afterSequence, response, lateCommitGraceMs);
    this.streams.add(stream);
    if (this.closed) stream.close();
    try {
      await stream.run();
    } finally {
      this.streams.delete(stream);
      release();
    }
  }

  /** Ends every stream (the server is stopping): clients reconnect, with their cursor, to another instance. */
  closeAll(): void {
    this.closed = true;
    for (const stream of this.streams) stream.close();
  }
}

class EventStream {
  private readonly readableTypes: string[] | undefined;
  /** Sequences sent that are above `floor`, where a late commit may still appear (PostgreSQL). */
  private readonly sentAboveFloor = new Set<number>();
  /** The cursor as it was at each poll of the grace window: the floor is the one from `lateCommitGraceMs` ago. */
  private readonly cursorHistory: Array<{ atMs: number; cursor: number }> = [];
  private floor: number;
  private cursor: number;
  private ended = false;
  private wakeUp: (() => void) | undefined;
  private woken = false;

  constructor(
    private readonly storage: Storage,
    private readonly caller: AuthenticatedKey,
    afterSequence: number,
    private readonly response: ServerResponse,
    private readonly lateCommitGraceMs: number,
  ) {
    this.readableTypes = readableEventTypes(caller.scopes);
    this.floor = afterSequence;
    this.cursor = afterSequence;
    response.on('close', () => this.close());
  }

  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.wakeUp?.();
    if (!this.response.writableEnded) this.response.end();
  }

  async run(): Promise<void> {
    let lastWriteMs = Date.now();
    while (!this.ended) {
      this.woken = false;
      const events = await this.nextEvents();
      if (this.ended) break;
      if (events.length > 0) {
        const flushed = this.response.write(events.map(({ event, cursor }) => sseMessage(event, cursor)).join(''));
        lastWriteMs = Date.now();
        if (!flushed) await new Promise<void>((resolve) => this.response.once('drain', resolve).once('close', resolve));
        // A full batch: more are waiting, read on at once.
        if (events.length >= eventStreamBatchSize) continue;
      } else if (Date.now() - lastWriteMs >= eventStreamHeartbeatMs) {
        this.response.write(': heartbeat\n\n');
        lastWriteMs = Date.now();
      }
      if (!this.woken) await this.sleep(eventStreamPollIntervalMs);
    }
  }

  /** The events after the cursor, and on PostgreSQL those committed late behind it (within the grace window). */
  private async nextEvents(): Promise<Array<{ event: StreamedEvent; cursor: number }>> {
    const nowMs = Date.now();
    this.cursorHistory.push({ atMs: nowMs, cursor: this.cursor });
    while (this.cursorHistory.length > 0 && this.cursorHistory[0]!.atMs <= nowMs - this.lateCommitGraceMs) {
      this.floor = Math.max(this.floor, this.cursorHistory.shift()!.cursor);
    }
    for (const sequence of this.sentAboveFloor) if (sequence <= this.floor) this.sentAboveFloor.delete(sequence);
    // Reading `sentAboveFloor.size` more rows than a batch leaves room for a whole batch of unsent ones.
    const rows = await eventsAfterSequence(this.storage.db, this.caller.customerId, this.readableTypes, this.floor, eventStreamBatchSize + this.sentAboveFloor.size);
    const unsent = rows.filter((row) => !this.sentAboveFloor.has(row.sequence)).slice(0, eventStreamBatchSize);
    const messages = unsent.map((event) => {
      this.cursor = Math.max(this.cursor, event.sequence);
      if (this.lateCommitGraceMs > 0) this.sentAboveFloor.add(event.sequence);
      return { event, cursor: this.cursor };
    });
    if (this.lateCommitGraceMs === 0) this.floor = this.cursor;
    return messages;
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = undefined;
  }
}
