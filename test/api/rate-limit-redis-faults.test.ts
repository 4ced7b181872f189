import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { redisConnectTimeoutMs } from '../../src/config/limits.js';
import type { Storage } from '../../src/storage/database.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { closedPort, FaultProxy } from '../helpers/tcp-faults.js';
import { CapturedLog, type LogLine } from '../helpers/captured-log.js';

const limit = 3;
/** A request still unanswered after this long has waited on Redis: the test fails here rather than at Redis's own timeouts. */
const answerWithinMs = 500;
/** Past the breaker's longest cool-down (its jitter included), so the next call probes Redis. */
const coolDownPassedMs = 10_000;
/** How long Redis may take to be reached again once it is back (ioredis reconnects with a capped backoff). */
const recoveryWithinMs = 10_000;
/**
 * What a median may exceed twice the baseline's by: sub-millisecond medians on a shared machine move by that much with
 * a collection or a neighbour's burst, while a request that waited on Redis would wait its whole deadline (5 ms, or the
 * 100 ms these tests set) and still fail the check.
 */
const medianSlackMs = 2;
const limitedEnv = { RATE_LIMIT_PER_SECOND: String(limit), RATE_LIMIT_FAILED_AUTH_PER_IP_PER_MINUTE: String(limit), LOG_LEVEL: 'info' };

const warn = 40;
const info = 30;

/** The log lines that tell of the rate limits' Redis: where they are counted, and why. */
const storeLines = (lines: LogLine[]) => lines.filter((line) => /Redis/.test(line.msg)).map((line) => ({ level: line.level, msg: line.msg }));

