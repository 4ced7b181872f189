import { buildApp } from './app.js';
import { ConfigError, loadConfig } from './config/config.js';
import { openStorage, type Storage } from './storage/database.js';

/**
 * Process entry: config, database, app, listen; SIGTERM/SIGINT stop accepting connections, let in-flight
 * requests finish, close the database and exit. A setting that cannot work stops start-up with one line.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  let storage: Storage | undefined;
  try {
    storage = await openStorage(config);
    const app = await buildApp(config, { storage });
    await app.listen({ port: config.port, host: config.host });
    app.log.info({ database: storage.location, environment: config.apiEnvironment }, 'customer-api ready');

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
      app.close().then(
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
    await storage?.close().catch(() => undefined);
    throw error;
  }
}

main().catch((error: unknown) => {
  const message = error instanceof ConfigError ? error.message : `start-up failed: ${(error as Error).message}`;
  process.stderr.write(`customer-api: ${message}\n`);
  process.exit(1);
});
