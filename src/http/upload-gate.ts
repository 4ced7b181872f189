import type { FastifyInstance } from 'fastify';
import { bodyLimitDefaultBytes } from '../config/limits.js';

/** First come, first served permits. */
class Permits {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(count: number) {
    this.#free = count;
  }

  acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free -= 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free += 1;
  }
}

/**
 * Bounds the memory large uploads take (docs/documents.md "Memory"): a route that accepts bodies above the default
 * limit (end users with reports, documents) reads and handles at most `concurrency` bodies at once per process;
 * further requests wait, their bodies unread (TCP holds them back), until one finishes. A 29 MB end-user body
 * costs about 100 MB while it is parsed and decoded; six at once took the server from 105 to 607 MB.
 * Install before the routes: it attaches to each large-body route as it is added.
 */
export function installUploadGate(app: FastifyInstance, concurrency: number): void {
  const permits = new Permits(concurrency);
  app.addHook('onRoute', (route) => {
    if ((route.bodyLimit ?? 0) <= bodyLimitDefaultBytes) return;
    const waitForPermit = async (_request: unknown, reply: { raw: NodeJS.EventEmitter }) => {
      // 'close' ends every response exactly once: sent, failed, or its connection gone — possibly while waiting.
      let closed = false;
      let holding = false;
      reply.raw.once('close', () => {
        closed = true;
        if (holding) permits.release();
      });
      await permits.acquire();
      holding = true;
      if (closed) permits.release();
    };
    const existing = route.preParsing;
    route.preParsing = [...(existing === undefined ? [] : Array.isArray(existing) ? existing : [existing]), waitForPermit as never];
  });
}
