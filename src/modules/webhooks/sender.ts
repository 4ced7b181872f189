import { Agent, request } from 'undici';
import { webhookErrorLengthMax, webhookResponseBytesMax, webhookRetryAfterMsMax } from '../../config/limits.js';
import { guardedConnector, type HostResolver } from './address-guard.js';

/** What one POST to a receiver came to. */
export interface AttemptOutcome {
  succeeded: boolean;
  /** The receiver's status; null when no answer came (refused address, connection error, timeout). */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** The receiver's Retry-After, when it gave one. */
  retryAfterMs: number | null;
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
 * bounce a delivery to an internal address). The answer's body is read up to a bound and dropped.
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
    const timeout = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const response = await request(url, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', 'user-agent': 'customer-api-webhooks/1', ...headers },
        dispatcher: this.agent,
        signal: signal ? AbortSignal.any([timeout, signal]) : timeout,
      });
      await response.body.dump({ limit: webhookResponseBytesMax }).catch(() => undefined);
      const succeeded = response.statusCode >= 200 && response.statusCode < 300;
      return {
        succeeded,
        statusCode: response.statusCode,
        durationMs: elapsed(),
        error: succeeded ? null : `the receiver answered ${response.statusCode}`,
        retryAfterMs: succeeded ? null : parseRetryAfter(response.headers['retry-after'], now()),
      };
    } catch (error) {
      return { succeeded: false, statusCode: null, durationMs: elapsed(), error: describe(error, this.settings.timeoutMs), retryAfterMs: null };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
