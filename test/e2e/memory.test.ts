import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, freePort, processTestTimeoutMs, spawnServer, waitForHealth, type Spawned } from './support.js';

/**
 * The server's memory (docs/operations.md "Memory"): V8's default young generation, sized for a machine's memory, is
 * mostly empty but resident, and held about 64 MB of an idle server's 185 MB and over 100 MB under load. `npm start`
 * bounds it (two semi-spaces of 16 MB).
 */
const semiSpaceMb = 16;

function gauge(metrics: string, name: string): number {
  const line = metrics.split('\n').find((entry) => entry.startsWith(`${name} `));
  if (line === undefined) throw new Error(`no ${name} in the metrics`);
  return Number(line.slice(name.length + 1));
}

describe('the memory of a server started with `npm start`', { timeout: processTestTimeoutMs }, () => {
  let server: Spawned;
  let dataDir: string;
  let metricsPort: number;

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = temporaryDirectory('customer-api-memory-');
    const apiPort = await freePort();
    metricsPort = await freePort();
    // Detached: npm and the server it starts form one process group, killed together in afterAll.
    server = spawnServer('npm', ['start'], childEnv({ DATA_DIR: dataDir, PORT: String(apiPort), HOST: '127.0.0.1', METRICS_PORT: String(metricsPort) }), { detached: true });
    await waitForHealth(`http://127.0.0.1:${apiPort}`, server);
  }, processTestTimeoutMs);
  afterAll(() => {
    server?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps V8’s young generation within two semi-spaces of 16 MB, where the default grows to 64 MB at start-up', async () => {
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    const youngGenerationBytes = gauge(metrics, 'nodejs_heap_space_size_total_bytes{space="new"}');
    expect(youngGenerationBytes).toBeGreaterThan(0);
    expect(youngGenerationBytes).toBeLessThanOrEqual(2 * semiSpaceMb * 2 ** 20);
  });
});
