// Webhook delivery figures for `npm run bench` (docs/benchmarks.md "Webhook delivery"): receivers on 127.0.0.1 in
// this process, the server's own workers delivering to them, and a lean delivery reference in a process of its own
// sending the same events to the same receiver. Every delivery's signature is verified with `standardwebhooks`
// (after the timed part, so the receiver does the same work for the reference and for the server) and duplicates are
// counted.
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { parseJson } from './lib.mjs';

/**
 * The bench's API call (run.mjs): the parsed body of a 2xx answer, or a throw.
 * @typedef {(baseUrl: string, key: string, method: string, url: string, body?: object, csrf?: string) => Promise<unknown>} Call
 * @typedef {{ baseUrl: string, key: string, csrf: string }} Client
 * @typedef {{ customerId: string, since: string, count: number, url: string, concurrency: number }} LeanRun
 * @typedef {(run: LeanRun) => Promise<{ sent: number, seconds: number, cpuSeconds: number }>} LeanSender
 * @typedef {{ path: string, headers: import('node:http').IncomingHttpHeaders, body: string, at: number }} Arrival
 */

/** How long the slow receiver takes to answer: half the server's default attempt timeout. */
const slowAnswerMs = 5_000;
/** Attempts the lean reference has in flight: the server's share of one subscription (src/config/limits.ts). */
const leanConcurrency = 32;
/** Subscriptions of the fan-out scenario: two customers' worth (10 each, docs/spec.md §8). */
const manySubscriptions = 20;
/** Payments per second of the customer whose receiver is slow, during the lag scenario. */
const slowCustomerPaymentsPerSecond = 20;

/**
 * @param {number[]} sorted
 * @param {number} fraction
 */
function percentile(sorted, fraction) {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * fraction))] ?? NaN;
}

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A receiver keeping every request with its arrival time; paths under /slow answer after `slowAnswerMs`, others 204 at once. */
async function listenReceiver() {
  /** @type {Arrival[]} */
  const arrivals = [];
  /** @type {Set<NodeJS.Timeout>} */
  const timers = new Set();
  const server = http.createServer((request, response) => {
    /** @type {Buffer[]} */
    const chunks = [];
    request.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '';
      arrivals.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString(), at: Date.now() });
      if (!path.startsWith('/slow')) {
        response.writeHead(204).end();
        return;
      }
      const timer = setTimeout(() => {
        timers.delete(timer);
        response.writeHead(204).end();
      }, slowAnswerMs);
      timers.add(timer);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    arrivals,
    url: (/** @type {string} */ path) => `http://127.0.0.1:${port}${path}`,
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}

/** A delivered webhook's body: the event. @param {string} body */
function eventOf(body) {
  return /** @type {{ id: string, created_at: string }} */ (parseJson(body));
}

/**
 * Measures webhook delivery on a server started with WEBHOOK_ALLOW_PRIVATE_URLS=true, in four parts:
 * - lean reference: `leanSend` reads the `payment.created` events of customer A since `since` (up to 10,000) from the
 *   database and POSTs each to the receiver with undici, `leanConcurrency` at once, nothing else; events/s;
 * - one receiver: a new subscription of A replays the same events (POST /webhooks/{id}/replay); events/s from the
 *   replay's request to the last arrival;
 * - 20 subscriptions: 10 of A and 10 of a second customer B replay about as many deliveries in total, each a
 *   twentieth; total events/s;
 * - lag: A pays at `lagPaymentsPerSecond` (half the measured payment capacity) for `lagSeconds`, alone, then again
 *   while B pays 20 per second to a receiver that answers in 5 s; the lag of A's deliveries is the first attempt's
 *   arrival less the event's `created_at` (taken in the payment's transaction), p50 and p99, and A's backlog
 *   (payments answered less events arrived) is printed every second.
 *
 * @param {{
 *   call: Call,
 *   newClient: (name: string) => Promise<Client & { customerId: string }>,
 *   leanSend: LeanSender,
 *   a: Client & { customerId: string },
 *   paymentBodyA: object,
 *   since: string,
 *   lagPaymentsPerSecond: number,
 *   lagSeconds?: number,
 *   serverCpuSeconds: () => number | undefined,
 *   fannedOut: () => Promise<void>,
 *   log: (line: string) => void,
 * }} options
 */
