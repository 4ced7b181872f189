import type { FastifyInstance } from 'fastify';
import type { GroupCommitStats } from '../storage/sqlite-group-commit.js';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

const latencyBucketsSeconds = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Prometheus text at GET /metrics: request counts and a latency histogram by method, route pattern and status.
 * The route label is the pattern (`/fiat-accounts/:id`), never the raw URL, so its cardinality stays bounded.
 * On SQLite, the group commit counters: transactions / commits is how many writes share each fsync.
 */
export function installMetrics(app: FastifyInstance, groupCommits?: GroupCommitStats): void {
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
  }

  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: String(reply.statusCode) };
    requests.inc(labels);
    duration.observe(labels, reply.elapsedTime / 1000);
  });

  app.get('/metrics', { config: { public: true, rateLimit: false }, schema: { hide: true } }, async (_request, reply) => {
    reply.type(registry.contentType);
    return registry.metrics();
  });
}
