import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

/** Whether the response of a request has ended (sent, failed, or its connection gone), from its first hook on. */
const ended = new WeakMap<FastifyRequest, { done: boolean; onDone?: () => void }>();

/**
 * Bounds the memory large uploads take (docs/documents.md "Memory"): on a route that accepts bodies above the
 * default limit (end users with reports, documents), a body larger than that default is read and handled at most
 * `concurrency` at a time per process; further ones wait, unread (TCP holds them back), until one finishes. A
 * 29 MB end-user body costs about 100 MB while it is parsed and decoded; six at once took the server from 105 to
 * 607 MB. Small bodies on those routes (an end user without reports) pass ungated.
 *
 * The permit is given back when the response ends — sent, failed, or its connection closed — and the watch on
 * that starts with the request's first hook, so a client that goes away while the request waits, or before it
 * waits, cannot keep a permit. Install before the routes: it attaches to each large-body route as it is added.
 */
export function installUploadGate(app: FastifyInstance, concurrency: number): void {
  const permits = new Permits(concurrency);

  const watchEnd = async (request: FastifyRequest, reply: FastifyReply) => {
    // The instance hooks (authentication…) ran first: the connection may already be gone, its 'close' emitted.
    const socket = request.raw.socket as { destroyed?: boolean } | null;
    const state: { done: boolean; onDone?: () => void } = { done: reply.raw.destroyed || reply.raw.writableEnded || socket === null || socket.destroyed === true };
    ended.set(request, state);
    reply.raw.once('close', () => {
      state.done = true;
      state.onDone?.();
    });
  };

  const waitForPermit = async (request: FastifyRequest) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared <= bodyLimitDefaultBytes) return;
    const state = ended.get(request);
    if (!state || state.done) return;
    await permits.acquire();
    if (state.done) {
      permits.release();
      return;
    }
    state.onDone = () => permits.release();
  };

  app.addHook('onRoute', (route) => {
    if ((route.bodyLimit ?? 0) <= bodyLimitDefaultBytes) return;
    const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);
    route.onRequest = [watchEnd as never, ...asArray(route.onRequest)];
    route.preParsing = [...asArray(route.preParsing), waitForPermit as never];
  });
}
