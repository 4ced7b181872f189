// Webhook delivery figures for `npm run bench` (docs/benchmarks.md "Webhook delivery"): a receiver on 127.0.0.1
// in this process, answering 204 at once, and the server's own workers delivering to it.
import http from 'node:http';
import { parseJson } from './lib.mjs';

/**
 * The bench's API call (run.mjs): the parsed body of a 2xx answer, or a throw.
 * @typedef {(baseUrl: string, key: string, method: string, url: string, body?: object, csrf?: string) => Promise<unknown>} Call
 */

/**
 * @param {number[]} sorted
 * @param {number} fraction
 */
function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

/** @param {(body: string, at: number) => void} onDelivery */
async function listen(onDelivery) {
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (/** @type {Buffer} */ chunk) => (body += chunk.toString()));
    request.on('end', () => {
      onDelivery(body, Date.now());
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  return server;
}

/**
 * Two figures, on a server started with WEBHOOK_ALLOW_PRIVATE_URLS=true:
 * - throughput: a subscription made now replays up to 10,000 `payment.created` events of the earlier scenarios at
 *   once (POST /webhooks/{id}/replay); events/s is the count over the time from the replay's answer to the last
 *   delivery;
 * - lag: payments made at a steady `ratePerSecond` for `seconds`; each delivery's lag is its arrival less the
 *   event's `created_at` (the commit, within a millisecond), p50 and p99.
 *
 * @param {{
 *   call: Call,
 *   serverUrl: string,
 *   key: string,
 *   csrf: string,
 *   paymentBody: string,
 *   since: string,
 *   ratePerSecond?: number,
 *   seconds?: number,
 * }} options
 */
export async function measureWebhookDelivery({ call, serverUrl, key, csrf, paymentBody, since, ratePerSecond = 100, seconds = 10 }) {
  /** @type {{ body: string, at: number }[]} */
  const arrivals = [];
  const receiver = await listen((body, at) => arrivals.push({ body, at }));
  const url = `http://127.0.0.1:${/** @type {import('node:net').AddressInfo} */ (receiver.address()).port}/hooks`;
  try {
    const hook = /** @type {{ data: { id: string } }} */ (await call(serverUrl, key, 'POST', '/webhooks', { url, eventTypes: ['payment.created'] }, csrf)).data;
    const replayStarted = Date.now();
    const { queued } = /** @type {{ data: { queued: number } }} */ (await call(serverUrl, key, 'POST', `/webhooks/${hook.id}/replay`, { since }, csrf)).data;
    const deadline = Date.now() + 300_000;
    while (arrivals.length < queued) {
      if (Date.now() > deadline) throw new Error(`webhook replay: ${arrivals.length} of ${queued} delivered after 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const replaySeconds = (/** @type {{ at: number }} */ (arrivals[queued - 1]).at - replayStarted) / 1000;
    const replayIds = new Set(arrivals.map((arrival) => eventOf(arrival.body).id));
    if (replayIds.size !== queued) throw new Error(`webhook replay: ${queued} events queued, ${replayIds.size} distinct delivered`);

    arrivals.length = 0;
    const total = ratePerSecond * seconds;
    const started = Date.now();
    /** @type {unknown[]} */
    const failures = [];
    for (let sent = 0; sent < total; sent += 1) {
      const due = started + (sent * 1000) / ratePerSecond;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      call(serverUrl, key, 'POST', '/payments', /** @type {object} */ (parseJson(paymentBody)), csrf).catch((/** @type {unknown} */ error) => failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
    const lagDeadline = Date.now() + 60_000;
    while (arrivals.length < total && Date.now() < lagDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (arrivals.length < total) throw new Error(`webhook lag: ${arrivals.length} of ${total} payments delivered within 60 s`);
    const lags = arrivals.map((arrival) => arrival.at - Date.parse(eventOf(arrival.body).created_at)).sort((a, b) => a - b);
    await fetch(`${serverUrl}/webhooks/${hook.id}`, { method: 'DELETE', headers: { 'x-api-key': key, 'x-csrf-token': csrf } });
    return { replayed: queued, eventsPerSecond: queued / replaySeconds, lagP50Ms: percentile(lags, 0.5), lagP99Ms: percentile(lags, 0.99), lagged: total };
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(() => resolve(undefined)));
  }
}

/** A delivered webhook's body: the event. @param {string} body */
function eventOf(body) {
  return /** @type {{ id: string, created_at: string }} */ (parseJson(body));
}