async function timed(send: () => Promise<LightMyRequestResponse>): Promise<{ response: LightMyRequestResponse; ms: number }> {
  const started = performance.now();
  const bound = new AbortController();
  const response = await Promise.race([
    send(),
    sleep(answerWithinMs, undefined, { signal: bound.signal }).then(() => {
      throw new Error(`no answer within ${answerWithinMs} ms`);
    }),
  ]).finally(() => bound.abort());
  return { response, ms: performance.now() - started };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** One sample of a Prometheus text exposition, or undefined when the series is absent. */
function metric(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}
const fallbacks = (text: string) =>
  ['timeout', 'error', 'unavailable'].reduce((sum, reason) => sum + (metric(text, `rate_limit_store_fallbacks_total{reason="${reason}"}`) ?? 0), 0);

/** Rounds of interleavedLatencies: 60 requests to each app, enough for a median that the machine's load does not sway. */
const latencyRounds = 20;

/**
 * `rounds` rounds of three requests from a fresh key of each app, the apps taken in turn so that both see the same
 * machine load: every answer 200 within answerWithinMs, and each app's latencies.
 */
async function interleavedLatencies(apps: TestApp[], rounds = latencyRounds): Promise<number[][]> {
  const customers = await Promise.all(apps.map((t) => t.createCustomer('Latency Ltd')));
  const samples = apps.map((): number[] => []);
  for (let round = 0; round < rounds; round += 1) {
    const keys = await Promise.all(apps.map(async (t, i) => (await t.createKey(customers[i]!.id)).key));
    for (let request = 0; request < limit; request += 1) {
      for (const [i, t] of apps.entries()) {
        const { response, ms } = await timed(() => t.request({ url: '/fiat-accounts', key: keys[i]! }));
        expect(response.statusCode).toBe(200);
        samples[i]!.push(ms);
      }
    }
  }
  return samples;
}

function report(label: string, samples: number[]): string {
  const sorted = [...samples].sort((a, b) => a - b);
  return `${label}: median ${median(samples).toFixed(2)} ms, max ${sorted.at(-1)!.toFixed(2)} ms over ${samples.length} requests`;
}

describe.each([
  { fault: 'down (nothing listens on its port)', redis: async () => ({ url: `redis://127.0.0.1:${await closedPort()}`, close: async () => {} }) },
  {
    fault: 'frozen (accepts connections, never answers)',
    redis: async () => {
      // A black hole: the proxy starts frozen and is never restored, so its target is never reached.
      const blackHole = await FaultProxy.start({ host: '127.0.0.1', port: await closedPort() }, { startFrozen: true });
      return { url: `redis://${blackHole.address}`, close: () => blackHole.close() };
    },
  },
])('rate limits while Redis is $fault', ({ redis }) => {
  let baseline: TestApp;
  let t: TestApp;
  let startMs: number;
  let baselineStartMs: number;
  let closeRedis: () => Promise<void>;
  const log = new CapturedLog();

  beforeAll(async () => {
    const fault = await redis();
    closeRedis = fault.close;
    let started = performance.now();
    // Logging as the instance under test does, so that the two differ by Redis alone.
    baseline = await createTestApp({ env: limitedEnv, logStream: new CapturedLog().stream });
    baselineStartMs = performance.now() - started;
    started = performance.now();
    t = await createTestApp({ env: { ...limitedEnv, REDIS_URL: fault.url }, logStream: log.stream });
    startMs = performance.now() - started;
  });
  afterAll(async () => {
    await t?.close();
    await baseline?.close();
    await closeRedis?.();
  });

  it('starts without waiting for Redis longer than its connect timeout', () => {
    // Against an instance without Redis started just before, so that the database's own start-up cancels out; the
    // margin is for a loaded machine (a start-up that waited for a frozen Redis to answer would never end).
    expect(startMs - baselineStartMs).toBeLessThan(redisConnectTimeoutMs + 4000);
  });

  it('answers every request at once, the median within 2× of an instance without Redis', async () => {
    const [withoutRedis, withRedisAway] = await interleavedLatencies([baseline, t]);
    console.info(`${report('without Redis', withoutRedis!)}; ${report('Redis away', withRedisAway!)}`);
    expect(median(withRedisAway!)).toBeLessThanOrEqual(2 * median(withoutRedis!) + medianSlackMs);
  });

  it('still limits each key on this instance: the 4th request within a second answers 429', async () => {
    const customer = await t.createCustomer('Limited Ltd');
    for (let i = 0; i < limit; i += 1) expect((await timed(() => t.request({ url: '/fiat-accounts', key: customer.key }))).response.statusCode).toBe(200);
    const limited = (await timed(() => t.request({ url: '/fiat-accounts', key: customer.key }))).response;
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error).toMatchObject({ code: 'RATE_LIMITED', details: { limit } });
    expect(limited.headers['retry-after']).toBe('1');
  });

  it('counts each refused authentication before answering it: exactly 3 of 12 concurrent refusals pass, 9 answer 429', async () => {
    const refusals = Array.from({ length: 12 }, () => timed(() => t.request({ url: '/payees', key: 'sk_test_guess', remoteAddress: '198.51.100.77' })));
    const statuses = (await Promise.all(refusals)).map(({ response }) => response.statusCode);
    expect(statuses.filter((status) => status === 401)).toHaveLength(limit);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12 - limit);
  });

  it('says so once: one warning in the log, and the metrics', async () => {
    expect(storeLines(log.lines)).toEqual([{ level: warn, msg: expect.stringMatching(/^Redis unavailable/) }]);
    const metrics = await t.metrics();
    expect(metric(metrics, 'rate_limit_store_redis_available')).toBe(0);
    expect(fallbacks(metrics)).toBeGreaterThan(0);
    // Without REDIS_URL there is no Redis to report on.
    expect(metric(await baseline.metrics(), 'rate_limit_store_redis_available')).toBeUndefined();
  });
});

const redisUrl = process.env.TEST_REDIS_URL;

