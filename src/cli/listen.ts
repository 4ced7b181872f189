import type { KeyObject } from 'node:crypto';
import { jitteredBackoffMs } from '../backoff.js';
import { listenForwardTimeoutMs, listenReconnectBaseMs, listenReconnectMaxMs } from '../config/limits.js';
import { newSigningSecret, signedHeaders, signingKey } from '../modules/webhooks/index.js';
import { errorSummary, type ApiClient } from './api-client.js';

export interface ListenOptions {
  forwardTo: string;
  /** Only these event types (all when empty). */
  eventTypes: readonly string[];
  /** The signing secret; a new one when absent. */
  secret?: string;
  /** Ends the session (SIGINT). */
  signal: AbortSignal;
  write: (line: string) => void;
}

interface StreamMessage {
  id: string;
  event: string;
  data: string;
}

/** Splits a text/event-stream body into messages (comments and heartbeats skipped). */
async function* sseMessages(body: AsyncIterable<Uint8Array>): AsyncGenerator<StreamMessage> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const message: StreamMessage = { id: '', event: 'message', data: '' };
      for (const line of buffer.slice(0, end).split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'id') message.id = value;
        else if (field === 'event') message.event = value;
        else if (field === 'data') message.data = message.data === '' ? value : `${message.data}\n${value}`;
      }
      buffer = buffer.slice(end + 2);
      if (message.data !== '') yield message;
    }
  }
}

/**
 * `customer-api listen` (docs/cli.md): streams the key's customer's events (GET /events/stream) and POSTs each to
 * `forwardTo`, signed as a real delivery is (Standard Webhooks headers) with the session's secret, printed once connected. A
 * dropped stream is resumed after the last event (Last-Event-ID), waiting longer after each failure, up to a bound.
 * Resolves when `signal` aborts.
 */
export async function listen(api: ApiClient, options: ListenOptions): Promise<void> {
  const secret = options.secret ?? newSigningSecret().secret;
  const key = signingKey(secret);
  let connected = false;
  const wanted = new Set(options.eventTypes);
  let lastEventId: string | undefined;
  let failures = 0;
  while (!options.signal.aborted) {
    try {
      const response = await fetch(api.url('events/stream'), {
        headers: api.headers({ accept: 'text/event-stream', ...(lastEventId === undefined ? {} : { 'last-event-id': lastEventId }) }),
        signal: options.signal,
      });
      if (!response.ok || response.body === null) {
        const refusal = `GET /events/stream answered ${response.status}${errorSummary(await response.text())}`;
        // A refused key or scope will not get better by retrying.
        if (response.status === 401 || response.status === 403) throw new ListenRefused(refusal);
        throw new Error(refusal);
      }
      // Ready once the stream is open: an event triggered from then on is forwarded (the stream starts from now).
      if (!connected) options.write(`Ready! Your webhook signing secret is ${secret} (^C to quit)`);
      else if (failures > 0) options.write(`${new Date().toISOString()}  reconnected`);
      connected = true;
      failures = 0;
      for await (const message of sseMessages(response.body)) {
        lastEventId = message.id || lastEventId;
        if (wanted.size > 0 && !wanted.has(message.event)) continue;
        options.write(await forward(options.forwardTo, key, message));
      }
      throw new Error('the server ended the stream');
    } catch (error) {
      if (options.signal.aborted) break;
      if (error instanceof ListenRefused) throw error;
      failures += 1;
      const waitMs = jitteredBackoffMs(failures, listenReconnectBaseMs, listenReconnectMaxMs);
      options.write(`${new Date().toISOString()}  stream lost (${(error as Error).message}); reconnecting in ${(waitMs / 1000).toFixed(1)} s`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        options.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve(undefined);
        }, { once: true });
      });
    }
  }
}

class ListenRefused extends Error {}

/** POSTs one event to the receiver, signed; the line that reports it: time, type, event id, the receiver's answer. */
async function forward(forwardTo: string, key: KeyObject, message: StreamMessage): Promise<string> {
  const event = JSON.parse(message.data) as { id: string; type: string };
  const prefix = `${new Date().toISOString()}  ${event.type}  ${event.id}  -> POST ${forwardTo}`;
  try {
    const response = await fetch(forwardTo, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'customer-api-listen', ...signedHeaders(event.id, new Date(), message.data, [key]) },
      body: message.data,
      signal: AbortSignal.timeout(listenForwardTimeoutMs),
    });
    await response.arrayBuffer();
    return `${prefix} [${response.status}]`;
  } catch (error) {
    return `${prefix} [failed: ${((error as Error).cause as Error | undefined)?.message ?? (error as Error).message}]`;
  }
}
