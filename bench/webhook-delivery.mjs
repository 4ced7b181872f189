// Webhook delivery figures for `npm run bench` (docs/benchmarks.md "Webhook delivery"): a receiver on 127.0.0.1
// in this process, answering 204 at once, and the server's own workers delivering to it.
import http from 'node:http';

function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))];
}

async function listen(onDelivery) {
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      onDelivery(body, Date.now());
      response.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
}

/**
 * Two figures, on a server started with WEBHOOK_ALLOW_PRIVATE_URLS=true:
 * - throughput: a subscription made now replays up to 10,000 `payment.created` events of the earlier scenarios at
 *   once (POST /webhooks/{id}/replay); events/s is the count over the time from the replay's answer to the last
 *   delivery;
 * - lag: payments made at a steady `ratePerSecond` for `seconds`; each delivery's lag is its arrival less the
 *   event's `created_at` (the commit, within a millisecond), p50 and p99.
 */
export async function measureWebhookDelivery({ call, serverUrl, key, csrf, paymentBody, since, ratePerSecond = 100, seconds = 10 }) {
  const arrivals = [];
  const receiver = await listen((body, at) => arrivals.push({ body, at }));
  const url = `http://127.0.0.1:${receiver.address().port}/hooks`;
  try {
    const hook = (await call(serverUrl, key, 'POST', '/webhooks', { url, eventTypes: ['payment.created'] }, csrf)).data;
    const replayStarted = Date.now();
    const { queued } = (await call(serverUrl, key, 'POST', `/webhooks/${hook.id}/replay`, { since }, csrf)).data;
    const deadline = Date.now() + 300_000;
    while (arrivals.length < queued) {
      if (Date.now() > deadline) throw new Error(`webhook replay: ${arrivals.length} of ${queued} delivered after 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const replaySeconds = (arrivals[queued - 1].at - replayStarted) / 1000;
    const replayIds = new Set(arrivals.map((arrival) => JSON.parse(arrival.body).id));
    if (replayIds.size !== queued) throw new Error(`webhook replay: ${queued} events queued, ${replayIds.size} distinct delivered`);

    arrivals.length = 0;
    const total = ratePerSecond * seconds;
    const started = Date.now();
    const failures = [];
    for (let sent = 0; sent < total; sent += 1) {
      const due = started + (sent * 1000) / ratePerSecond;
      if (due > Date.now()) await new Promise((resolve) => setTimeout(resolve, due - Date.now()));
      call(serverUrl, key, 'POST', '/payments', JSON.parse(paymentBody), csrf).catch((error) => failures.push(error));
    }
    if (failures.length > 0) throw failures[0];
    const lagDeadline = Date.now() + 60_000;
    while (arrivals.length < total && Date.now() < lagDeadline) await new Promise((resolve) => setTimeout(resolve, 20));
    if (arrivals.length < total) throw new Error(`webhook lag: ${arrivals.length} of ${total} payments delivered within 60 s`);
    const lags = arrivals.map((arrival) => arrival.at - Date.parse(JSON.parse(arrival.body).created_at)).sort((a, b) => a - b);
    await fetch(`${serverUrl}/webhooks/${hook.id}`, { method: 'DELETE', headers: { 'x-api-key': key, 'x-csrf-token': csrf } });
    return { replayed: queued, eventsPerSecond: queued / replaySeconds, lagP50Ms: percentile(lags, 0.5), lagP99Ms: percentile(lags, 0.99), lagged: total };
  } finally {
    receiver.closeAllConnections();
    await new Promise((resolve) => receiver.close(resolve));
  }
}
