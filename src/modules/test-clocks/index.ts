import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { testClockRoutes } from './routes.js';
import { TestClocks } from './service.js';

/** The sandbox's test clocks (docs/test-clocks.md); buildApp makes them before the modules, whose rules read them. */
export function sandboxTestClocks(storage: Storage, clock: Clock, caches: ReadCaches): TestClocks {
  return new TestClocks(storage, clock, caches);
}

/** The test clocks plugin: /sandbox/test-clocks, in the sandbox only. */
export async function testClocksPlugin(app: FastifyInstance, { clocks }: { clocks: TestClocks }): Promise<void> {
  testClockRoutes(app, clocks);
}

export { TestClocks } from './service.js';
