import fs from 'node:fs';
import { PrivatePostgres } from '../../scripts/private-postgres.mjs';

/**
 * The global setup of the postgres project (vitest.config.ts). With TEST_DATABASE_URL set it does nothing: the tests
 * use that server. Else (the project runs only when PostgreSQL's server binaries are installed) a throwaway cluster (scripts/private-postgres.mjs: initdb into a temp directory, a
 * free loopback port, its socket in that directory, run as the postgres user when the tests run as root), whose
 * database becomes TEST_DATABASE_URL for every test process started after it. Stopped and removed at the end.
 */
export default async function startThrowawayPostgres(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.TEST_DATABASE_URL) return undefined;
  const startedAt = performance.now();
  const cluster = new PrivatePostgres({ role: 'customer_api' });
  // A run stopped without its teardown (Ctrl-C) leaves no server behind, and its directory goes too.
  const killOnExit = () => {
    cluster.killPostmaster();
    fs.rmSync(cluster.dir, { recursive: true, force: true });
  };
  process.once('exit', killOnExit);
  try {
    await cluster.start();
    process.env.TEST_DATABASE_URL = await cluster.createDatabase('customer_api_test');
  } catch (error) {
    await cluster.destroy();
    throw new Error(`could not start a throwaway PostgreSQL cluster for the postgres tests (set TEST_DATABASE_URL to use a running server): ${(error as Error).message}`, { cause: error });
  }
  console.log(
    `PostgreSQL tests: on a throwaway cluster at 127.0.0.1:${cluster.port} (TEST_DATABASE_URL is unset), started in ${Math.round(performance.now() - startedAt)} ms`,
  );
  return async () => {
    const stoppingAt = performance.now();
    await cluster.destroy();
    process.off('exit', killOnExit);
    console.log(`PostgreSQL tests: the throwaway cluster stopped and removed in ${Math.round(performance.now() - stoppingAt)} ms`);
  };
}