export async function measureWebhookDelivery({ call, newClient, leanSend, a, paymentBodyA, since, lagPaymentsPerSecond, lagSeconds = 10, serverCpuSeconds, fannedOut, log }) {
  const receiver = await listenReceiver();
  /** @type {Map<string, string>} path → signing secret */
  const secrets = new Map();
  let pathCount = 0;
  const api = (/** @type {Client} */ client, /** @type {string} */ method, /** @type {string} */ url, /** @type {object | undefined} */ body) => call(client.baseUrl, client.key, method, url, body, client.csrf);
  /** A new subscription of `client` to payment.created, at a path of its own. @param {Client} client @param {string} prefix */
  const subscribe = async (client, prefix) => {
    const path = `${prefix}${(pathCount += 1)}`;
    const hook = /** @type {{ data: { id: string, signing_secret: string } }} */ (await api(client, 'POST', '/webhooks', { url: receiver.url(path), eventTypes: ['payment.created'] })).data;
    secrets.set(path, hook.signing_secret);
    return { ...hook, path, client };
  };
  const unsubscribe = async (/** @type {{ id: string, client: Client }} */ hook) => {
    await fetch(`${hook.client.baseUrl}/webhooks/${hook.id}`, { method: 'DELETE', headers: { 'x-api-key': hook.client.key, 'x-csrf-token': hook.client.csrf } });
  };
  const replay = async (/** @type {{ id: string, client: Client }} */ hook, /** @type {string} */ from) =>
    /** @type {{ data: { queued: number } }} */ (await api(hook.client, 'POST', `/webhooks/${hook.id}/replay`, { since: from })).data.queued;
  /** Waits until `count` arrivals match, at most `timeoutMs`. @param {(arrival: Arrival) => boolean} matches */
  const waitForArrivals = async (matches, /** @type {number} */ count, /** @type {number} */ timeoutMs, /** @type {string} */ what) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const arrived = receiver.arrivals.filter(matches);
      if (arrived.length >= count) return arrived;
      if (Date.now() > deadline) throw new Error(`${what}: ${arrived.length} of ${count} delivered after ${timeoutMs / 1000} s`);
      await sleep(20);
    }
  };
  /** `count` payments of `client`, `concurrency` at once. @param {Client} client @param {object} body */
  const payMany = async (client, body, /** @type {number} */ count, concurrency = 10) => {
    let left = count;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left > 0) {
          left -= 1;
          await api(client, 'POST', '/payments', body);
        }
      }),
    );
  };
  /** @type {Record<string, number>} */
  const duplicatesByPath = {};
  const stats = { verified: 0, invalidSignatures: 0, duplicates: 0, duplicatesByPath };
  /** Verifies every signed arrival so far and counts repeated webhook-ids per path; then forgets them. */
  const verifyArrivals = () => {
    /** @type {Set<string>} */
    const seen = new Set();
    for (const arrival of receiver.arrivals) {
      const secret = secrets.get(arrival.path);
      if (secret === undefined) continue;
      const id = String(arrival.headers['webhook-id']);
      try {
        new Webhook(secret).verify(arrival.body, { 'webhook-id': id, 'webhook-timestamp': String(arrival.headers['webhook-timestamp']), 'webhook-signature': String(arrival.headers['webhook-signature']) });
        stats.verified += 1;
      } catch {
        stats.invalidSignatures += 1;
      }
      const key = `${arrival.path} ${id}`;
      if (seen.has(key)) {
        stats.duplicates += 1;
        duplicatesByPath[arrival.path] = (duplicatesByPath[arrival.path] ?? 0) + 1;
      }
      seen.add(key);
    }
    receiver.arrivals.length = 0;
  };

  try {
    // --- One receiver: the lean reference, then the server, the same events to the same receiver.
    // A subscription made while the fan-out is still at work gets the late events from it, and its replay would send
    // them again (a replay starts a delivered event over): every event is fanned out before a replay's subscription.
    await fannedOut();
    const single = await subscribe(a, '/one');
    const replayStarted = Date.now();
    const cpuBefore = serverCpuSeconds();
    const replayed = await replay(single, since);
    const apiArrivals = await waitForArrivals((arrival) => arrival.path === single.path, replayed, 300_000, 'webhook replay to one receiver');
    const cpuAfter = serverCpuSeconds();
    const eventsPerSecond = replayed / ((Math.max(...apiArrivals.map((arrival) => arrival.at)) - replayStarted) / 1000);
    // The server's CPU per delivered event (the replay's request, claims, signing, POSTs, records): moves much less with
    // the machine's other load than events/s does. The records of the last attempts may land just after.
    const cpuMsPerEvent = cpuBefore === undefined || cpuAfter === undefined ? NaN : ((cpuAfter - cpuBefore) * 1000) / replayed;
    await unsubscribe(single);
    verifyArrivals();
    const lean = await leanSend({ customerId: a.customerId, since, count: replayed, url: receiver.url('/lean'), concurrency: leanConcurrency });
    await waitForArrivals((arrival) => arrival.path === '/lean', lean.sent, 60_000, 'lean reference');
    if (lean.sent !== replayed) throw new Error(`lean reference: sent ${lean.sent} events, the server replayed ${replayed}`);
    const leanEventsPerSecond = lean.sent / lean.seconds;
    const leanCpuMsPerEvent = (lean.cpuSeconds * 1000) / lean.sent;
    receiver.arrivals.length = 0;
    log(
      `  webhooks, one receiver: ${replayed.toLocaleString('en')} events at ${eventsPerSecond.toFixed(0)} events/s, server CPU ${cpuMsPerEvent.toFixed(3)} ms/event; ` +
        `lean reference ${leanEventsPerSecond.toFixed(0)} events/s, ${leanCpuMsPerEvent.toFixed(3)} ms/event (${(eventsPerSecond / leanEventsPerSecond).toFixed(3)}×)`,
    );

    // --- 20 subscriptions of two customers, each replaying a twentieth as many events.
    const b = await newClient('Bench webhook customer B');
    const [fromB, toB] = await Promise.all(
      ['B source', 'B target'].map(async (accountName) => /** @type {{ data: { id: string } }} */ (await api(b, 'POST', '/fiat-accounts', { accountName, currency: 'EUR' })).data.id),
    );
    await api(b, 'POST', `/sandbox/fiat-accounts/${fromB}/deposits`, { amount: 1_000_000, reference: 'bench funding' });
    const paymentBodyB = { ...paymentBodyA, fromAccountId: fromB, toAccountId: toB };
    const share = Math.max(1, Math.round(replayed / manySubscriptions));
    const sharesSince = new Date().toISOString();
    await Promise.all([payMany(a, paymentBodyA, share), payMany(b, paymentBodyB, share)]);
    await fannedOut();
    /** @type {Awaited<ReturnType<typeof subscribe>>[]} */
    const hooks = [];
    for (let index = 0; index < manySubscriptions; index += 1) hooks.push(await subscribe(index % 2 === 0 ? a : b, '/many'));
    const manyStarted = Date.now();
    let manyQueued = 0;
    for (const hook of hooks) manyQueued += await replay(hook, sharesSince);
    const manyArrivals = await waitForArrivals((arrival) => arrival.path.startsWith('/many'), manyQueued, 300_000, 'webhook replay to 20 subscriptions');
    const manyEventsPerSecond = manyQueued / ((Math.max(...manyArrivals.map((arrival) => arrival.at)) - manyStarted) / 1000);
    for (const hook of hooks) await unsubscribe(hook);
    verifyArrivals();
    log(`  webhooks, ${manySubscriptions} subscriptions: ${manyQueued.toLocaleString('en')} deliveries at ${manyEventsPerSecond.toFixed(0)} events/s in total`);

    // --- Lag at a sustained load: alone, then beside a customer whose receiver answers in 5 s.
    /** @param {boolean} besideSlow */
    const measureLag = async (besideSlow) => {
      const fast = await subscribe(a, '/lag');
      const slow = besideSlow ? await subscribe(b, '/slow') : undefined;
      let committed = 0;
      let slowCommitted = 0;
      /** @type {unknown[]} */
      const failures = [];
      /** @type {number[]} */
      const backlog = [];
      const arrivedAt = (/** @type {string} */ path) => new Set(receiver.arrivals.filter((arrival) => arrival.path === path).map((arrival) => String(arrival.headers['webhook-id']))).size;
      const started = Date.now();
      const reporter = setInterval(() => {
        const waiting = Math.max(0, committed - arrivedAt(fast.path));
        backlog.push(waiting);
        log(`    ${backlog.length} s: ${committed} payments answered, backlog ${waiting}${slow ? `; slow receiver: ${slowCommitted} answered, ${arrivedAt(slow.path)} arrived` : ''}`);
      }, 1000);
      const total = Math.round(lagPaymentsPerSecond * lagSeconds);
      /** Open loop: each payment is sent when due, whether or not the previous ones have been answered. */
      const payAtRate = async (/** @type {Client} */ client, /** @type {object} */ body, /** @type {number} */ count, /** @type {number} */ perSecond, /** @type {() => void} */ onAnswer) => {
        /** @type {Promise<void>[]} */
        const sent = [];
        for (let index = 0; index < count; index += 1) {
          const due = started + (index * 1000) / perSecond;
          if (due > Date.now()) await sleep(due - Date.now());
          sent.push(api(client, 'POST', '/payments', body).then(onAnswer, (/** @type {unknown} */ error) => void failures.push(error)));
        }
        await Promise.all(sent);
      };
      try {
        await Promise.all([
          payAtRate(a, paymentBodyA, total, lagPaymentsPerSecond, () => (committed += 1)),
          slow ? payAtRate(b, paymentBodyB, slowCustomerPaymentsPerSecond * lagSeconds, slowCustomerPaymentsPerSecond, () => (slowCommitted += 1)) : undefined,
        ]);
        if (failures.length > 0) throw failures[0];
        await waitForArrivals((arrival) => arrival.path === fast.path, total, 60_000, `webhook lag at ${lagPaymentsPerSecond} payments/s`);
      } finally {
        clearInterval(reporter);
      }
      // The first attempt of each delivery (a second one would be a duplicate, counted below).
      /** @type {Map<string, Arrival>} */
      const firstArrivals = new Map();
      for (const arrival of receiver.arrivals) {
        const id = String(arrival.headers['webhook-id']);
        if (arrival.path === fast.path && !firstArrivals.has(id)) firstArrivals.set(id, arrival);
      }
      const lags = [...firstArrivals.values()].map((arrival) => arrival.at - Date.parse(eventOf(arrival.body).created_at)).sort((x, y) => x - y);
      const slowArrived = slow ? arrivedAt(slow.path) : 0;
      await unsubscribe(fast);
      if (slow) await unsubscribe(slow);
      verifyArrivals();
      const lag = { payments: total, p50Ms: percentile(lags, 0.5), p99Ms: percentile(lags, 0.99), backlogPerSecond: backlog, backlogMax: Math.max(0, ...backlog), slowCommitted, slowArrived };
      log(
        `  webhooks, lag at ${lagPaymentsPerSecond.toFixed(0)} payments/s${slow ? ` beside a receiver answering in ${slowAnswerMs / 1000} s` : ''}: p50 ${lag.p50Ms} ms, p99 ${lag.p99Ms} ms, backlog at most ${lag.backlogMax}` +
          (slow ? `; the slow receiver got ${slowArrived} of ${slowCommitted}` : ''),
      );
      return lag;
    };
    const lagAlone = await measureLag(false);
    const lagBesideSlow = await measureLag(true);
    if (stats.invalidSignatures > 0) throw new Error(`webhooks: ${stats.invalidSignatures} deliveries failed signature verification`);
    log(`  webhooks: ${stats.verified.toLocaleString('en')} signatures verified, ${stats.duplicates} duplicates ${JSON.stringify(stats.duplicatesByPath)}`);
    return {
      replayed,
      eventsPerSecond,
      cpuMsPerEvent,
      leanEventsPerSecond,
      leanCpuMsPerEvent,
      vsLean: eventsPerSecond / leanEventsPerSecond,
      manySubscriptions,
      manyQueued,
      manyEventsPerSecond,
      lagPaymentsPerSecond,
      lagAlone,
      lagBesideSlow,
      ...stats,
    };
  } finally {
    await receiver.close();
  }
}
