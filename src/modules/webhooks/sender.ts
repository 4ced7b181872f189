import { Agent, request } from 'undici';
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

/**
 * Reads the answer's body up to webhookResponseBytesMax (beyond it the connection is dropped, as undici's dump
 * does) and keeps its first webhookResponseBodyStoredBytesMax bytes as text: invalid UTF-8 becomes U+FFFD, a
 * character cut at the bound is left out, and NUL, which a PostgreSQL text column refuses, becomes U+FFFD too. A body
 * cut short (the timeout) keeps what came.
 */
async function keptBody(body: AsyncIterable<Buffer>): Promise<{ text: string; truncated: boolean }> {
  const chunks: Buffer[] = [];
  let keptBytes = 0;
  let readBytes = 0;
  try {
    for await (const chunk of body) {
      readBytes += chunk.length;
      if (keptBytes < webhookResponseBodyStoredBytesMax) {
        const part = chunk.subarray(0, webhookResponseBodyStoredBytesMax - keptBytes);
        chunks.push(part);
        keptBytes += part.length;
      }
      if (readBytes > webhookResponseBytesMax) break;
    }
  } catch {
    // What came before the failure is kept; the attempt's outcome is its status.
  }
  // `stream: true` holds back an incomplete character at the end instead of decoding it as U+FFFD.
  const text = new TextDecoder('utf-8').decode(Buffer.concat(chunks), { stream: readBytes > keptBytes });
  return { text: text.replaceAll('\u0000', '\uFFFD'), truncated: readBytes > keptBytes };
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
 * bounce a delivery to an internal address). The answer's headers and the start of its body are kept (keptBody).
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
    // One controller, ended by a plain timer or by `signal`: AbortSignal.timeout joined to `signal` with
    // AbortSignal.any cost about 20 µs per attempt (docs/benchmarks.md), a tenth of a delivery's CPU.
    const attempt = new AbortController();
    const timer = setTimeout(() => attempt.abort(new DOMException(`no answer within ${this.settings.timeoutMs} ms`, 'TimeoutError')), this.settings.timeoutMs);
    const cutShort = () => attempt.abort(signal?.reason);
    if (signal?.aborted) cutShort();
    else signal?.addEventListener('abort', cutShort);
    try {
      const response = await request(url, { method: 'POST', body, headers: requestHeaders, dispatcher: this.agent, signal: attempt.signal });
      const answer = await keptBody(response.body);
      const succeeded = response.statusCode >= 200 && response.statusCode < 300;
      return {
        succeeded,
        statusCode: response.statusCode,
        durationMs: elapsed(),
        error: succeeded ? null : `the receiver answered ${response.statusCode}`,
        retryAfterMs: succeeded ? null : parseRetryAfter(response.headers['retry-after'], now()),
        exchange: { requestHeaders, responseHeaders: keptHeaders(response.headers), responseBody: answer.text, responseBodyTruncated: answer.truncated },
      };
    } catch (error) {
      return {
        succeeded: false,
        statusCode: null,
        durationMs: elapsed(),
        error: describe(error, this.settings.timeoutMs),
        retryAfterMs: null,
        exchange: { ...nothingExchanged, requestHeaders },
      };
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', cutShort);
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
