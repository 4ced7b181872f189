import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyLimitDefaultBytes, uploadRateStepsPerWindow } from '../config/limits.js';
import { DomainError } from '../errors.js';
import { PerKeyLimiter } from '../storage/per-key-limiter.js';

export interface UploadGateOptions {
  /** Large bodies read at once per process, and of one uploader (a customer's API keys, or one onboarding link). */
  concurrency: number;
  concurrencyPerCustomer: number;
  /** A body arriving slower than this over the last window is cut. */
  minBytesPerSecond: number;
  rateWindowMs: number;
}

/** The end of a request's response (sent, failed, or its connection gone), watched from its first hook on. */
interface ResponseEnd {
  done: boolean;
  ended: Promise<void>;
}
const responseEnds = new WeakMap<FastifyRequest, ResponseEnd>();

/** Uploaders of requests whose caller is not an API key (a hosted onboarding link), set by the route's own hook. */
const uploaders = new WeakMap<FastifyRequest, string>();

/**
 * Who a large upload counts against when the route's caller is not an API key: a route without one checks its
 * caller in an onRequest or preParsing hook of its own and names it here, before the gate runs. A hosted onboarding
 * link is its own uploader, not its customer: whoever holds a link must not take the permits of the customer's own
 * API uploads.
 */
export function countUploadAgainst(request: FastifyRequest, uploader: string): void {
  uploaders.set(request, uploader);
}

function uploaderOf(request: FastifyRequest): string {
  const uploader = uploaders.get(request) ?? (request.apiKey ? `customer:${request.apiKey.customerId}` : undefined);
  // Every large-body route is private (authenticated on its headers) or names its uploader: a permit is never
  // given to a caller nobody checked.
  if (uploader === undefined) throw new Error(`${request.routeOptions.url ?? request.url}: a large-body route must check its caller before the body is read`);
  return uploader;
}

/**
 * Waits for a slot of `key` and holds it until `ended` settles (at once if it already has). A wait is logged (debug):
 * it tells an operator why an upload is slow to start, and a test that the upload has reached the gate.
 */
function hold(limiter: PerKeyLimiter, key: string, ended: Promise<void>, log: FastifyBaseLogger): Promise<void> {
  if (limiter.isFull(key)) log.debug({ permit: key }, 'upload waits for a permit, its body unread');
  return new Promise((granted) => {
    void limiter.run(key, () => {
      granted();
      return ended;
    });
  });
}

function tooSlow(options: UploadGateOptions): DomainError {
  const windowSeconds = options.rateWindowMs / 1000;
  return new DomainError(
    'REQUEST_TIMEOUT',
    `The request body arrived too slowly: less than ${options.minBytesPerSecond} bytes a second over ${windowSeconds} s. Send it again on a steadier connection.`,
    { min_bytes_per_second: options.minBytesPerSecond, window_seconds: windowSeconds },
  );
}

/**
 * Cuts a body that arrives slower than the minimum rate over a sliding window. Counting starts when the body is
 * first read (the stream starts flowing): the time the request waited for its permit, unread, is not the client's.
 * The cut fails the body stream with 408 REQUEST_TIMEOUT, so that whoever reads it (Fastify's body parser, the
 * multipart reader of the onboarding page) answers it through the route's own error handler — the envelope, or a
 * page — and the connection is closed after that answer, the rest of the body unread.
 */
