import { timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { StorageFaultState } from '../storage/fault-state.js';
import type { StorageFault } from '../storage/faults.js';
import type { GroupCommitStats } from '../storage/sqlite-group-commit.js';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const latencyBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const writerHoldBucketsSeconds = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1];

declare module 'fastify' {
  interface FastifyInstance {
    /** What the metrics listener serves (serveMetrics); the API port does not serve it. */
    metricsRegistry: Registry;
  }
}

/**
 * Prometheus metrics: request counts and a latency histogram by method, route pattern and status. The route label
 * is the pattern (`/fiat-accounts/:id`), never the raw URL, so its cardinality stays bounded. On SQLite, the group
 * commit counters: transactions / commits is how many writes share each fsync. They show every tenant's activity,
 * so they are not served on the API port but by serveMetrics, on loopback unless configured otherwise.
 */
export function installMetrics(app: FastifyInstance, groupCommits?: GroupCommitStats, storageFaults?: StorageFaultState): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time to answer HTTP requests',
    labelNames,
    buckets: latencyBucketsSeconds,
    registers: [registry],
  });

  if (groupCommits) {
    new Counter({
      name: 'sqlite_commits_total',
      help: 'COMMITs of the embedded database (each one fsync)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(groupCommits.commits);
      },
    });
    new Counter({
      name: 'sqlite_committed_transactions_total',
      help: 'Transactions and single writes made durable by those COMMITs',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(groupCommits.transactions);
      },
    });
    // Every other writer waits while one holds the writing connection: how long each holds it is the queue's cause.
    const held = new Histogram({
      name: 'sqlite_writer_hold_seconds',
      help: 'How long the writing connection was held each time (a transaction, a single write or a COMMIT)',
      buckets: writerHoldBucketsSeconds,
      registers: [registry],
    });
    groupCommits.onWriterReleased = (heldSeconds) => held.observe(heldSeconds);
  }

  if (storageFaults) {
    // 1 for the fault requests or workers met last (until a write succeeds again), 0 for the others.
    const faultGauge = new Gauge({
      name: 'storage_fault',
      help: 'Whether the storage is faulty: the database unavailable, the data unwritable, or the storage full (docs/operations.md "Faults")',
      labelNames: ['fault'] as const,
      registers: [registry],
    });
    const allFaults: StorageFault[] = ['unavailable', 'unwritable', 'full'];
    const show = (current: StorageFault | undefined) => {
      for (const fault of allFaults) faultGauge.set({ fault }, fault === current ? 1 : 0);
    };
    show(undefined);
    storageFaults.onChange = show;
  }

  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });

  app.decorate('metricsRegistry', registry);
}

export interface MetricsListener {
  readonly address: AddressInfo;
  close(): Promise<void>;
}

/**
 * The metrics listener: GET /metrics on its own port (METRICS_PORT on METRICS_HOST, default 127.0.0.1), so a
 * deployment exposing the API does not expose tenant volumes with it; with METRICS_TOKEN set, only a scraper sending
 * `Authorization: Bearer <token>` is answered (401 otherwise). Other paths answer 404, other methods 405.
 */
export async function serveMetrics(app: FastifyInstance, options: { host: string; port: number; token?: string | undefined }): Promise<MetricsListener> {
  const registry = app.metricsRegistry;
  const expected = options.token === undefined ? undefined : Buffer.from(`Bearer ${options.token}`);
  const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' };
  const answer = (response: http.ServerResponse, status: number, text: string, extra: Record<string, string> = {}) =>
    response.writeHead(status, { ...headers, 'content-type': 'text/plain; charset=utf-8', ...extra }).end(text);
  const server = http.createServer((request, response) => {
    if (request.url?.split('?')[0] !== '/metrics') return answer(response, 404, 'Not found: metrics are served at GET /metrics\n');
    if (request.method !== 'GET' && request.method !== 'HEAD') return answer(response, 405, 'Only GET\n', { allow: 'GET, HEAD' });
    if (expected !== undefined) {
      const given = Buffer.from(request.headers.authorization ?? '');
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return answer(response, 401, 'Authorization: Bearer <METRICS_TOKEN> required\n');
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { ...headers, 'content-type': registry.contentType }).end(text),
      () => answer(response, 500, 'metrics could not be collected\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    address: server.address() as AddressInfo,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
