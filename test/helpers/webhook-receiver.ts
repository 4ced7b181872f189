import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

/**
 * What the receiver answers a request with (the body "ok" unless given); `hang` holds the request open until
 * answerHanging() or close(); `stall` sends the status, headers and body, and never ends the body.
 */
export type ReceiverAnswer = { status: number; headers?: Record<string, string>; body?: string | Buffer; stall?: boolean } | 'hang';

/**
 * A real HTTP receiver on a loopback port: it records every request (and every connection, so a test can assert
 * that none was opened) and answers what `answer` says.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  connections = 0;
  answer: (request: ReceivedWebhook) => ReceiverAnswer = () => ({ status: 200 });
  private readonly server: http.Server;
  private readonly hanging = new Set<http.ServerResponse>();
  private waiters: Array<() => void> = [];

  constructor() {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const received: ReceivedWebhook = {
          path: request.url ?? '/',
          headers: Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)])),
          body: Buffer.concat(chunks).toString('utf8'),
          at: Date.now(),
        };
        this.received.push(received);
        for (const wake of this.waiters.splice(0)) wake();
        const answer = this.answer(received);
        if (answer === 'hang') {
          this.hanging.add(response);
          return;
        }
        response.writeHead(answer.status, answer.headers ?? {});
        if (answer.stall) {
          response.write(answer.body ?? 'ok');
          this.hanging.add(response);
          return;
        }
        response.end(answer.body ?? 'ok');
      });
    });
    this.server.on('connection', () => (this.connections += 1));
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return this;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  url(path = '/hooks'): string {
    return `http://127.0.0.1:${this.port}${path}`;
  }

  /** Resolves once at least `count` requests have arrived (bounded: rejects after `timeoutMs`). */
  async waitFor(count: number, timeoutMs = 10_000): Promise<ReceivedWebhook[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`expected ${count} webhooks, got ${this.received.length}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return this.received;
  }

  /** Answers every request held open so far (`hang`) with 200 "ok", as a receiver that was slow and caught up. */
  answerHanging(): void {
    for (const response of this.hanging) {
      if (!response.headersSent) response.writeHead(200);
      response.end('ok');
    }
    this.hanging.clear();
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
