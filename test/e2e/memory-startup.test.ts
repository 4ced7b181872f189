import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseDeployments, ensureBuilt, freePort, processTestTimeoutMs, spawnServer, waitForHealth, type Deployment, type Spawned } from './support.js';

/**
 * Start-up does not size the old generation for a load (docs/operations.md "Memory"). V8 sets the old generation's
 * next limit after each full collection at what it kept times a factor it derives from the recent rate of promotion;
 * start-up promotes fast (code, compiled schemas), so its collections chose the largest factor, 4, and the first load
 * grew the heap up to that limit before collecting. The server fixes the factor at 1.5 until 10 s after it listens.
 * V8's own trace (`--trace-gc-verbose`) prints each factor it applies.
 */

/** The growing factors V8 applied before the server said it was ready. */
function startupFactors(output: string): number[] {
  const ready = output.indexOf('customer-api ready');
  expect(ready).toBeGreaterThan(0);
  return [...output.slice(0, ready).matchAll(/\[HeapController\] factor ([0-9.]+) /g)].map((match) => Number(match[1]));
}

describe.each(databaseDeployments('SQLite', 'memory-startup'))('the heap limits start-up leaves on %s', (_label, makeDeployment) => {
  let deployment: Deployment;
  let server: Spawned;

  beforeAll(async () => {
    await ensureBuilt();
    deployment = makeDeployment();
    await deployment.prepare();
    const port = await freePort();
    server = spawnServer(process.execPath, ['--trace-gc-verbose', 'dist/server.js'], { ...deployment.env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'info' });
    await waitForHealth(`http://127.0.0.1:${port}`, server);
  }, processTestTimeoutMs);
  afterAll(async () => {
    server?.kill();
    await deployment?.cleanUp();
  });

  it('lets the old generation grow by half of what each start-up collection kept, not four times', () => {
    const factors = startupFactors(server.output());
    // Start-up makes full collections of its own (loading the app), each of which sets a limit.
    expect(factors.length).toBeGreaterThan(0);
    expect(factors.every((factor) => factor === 1.5), `factors ${factors.join(', ')}`).toBe(true);
  });
});
