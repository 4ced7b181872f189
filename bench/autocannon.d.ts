// The part of autocannon's API the benchmark uses (bench/run.mjs). autocannon ships no types, and @types/autocannon
// describes version 7 while the benchmark runs 9: these few lines are checked against what run.mjs does, no more.
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Request {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
  }

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    /** Each connection goes through these in turn: a request to rewrite before it is sent, its answer to read. */
    requests?: { setupRequest?: (request: Request) => Request; onResponse?: (status: number, body: string) => void }[];
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds. */
    timeout?: number;
  }

  interface Result {
    /** Seconds. */
    duration: number;
    non2xx: number;
    errors: number;
    timeouts: number;
  }

  interface Instance extends EventEmitter, PromiseLike<Result> {
    on(event: 'response', listener: (client: unknown, statusCode: number, bytes: number, responseTimeMs: number) => void): this;
  }

  export default function autocannon(options: Options): Instance;
}
