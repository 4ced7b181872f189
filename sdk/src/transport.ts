import { CustomerApiConnectionError } from './errors.js';

export interface TransportOptions {
  apiKey: string;
  apiVersion: string;
  baseUrl: string;
  maxRetries: number;
  timeoutMs: number;
  fetch: typeof globalThis.fetch;
  /** Waits between attempts; a test may pass one that advances its own clock. */
  sleep: (ms: number) => Promise<void>;
  userAgent: string;
}

const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Statuses after which the server did nothing, whatever the request: it refused before any work. */
const refusedBeforeWork = new Set([429]);
/** Statuses after which the request may or may not have been carried out (a retry needs an Idempotency-Key). */
const ambiguous = new Set([500, 502, 503, 504, 507]);
const backoffBaseMs = 500;
const backoffMaxMs = 8_000;
const retryAfterMaxMs = 60_000;

/** Retry-After in seconds or as an HTTP date, in milliseconds; null when absent or unreadable. */
function retryAfterMs(response: Response): number | null {
  const value = response.headers.get('retry-after')?.trim();
  if (!value) return null;
  const waitMs = /^[0-9]+$/.test(value) ? Number(value) * 1000 : Date.parse(value) - Date.now();
  return Number.isFinite(waitMs) ? Math.min(Math.max(waitMs, 0), retryAfterMaxMs) : null;
}

/** Exponential backoff with full jitter: a random wait up to base × 2^attempt, capped. */
function backoffMs(attempt: number): number {
  return Math.random() * Math.min(backoffMaxMs, backoffBaseMs * 2 ** attempt);
}

async function errorCodeOf(response: Response): Promise<string | undefined> {
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The fetch the generated client calls: it adds the key, the version and, on writes, the CSRF token it fetches and
 * refreshes by itself, and it retries what is safe to retry (docs/sdk.md "Retries"):
 * - 429 and 503 SHUTTING_DOWN, always: the server refused before any work; after Retry-After;
 * - 409 IDEMPOTENCY_KEY_IN_USE: the first request with this key is still running; the retry gets its answer;
 * - 403 CSRF_TOKEN_INVALID, once, with a fresh token;
 * - 5xx, a timeout or a failed connection only when the request is safe to repeat: a GET, or a request with an
 *   Idempotency-Key (kept across the retries). Anything else — `POST /payments` above all — is not repeated blindly.
 */
export function createTransport(options: TransportOptions): typeof globalThis.fetch {
  let csrfToken: Promise<string> | undefined;
  const fetchCsrfToken = async (): Promise<string> => {
    const response = await options.fetch(`${options.baseUrl}/csrf-token`, { headers: { 'x-api-key': options.apiKey, 'x-api-version': options.apiVersion, 'user-agent': options.userAgent } });
    if (!response.ok) throw new CustomerApiConnectionError(`GET /csrf-token answered ${response.status}`, await response.text());
    return ((await response.json()) as { data: { csrf_token: string } }).data.csrf_token;
  };
  const currentCsrfToken = (refresh: boolean) => {
    if (refresh || csrfToken === undefined) {
      csrfToken = fetchCsrfToken();
      // A failed fetch is not kept: the next request tries again.
      csrfToken.catch(() => (csrfToken = undefined));
    }
    return csrfToken;
  };

  return async (input: Parameters<typeof globalThis.fetch>[0], init?: RequestInit): Promise<Response> => {
    const original = new Request(input, init);
    const body = original.body === null ? undefined : await original.arrayBuffer();
    const write = writeMethods.has(original.method);
    const repeatable = !write || original.headers.has('idempotency-key');
    let refreshCsrf = false;
    let csrfRetried = false;
    for (let attempt = 0; ; attempt += 1) {
      const headers = new Headers(original.headers);
      headers.set('x-api-key', options.apiKey);
      headers.set('x-api-version', options.apiVersion);
      headers.set('user-agent', options.userAgent);
      if (write) headers.set('x-csrf-token', await currentCsrfToken(refreshCsrf));
      refreshCsrf = false;
      const timeout = AbortSignal.timeout(options.timeoutMs);
      const signal = AbortSignal.any([original.signal, timeout]);
      let response: Response;
      try {
        response = await options.fetch(new Request(original.url, { method: original.method, headers, body, signal }));
      } catch (error) {
        // The caller's own abort ends it at once.
        if (original.signal.aborted) throw error;
        if (repeatable && attempt < options.maxRetries) {
          await options.sleep(backoffMs(attempt));
          continue;
        }
        const what = timeout.aborted ? `no answer within ${options.timeoutMs} ms` : 'the connection failed';
        throw new CustomerApiConnectionError(`${original.method} ${new URL(original.url).pathname}: ${what}${repeatable ? '' : '; not retried, since it may have been carried out'}`, error);
      }
      if (response.ok || attempt >= options.maxRetries) return response;
      const status = response.status;
      if (status === 403 && !csrfRetried && write && (await errorCodeOf(response)) === 'CSRF_TOKEN_INVALID') {
        csrfRetried = true;
        refreshCsrf = true;
        continue;
      }
      const code = refusedBeforeWork.has(status) ? undefined : await errorCodeOf(response);
      const retry =
        refusedBeforeWork.has(status) ||
        // An instance that is shutting down refuses before any work, like a 429.
        (status === 503 && code === 'SHUTTING_DOWN') ||
        (status === 409 && code === 'IDEMPOTENCY_KEY_IN_USE') ||
        (ambiguous.has(status) && repeatable);
      if (!retry) return response;
      await options.sleep(retryAfterMs(response) ?? backoffMs(attempt));
    }
  };
}
