import type { IncomingHttpHeaders } from 'node:http';
import { Agent, type Dispatcher } from 'undici';
import {
  webhookErrorLengthMax,
  webhookResponseBodyStoredBytesMax,
  webhookResponseBytesMax,
  webhookResponseHeaderValueLengthMax,
  webhookResponseHeadersStoredMax,
  webhookRetryAfterMsMax,
} from '../../config/limits.js';
import { guardedConnector, type HostResolver } from './address-guard.js';

/**
 * What an attempt sent and got back, kept with it for the customer to read (docs/webhooks.md "Attempts"): the
 * headers sent, and the receiver's headers and the start of its body, bounded. Null where nothing was sent or
 * nothing came back.
 */
export interface AttemptExchange {
  requestHeaders: Record<string, string> | null;
  responseHeaders: Record<string, string> | null;
  responseBody: string | null;
  responseBodyTruncated: boolean;
}

/** The exchange of an attempt that sent nothing (its event no longer exists). */
export const nothingExchanged: AttemptExchange = { requestHeaders: null, responseHeaders: null, responseBody: null, responseBodyTruncated: false };

/** What one POST to a receiver came to. */
export interface AttemptOutcome {
  succeeded: boolean;
  /** The receiver's status; null when no answer came (refused address, connection error, timeout). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The receiver's Retry-After, when it gave one. */
  retryAfterMs: number | null;
  exchange: AttemptExchange;
}

export interface SenderSettings {
  timeoutMs: number;
  allowPrivateUrls: boolean;
  resolve: HostResolver;
}

/** Retry-After: seconds, or an HTTP date; anything else is ignored. */
function parseRetryAfter(value: string | string[] | undefined, now: Date): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return null;
  const waitMs = /^[0-9]{1,10}$/.test(text.trim()) ? Number(text.trim()) * 1000 : Date.parse(text) - now.getTime();
  if (!Number.isFinite(waitMs)) return null;
  return Math.min(Math.max(waitMs, 0), webhookRetryAfterMsMax);
}

/**
 * The receiver's headers as kept: each once (a repeated one joined with ", "), at most
 * webhookResponseHeadersStoredMax of them, each value cut to webhookResponseHeaderValueLengthMax. A cookie the
 * receiver sets is its own session's, not something to show in a delivery log: its value is not kept.
 */
function keptHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers).slice(0, webhookResponseHeadersStoredMax)) {
    if (value === undefined) continue;
    const text = name.toLowerCase() === 'set-cookie' ? '(not kept)' : Array.isArray(value) ? value.join(', ') : value;
    kept[name] = text.slice(0, webhookResponseHeaderValueLengthMax);
  }
  return kept;
}

/** Why an attempt stopped reading an answer longer than webhookResponseBytesMax (its outcome is its status). */
class AnswerTooLong extends Error {}

/**
 * One POST's answer, as undici's dispatch handler receives it (node_modules/undici/docs/docs/api/Dispatcher.md): the
 * status and headers, and the body read up to webhookResponseBytesMax (beyond it the connection is dropped, as
 * undici's dump does), its first webhookResponseBodyStoredBytesMax bytes kept. Settles once, at the answer's end or at
 * its failure; a failure after the status (the timeout, the length cut) keeps what came, and the outcome is the
 * status. A handler instead of `request()`'s body stream: the stream, its async iterator and their listeners were
 * most of what an attempt allocated, and what lived until its record was written (docs/benchmarks.md).
 */
class AnswerCollector implements Dispatcher.DispatchHandler {
  statusCode: number | null = null;
  headers: IncomingHttpHeaders = {};
  readBytes = 0;
  keptBytes = 0;
  private readonly chunks: Buffer[] = [];
  private controller: Dispatcher.DispatchController | null = null;
  private abortedWith: Error | null = null;

  constructor(private readonly settle: (error: Error | null) => void) {}

