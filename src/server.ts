import { systemClock } from './clock.js';
import { ConfigError, loadConfig } from './config/config.js';
import { shutdownIdleConnectionGraceMs } from './config/limits.js';
import { fixHeapGrowth } from './heap-growth.js';
import { trackConnections } from './http/connection-drain.js';
import { configuredProviders } from './providers/providers.js';
import type { MetricsListener } from './http/metrics.js';
import { openStorage, type Storage } from './storage/database.js';
import { recordStartupPhases, startupPhaseDone, startupPhases } from './startup-phases.js';

/**
 * Process entry: config, database, app, listen; SIGTERM/SIGINT stop accepting connections, let in-flight
 * requests finish, refuse (503) the ones still arriving on open connections, close the database and exit. A
 * setting that cannot work stops start-up with one line.
 */
async function main(): Promise<void> {
  recordStartupPhases();
  fixHeapGrowth();
  startupPhaseDone('entry');
  const config = loadConfig();
  // Settings are refused before anything heavy loads or any file is created.
  const providers = configuredProviders(config, systemClock);
  const { buildApp } = await import('./app.js');
  startupPhaseDone('modules');
  let storage: Storage | undefined;
  let metrics: MetricsListener | undefined;
  try {
    storage = await openStorage(config);
    startupPhaseDone('storage');
    const app = await buildApp(config, { storage, providers });
    // Metrics first: a port that cannot be had stops start-up before the API answers anything.
    metrics = config.metricsPort === undefined ? undefined : await listenForMetrics(app, config.metricsHost, config.metricsPort, config.metricsToken);
    // Quiet connections are closed halfway through the shutdown timeout at the latest, so the process still exits 0.
    const connections = trackConnections(app.server, Math.max(1, Math.min(shutdownIdleConnectionGraceMs, config.shutdownTimeoutMs / 2)));
    await app.listen({ port: config.port, host: config.host });
    startupPhaseDone('listen');
    for (const worker of app.workers) worker.start();
    app.log.info(
      {
        database: storage.location,
        environment: config.apiEnvironment,
        metrics: metrics ? `${config.metricsHost}:${metrics.address.port}` : 'off',
        // When each phase ended, in ms since the process started: where a slow start spent its time.
        startupMs: startupPhases(),
      },
      'customer-api ready',
    );

    let stopping = false;
    const stop = (signal: string) => {
      if (stopping) return;
      stopping = true;
      app.log.info({ signal }, 'shutting down: finishing in-flight requests');
      const deadline = setTimeout(() => {
        app.log.error('shutdown timed out; exiting');
        process.exit(1);
      }, config.shutdownTimeoutMs);
      deadline.unref();
      // No request a client sent is reset (http/connection-drain.ts): requests still arriving are refused 503, each
      // connection ends once its last answer is sent, and only then do the workers stop and the database close.
      app.refuseNewRequests();
      connections
        .drain()
        .then(() => Promise.all([app.close(), metrics?.close()]))
        .then(
          () => process.exit(0),
          (error: unknown) => {
            app.log.error({ err: error }, 'shutdown failed');
            process.exit(1);
          },
        );
    };
    process.on('SIGTERM', () => stop('SIGTERM'));
    process.on('SIGINT', () => stop('SIGINT'));
  } catch (error) {
    await metrics?.close().catch(() => undefined);
    await storage?.close().catch(() => undefined);
    throw error;
  }
}

async function listenForMetrics(app: Awaited<ReturnType<typeof import('./app.js').buildApp>>, host: string, port: number, token: string | undefined) {
  const { serveMetrics } = await import('./http/metrics.js');
  try {
    return await serveMetrics(app, { host, port, token });
  } catch (error) {
    throw new ConfigError(`cannot serve metrics on ${host}:${port} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); set METRICS_PORT to a free port or off`);
  }
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`;
  process.stderr.write(`customer-api: ${message}\n`);
  process.exit(1);
});
