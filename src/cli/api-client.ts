import { cliApiTimeoutMs } from '../config/limits.js';

/**
 * The API as `customer-api listen` and `trigger` call it: over HTTP, with an API key, like any integration (not the
 * database, as the operator commands do). Writes carry a CSRF token (GET /csrf-token), fetched once.
 */
export class ApiClient {
  private csrfToken: string | undefined;

  constructor(
    readonly apiUrl: string,
    private readonly apiKey: string,
  ) {}

  url(path: string): string {
    return new URL(path, this.apiUrl.endsWith('/') ? this.apiUrl : `${this.apiUrl}/`).href;
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'x-api-key': this.apiKey, ...extra };
  }

  async get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  /** A write, with a CSRF token; `idempotencyKey` for the routes that require one (POST /otc-exchanges). */
  async post<T>(path: string, body: unknown = {}, idempotencyKey?: string): Promise<T> {
    this.csrfToken ??= (await this.get<{ data: { csrf_token: string } }>('csrf-token')).data.csrf_token;
    return this.call<T>('POST', path, body, { 'x-csrf-token': this.csrfToken, ...(idempotencyKey === undefined ? {} : { 'idempotency-key': idempotencyKey }) });
  }

  private async call<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<T> {
    const target = this.url(path.replace(/^\//, ''));
    let response: Response;
    try {
      response = await fetch(target, {
        method,
        headers: this.headers({ ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(cliApiTimeoutMs),
      });
    } catch (error) {
      throw new Error(`${method} ${target} failed: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message} (is the server running? --api-url / CUSTOMER_API_URL)`, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`${method} /${path.replace(/^\//, '')} answered ${response.status}${errorSummary(text)}`);
    return JSON.parse(text) as T;
  }
}

/** ` CODE: message` of an error envelope, or nothing when the body is not one. */
export function errorSummary(body: string): string {
  try {
    const { error } = JSON.parse(body) as { error?: { code?: string; message?: string } };
    return error ? ` ${error.code}: ${error.message}` : '';
  } catch {
    return '';
  }
}