  /** Ends the exchange; before undici has started it, as soon as it does (as `request()` does with its signal). */
  abort(reason: Error): void {
    if (this.controller) this.controller.abort(reason);
    else this.abortedWith ??= reason;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.abortedWith) controller.abort(this.abortedWith);
    else this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // 1xx answers are informational; the final one follows.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.readBytes += chunk.length;
    if (this.keptBytes < webhookResponseBodyStoredBytesMax) {
      const part = chunk.subarray(0, webhookResponseBodyStoredBytesMax - this.keptBytes);
      this.chunks.push(part);
      this.keptBytes += part.length;
    }
    if (this.readBytes > webhookResponseBytesMax) controller.abort(new AnswerTooLong());
  }

  onResponseEnd(): void {
    this.settle(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, error: Error): void {
    this.settle(error);
  }

  /**
   * The kept start of the body as text: invalid UTF-8 becomes U+FFFD, a character cut at the bound is left out
   * (`stream: true` holds back an incomplete one at the end), and NUL, which a PostgreSQL text column refuses, becomes
   * U+FFFD too.
   */
  bodyText(): string {
    const text = new TextDecoder('utf-8').decode(this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks), { stream: this.truncated });
    return text.replaceAll('\u0000', '\uFFFD');
  }

  get truncated(): boolean {
    return this.readBytes > this.keptBytes;
  }
}

const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function describe(error: unknown, timeoutMs: number): string {
  const failure = error as { name?: string; code?: string; message?: string; cause?: unknown };
  // The attempt's own timer and undici's connect, headers and body timeouts are all the same limit; whichever fires
  // first under load, the attempt reads the same.
  if (failure.name === 'TimeoutError' || failure.name === 'AbortError' || (failure.code !== undefined && timeoutCodes.has(failure.code))) {
    return `no answer within ${timeoutMs} ms`;
  }
  const message = failure.message ?? String(error);
  return (failure.code ? `${failure.code}: ${message}` : message).slice(0, webhookErrorLengthMax);
}

/**
 * POSTs signed events to receivers through undici with the address guard as its connector. A 2xx is a success;
 * anything else is a failure — a 3xx included, since redirects are never followed (a receiver could otherwise
 * bounce a delivery to an internal address). The answer's headers and the start of its body are kept (AnswerCollector).
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly settings: SenderSettings) {
    this.agent = new Agent({
      connect: guardedConnector({ resolve: settings.resolve, allowPrivate: settings.allowPrivateUrls, timeoutMs: settings.timeoutMs }),
      // No per-origin cap: receivers of several customers may share a host, and the delivery worker bounds attempts.
      allowH2: false,
      headersTimeout: settings.timeoutMs,
      bodyTimeout: settings.timeoutMs,
    });
  }

  async send(url: string, body: string, headers: Record<string, string>, now: () => Date, signal?: AbortSignal): Promise<AttemptOutcome> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const requestHeaders = { 'content-type': 'application/json', 'user-agent': 'customer-api-webhooks/1', ...headers };
    const noAnswer = (error: unknown): AttemptOutcome => ({
      succeeded: false,
      statusCode: null,
      durationMs: elapsed(),
      error: describe(error, this.settings.timeoutMs),
      retryAfterMs: null,
      exchange: { ...nothingExchanged, requestHeaders },
    });
    let settle: (error: Error | null) => void = () => undefined;
    const settled = new Promise<Error | null>((resolve) => (settle = resolve));
    const answer = new AnswerCollector(settle);
    // One timer, ended by the answer or by `signal`: AbortSignal.timeout joined to `signal` with AbortSignal.any cost
    // about 20 µs per attempt (docs/benchmarks.md), a tenth of a delivery's CPU.
    const timer = setTimeout(() => answer.abort(new DOMException(`no answer within ${this.settings.timeoutMs} ms`, 'TimeoutError')), this.settings.timeoutMs);
    const cutShort = () => answer.abort(signal?.reason instanceof Error ? signal.reason : new DOMException('the attempt was cut short', 'AbortError'));
    signal?.addEventListener('abort', cutShort);
    try {
      if (signal?.aborted) throw signal.reason;
      const target = new URL(url);
      this.agent.dispatch({ origin: target.origin, path: `${target.pathname}${target.search}`, method: 'POST', body, headers: requestHeaders }, answer);
      const error = await settled;
      const statusCode = answer.statusCode;
      if (statusCode === null) return noAnswer(error);
      const succeeded = statusCode >= 200 && statusCode < 300;
      return {
        succeeded,
        statusCode,
        durationMs: elapsed(),
        error: succeeded ? null : `the receiver answered ${statusCode}`,
        retryAfterMs: succeeded ? null : parseRetryAfter(answer.headers['retry-after'], now()),
        exchange: { requestHeaders, responseHeaders: keptHeaders(answer.headers), responseBody: answer.bodyText(), responseBodyTruncated: answer.truncated },
      };
    } catch (error) {
      return noAnswer(error);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cutShort);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
