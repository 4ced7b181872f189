import createClient, { type Client, type MaybeOptionalInit } from 'openapi-fetch';
import type { SuccessResponseJSON } from 'openapi-typescript-helpers';
import { CustomerApiError } from './errors.js';
import { operations } from './operations.js';
import type { paths } from './schema.js';
import { createTransport } from './transport.js';

export type OperationName = keyof typeof operations;
type Operations = typeof operations;
type PathOf<K extends OperationName> = Operations[K]['path'];
type MethodOf<K extends OperationName> = Operations[K]['method'];

/** What every call also takes: an Idempotency-Key of your choosing (operations that take one), an abort signal. */
export interface CallOptions {
  /**
   * For operations that take an Idempotency-Key (docs/idempotency.md): the client makes one per call when you give
   * none, and keeps it across its own retries. Give your own to make a retry of yours safe too (after a crash, say).
   */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** The request of an operation: `params` (`path`, `query`), `body`, as the OpenAPI document types them. */
export type RequestOf<K extends OperationName> = MaybeOptionalInit<paths[PathOf<K>], MethodOf<K>> & CallOptions;
/** The parsed 2xx answer of an operation: the `{ data, meta? }` envelope. */
export type ResponseOf<K extends OperationName> = SuccessResponseJSON<NonNullable<paths[PathOf<K>][MethodOf<K>]>>;
type Arguments<K extends OperationName> = Operations[K]['needsInit'] extends true ? [request: RequestOf<K>] : [request?: RequestOf<K>];

/** One method per operation, named by its operationId: `createPayment`, `listTransactions`, … */
export type OperationMethods = { [K in OperationName]: (...request: Arguments<K>) => Promise<ResponseOf<K>> };

/** The operations whose answer is a page (`meta.pagination`). */
export type PagedOperationName = { [K in OperationName]: ResponseOf<K> extends { meta: { pagination: unknown } } ? K : never }[OperationName];
type ItemOf<K extends PagedOperationName> = ResponseOf<K> extends { data: (infer Item)[] } ? Item : never;

export interface CustomerApiOptions {
  /** The API key (docs/authentication.md). */
  apiKey: string;
  /** Where the server is, without a version: `http://localhost:3000`. */
  baseUrl: string;
  /** `v1` (the default) or `v2`. */
  apiVersion?: 'v1' | 'v2';
  /** Retries of what is safe to retry (docs/sdk.md "Retries"); 2 by default. */
  maxRetries?: number;
  /** Each attempt's time limit; 60 s by default. */
  timeoutMs?: number;
  /** A fetch of your own (a proxy agent, instrumentation); the global one by default. */
  fetch?: typeof globalThis.fetch;
  /** How to wait between attempts; `setTimeout` by default. Tests may pass one that advances their own clock. */
  sleep?: (ms: number) => Promise<void>;
}

const version = '0.1.0';

/**
 * The Customer API client. Every operation of the OpenAPI document is a method named by its operationId, typed from
 * the document, resolving to the answer's body or rejecting with a `CustomerApiError` (or a
 * `CustomerApiConnectionError` when no answer came). CSRF tokens, Idempotency-Keys and safe retries are handled.
 *
 * ```ts
 * const api = new CustomerApi({ apiKey: process.env.CUSTOMER_API_KEY!, baseUrl: 'http://localhost:3000' });
 * const { data: account } = await api.createFiatAccount({ body: { accountName: 'Operating', currency: 'EUR' } });
 * ```
 */
// The class and the interface below are one type: the interface declares the per-operation methods the constructor
// defines from the operations table, which TypeScript cannot see on its own.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class CustomerApi {
  /** The openapi-fetch client underneath, for a call by path: `api.raw.GET('/payments/{id}', …)`. */
  readonly raw: Client<paths>;

  constructor(options: CustomerApiOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    const transport = createTransport({
      apiKey: options.apiKey,
      apiVersion: options.apiVersion ?? 'v1',
      baseUrl,
      maxRetries: options.maxRetries ?? 2,
      timeoutMs: options.timeoutMs ?? 60_000,
      fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
      sleep: options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms))),
      userAgent: `customer-api-sdk-typescript/${version}`,
    });
    this.raw = createClient<paths>({ baseUrl, fetch: transport });
    for (const name of Object.keys(operations) as OperationName[]) {
      Object.defineProperty(this, name, { value: (request?: RequestOf<typeof name>) => this.call(name, request), enumerable: false });
    }
  }

  private async call<K extends OperationName>(name: K, request: RequestOf<K> | undefined): Promise<ResponseOf<K>> {
    const { method, path, idempotent } = operations[name];
    const { idempotencyKey, ...init } = (request ?? {}) as CallOptions & { headers?: Record<string, string> };
    const headers: Record<string, string> = { ...init.headers };
    if (idempotent) headers['idempotency-key'] = idempotencyKey ?? crypto.randomUUID();
    const { data, error, response } = await (this.raw.request as (method: string, path: string, init: object) => Promise<{ data?: unknown; error?: unknown; response: Response }>)(
      method,
      path,
      { ...init, headers },
    );
    if (!response.ok) throw CustomerApiError.from(response, error);
    return data as ResponseOf<K>;
  }

  /**
   * Every item of a paged list, page after page (`limit` per page, 100 at most), as one async sequence:
   * `for await (const transaction of api.paginate('listTransactions', { params: { query: { limit: 100 } } }))`.
   * Lists are newest first, so an item created meanwhile shifts the pages: an item seen twice is given once.
   */
  async *paginate<K extends PagedOperationName>(name: K, ...request: Arguments<K>): AsyncGenerator<ItemOf<K>> {
    const base = (request[0] ?? {}) as { params?: { query?: Record<string, unknown> } };
    const seen = new Set<unknown>();
    for (let page = 1; ; page += 1) {
      const init = { ...base, params: { ...base.params, query: { ...base.params?.query, page } } };
      const answer = (await this.call(name, init as RequestOf<K>)) as { data: ItemOf<K>[]; meta: { pagination: { page: number; limit: number; total: number } } };
      for (const item of answer.data) {
        const id = (item as { id?: unknown }).id;
        if (id !== undefined && seen.has(id)) continue;
        if (id !== undefined) seen.add(id);
        yield item;
      }
      const { limit, total } = answer.meta.pagination;
      if (answer.data.length === 0 || page * limit >= total) return;
    }
  }

  /**
   * The payments with this reference (created at or after `createdFrom`, when given), newest first. `POST /payments`
   * takes no Idempotency-Key, so after an ambiguous failure (a `CustomerApiConnectionError`, or a 5xx) look the
   * payment up before creating it again: a payment found was created (docs/sdk.md "Payments and ambiguous failures").
   */
  async findPayments(reference: string, options: { createdFrom?: string } = {}): Promise<ResponseOf<'listPayments'>['data']> {
    const query = { reference, limit: 100, ...(options.createdFrom === undefined ? {} : { created_from: options.createdFrom }) };
    return (await this.call('listPayments', { params: { query } })).data;
  }
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-object-type
export interface CustomerApi extends OperationMethods {}
