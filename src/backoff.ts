/**
 * The one backoff of the server's retries (workers after a storage fault, connections, the Redis client, undoing a
 * provider call): the wait doubles from `baseMs` with each attempt (the first waits up to `baseMs`), up to `maxMs`,
 * and is drawn between half and all of that, so that many instances retrying at once spread out.
 */
export function jitteredBackoffMs(attempt: number, baseMs: number, maxMs = Number.POSITIVE_INFINITY): number {
  const ceilingMs = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
  return Math.round(ceilingMs * (0.5 + Math.random() / 2));
}