describe.skipIf(!redisUrl)('rate limits when a Redis in use freezes, goes away, and comes back (TEST_REDIS_URL)', () => {
  let proxy: FaultProxy;
  let baseline: TestApp;
  let t: TestApp;
  let second: FastifyInstance;
  const log = new CapturedLog();
  const secondLog = new CapturedLog();

  beforeAll(async () => {
    const target = new URL(redisUrl!);
    proxy = await FaultProxy.start({ host: target.hostname, port: Number(target.port || 6379) });
    // Logging as the instance under test does, so that the two differ by Redis alone.
    baseline = await createTestApp({ env: limitedEnv, logStream: new CapturedLog().stream });
    // The proxy runs on the test's own event loop, an extra hop each way, on a machine other tests load too: a
    // deadline with room for that, or a late answer would count a request on one instance alone.
    const env = { ...limitedEnv, REDIS_URL: `redis://${proxy.address}`, RATE_LIMIT_REDIS_TIMEOUT_MS: '100' };
    t = await createTestApp({ env, logStream: log.stream });
    // A second instance on the same database and Redis, as behind a load balancer.
    const shared: Storage = { ...t.storage, close: async () => {} };
    second = await buildApp(t.config, { storage: shared, clock: t.clock, logStream: secondLog.stream });
  });
  afterAll(async () => {
    await second?.close();
    await t?.close();
    await baseline?.close();
    await proxy?.close();
  });

  const listOn = (app: FastifyInstance, key: string) => timed(() => app.inject({ method: 'GET', url: '/fiat-accounts', headers: { 'x-api-key': key } }));
  const statusesOf = async (requests: Array<[FastifyInstance, string]>) => {
    const statuses: number[] = [];
    for (const [app, key] of requests) statuses.push((await listOn(app, key)).response.statusCode);
    return statuses;
  };
  const secondMetrics = async () => (await second.metricsRegistry.metrics()).toString();

  it('shares one key’s limit between the two instances while Redis answers', async () => {
    const [withoutRedis, withRedis] = await interleavedLatencies([baseline, t]);
    console.info(`${report('without Redis', withoutRedis!)}; ${report('Redis answering', withRedis!)}`);
    const { key } = await t.createKey((await t.createCustomer()).id);
    expect(await statusesOf([[t.app, key], [second, key], [t.app, key], [second, key]])).toEqual([200, 200, 200, 429]);
    expect(metric(await t.metrics(), 'rate_limit_store_redis_available')).toBe(1);
    expect(metric(await secondMetrics(), 'rate_limit_store_redis_available')).toBe(1);
    expect([...storeLines(log.lines), ...storeLines(secondLog.lines)]).toEqual([]);
  });

  it('when Redis freezes, answers within 2× of an instance without Redis, and limits per instance', async () => {
    proxy.freeze();
    const [withoutRedis, withRedisFrozen] = await interleavedLatencies([baseline, t]);
    console.info(`${report('without Redis', withoutRedis!)}; ${report('Redis frozen', withRedisFrozen!)}`);
    expect(median(withRedisFrozen!)).toBeLessThanOrEqual(2 * median(withoutRedis!) + medianSlackMs);

    // Each instance counts on its own now: the key gets its 3 on each.
    const { key } = await t.createKey((await t.createCustomer()).id);
    expect(await statusesOf([[second, key], [second, key], [second, key], [second, key]])).toEqual([200, 200, 200, 429]);
    expect(await statusesOf([[t.app, key], [t.app, key], [t.app, key], [t.app, key]])).toEqual([200, 200, 200, 429]);

    expect(storeLines(log.lines)).toEqual([{ level: warn, msg: expect.stringMatching(/^Redis unavailable/) }]);
    expect(storeLines(secondLog.lines)).toEqual([{ level: warn, msg: expect.stringMatching(/^Redis unavailable/) }]);
    const metrics = await t.metrics();
    expect(metric(metrics, 'rate_limit_store_redis_available')).toBe(0);
    expect(metric(metrics, 'rate_limit_store_fallbacks_total{reason="timeout"}')).toBeGreaterThan(0);
  });

  it('when Redis goes away, keeps answering at once without another warning', async () => {
    proxy.cut();
    const { key } = await t.createKey((await t.createCustomer()).id);
    for (let i = 0; i < 5; i += 1) expect((await listOn(t.app, key)).ms).toBeLessThan(answerWithinMs);
    expect(storeLines(log.lines)).toHaveLength(1);
  });

  it('when Redis is back, shares the limits again and says so once', async () => {
    await proxy.restore();
    const customer = await t.createCustomer();
    const deadline = performance.now() + recoveryWithinMs;
    const available = async () => metric(await t.metrics(), 'rate_limit_store_redis_available') === 1 && metric(await secondMetrics(), 'rate_limit_store_redis_available') === 1;
    while (!(await available())) {
      expect(performance.now(), 'both instances use Redis again').toBeLessThan(deadline);
      // The breaker probes Redis on the first call after its cool-down; ioredis reconnects on its own timer.
      t.clock.advance(coolDownPassedMs);
      const { key } = await t.createKey(customer.id);
      await listOn(t.app, key);
      await listOn(second, key);
      await sleep(50);
    }
    const { key } = await t.createKey(customer.id);
    expect(await statusesOf([[t.app, key], [second, key], [t.app, key], [second, key]])).toEqual([200, 200, 200, 429]);
    for (const lines of [log.lines, secondLog.lines]) {
      expect(storeLines(lines)).toEqual([
        { level: warn, msg: expect.stringMatching(/^Redis unavailable/) },
        { level: info, msg: expect.stringMatching(/^Redis answers again/) },
      ]);
    }
  });
});
