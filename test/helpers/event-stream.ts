import { fetch, type Dispatcher, type Response } from 'undici';

/** One message of GET /events/stream. */
export interface StreamMessage {
  id: string;
  event: string;
  data: { id: string; type: string; created_at: string; data: Record<string, unknown> };
}

/**
 * A client of GET /events/stream over real HTTP (fetch): it parses the server-sent events as they arrive, and a test
 * waits for the next ones with a bound.
 */
export class EventStreamClient {
  readonly messages: StreamMessage[] = [];
  ended = false;
  private readonly abort = new AbortController();
  private waiters: Array<() => void> = [];

  private constructor(readonly response: Response) {}

  static async open(url: string, headers: Record<string, string>, dispatcher: Dispatcher): Promise<EventStreamClient> {
    const abort = new AbortController();
    const response = await fetch(url, { headers, signal: abort.signal, dispatcher });
    const client = new EventStreamClient(response);
    client.abort.signal.addEventListener('abort', () => abort.abort());
    if (response.status === 200) void client.read();
    return client;
  }

  private async read(): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of this.response.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = new Map<string, string>();
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) continue;
            const colon = line.indexOf(': ');
            fields.set(line.slice(0, colon), line.slice(colon + 2));
          }
          if (!fields.has('data')) continue;
          this.messages.push({ id: fields.get('id')!, event: fields.get('event')!, data: JSON.parse(fields.get('data')!) as StreamMessage['data'] });
          this.notify();
        }
      }
    } catch {
      // Aborted by close().
    }
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves once `count` messages have arrived, or the stream has ended (bounded: rejects after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 5_000): Promise<StreamMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.messages.length < count && !this.ended) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} stream messages, got ${this.messages.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.messages;
  }

  /** Resolves once the server has ended the stream (bounded). */
  async waitForEnd(timeoutMs = 5_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('the stream did not end');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, deadline - Date.now());
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.abort.abort();
  }
}