function cutWhenTooSlow(request: FastifyRequest, reply: FastifyReply, end: ResponseEnd, options: UploadGateOptions): void {
  const body = request.raw;
  const minBytesPerWindow = (options.minBytesPerSecond * options.rateWindowMs) / 1000;
  body.once('resume', () => {
    let received = 0;
    const count = (chunk: Buffer) => {
      received += chunk.length;
    };
    /** Bytes received at each of the last steps, oldest first: the first is one window ago once full. */
    const receivedAtSteps = [0];
    const stop = () => {
      clearInterval(timer);
      body.off('data', count);
    };
    const step = () => {
      if (body.complete || end.done) return stop();
      receivedAtSteps.push(received);
      if (receivedAtSteps.length <= uploadRateStepsPerWindow) return;
      const windowStart = receivedAtSteps.shift() ?? 0;
      if (received - windowStart >= minBytesPerWindow) return;
      stop();
      // Nobody listening means nobody reads the body any more: there is no read to cut.
      if (body.listenerCount('error') === 0) return;
      reply.header('connection', 'close');
      body.emit('error', tooSlow(options));
    };
    body.on('data', count);
    const timer = setInterval(step, options.rateWindowMs / uploadRateStepsPerWindow).unref();
    void end.ended.then(stop);
  });
}

/**
 * Bounds the memory large uploads take (docs/documents.md "Memory") and what one customer can hold of it: on a
 * route that accepts bodies above the default limit (end users with reports, documents, the hosted onboarding
 * upload), a body larger than that default is read only with a permit of its uploader (`concurrencyPerCustomer`:
 * the customer for its API keys, each hosted onboarding link on its own)
 * and one of the process (`concurrency`); further ones wait, unread (TCP holds them back), until one finishes. A
 * 29 MB end-user body costs about 100 MB while it is parsed and decoded; six at once took the server from 105 to
 * 607 MB. Small bodies on those routes (an end user without reports) pass ungated.
 *
 * The permits are taken after the caller is checked on the request's headers (authentication, scope and CSRF are
 * instance onRequest hooks; the onboarding link is the route's own hook), so a refused request never holds one.
 * A permitted body must keep arriving at `minBytesPerSecond` over `rateWindowMs`, or it is cut (408): a client that
 * sends headers and then stalls gives its permit back within seconds, not at the 300 s request timeout.
 *
 * Permits are given back when the response ends — sent, failed, or its connection closed — and the watch on that
 * starts with the request's first hook, so a client that goes away while the request waits, or before it waits,
 * cannot keep one. Install before the routes: it attaches to each large-body route as it is added.
 */
export function installUploadGate(app: FastifyInstance, options: UploadGateOptions): void {
  const perUploader = new PerKeyLimiter(options.concurrencyPerCustomer);
  const perProcess = new PerKeyLimiter(options.concurrency);

  const watchEnd = async (request: FastifyRequest, reply: FastifyReply) => {
    // The instance hooks (authentication…) ran first: the connection may already be gone, its 'close' emitted.
    const socket = request.raw.socket as { destroyed?: boolean } | null;
    let markEnded!: () => void;
    const end: ResponseEnd = { done: false, ended: new Promise((resolve) => (markEnded = resolve)) };
    const finish = () => {
      end.done = true;
      markEnded();
    };
    responseEnds.set(request, end);
    if (reply.raw.destroyed || reply.raw.writableEnded || socket === null || socket.destroyed === true) finish();
    else reply.raw.once('close', finish);
  };

  const waitForPermits = async (request: FastifyRequest, reply: FastifyReply) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared <= bodyLimitDefaultBytes) return;
    const end = responseEnds.get(request);
    if (!end || end.done) return;
    // The uploader's permit first: its queued uploads wait without holding one of the process.
    await hold(perUploader, uploaderOf(request), end.ended, request.log);
    await hold(perProcess, 'process', end.ended, request.log);
    if (end.done) return;
    request.log.debug('upload permitted: its body is read');
    cutWhenTooSlow(request, reply, end, options);
  };

  app.addHook('onRoute', (route) => {
    if ((route.bodyLimit ?? 0) <= bodyLimitDefaultBytes) return;
    const asArray = <T>(hooks: T | T[] | undefined): T[] => (hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks]);
    route.onRequest = [watchEnd, ...asArray(route.onRequest)];
    route.preParsing = [...asArray(route.preParsing), waitForPermits];
  });
}
