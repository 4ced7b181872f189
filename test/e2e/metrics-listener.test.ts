import fs from 'node:fs';
import os from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, freePort, processTestTimeoutMs, spawnServer, waitForHealth, type Spawned } from './support.js';

/**
 * Metrics show every tenant's activity, so `npm start` serves them on their own port bound to loopback
 * (METRICS_PORT, METRICS_HOST; docs/operations.md), never on the API port.
 */
describe('the metrics listener of a real server', { timeout: processTestTimeoutMs }, () => {
  let server: Spawned;
  let dataDir: string;
  let apiPort: number;
  let metricsPort: number;

  beforeAll(async () => {
    await ensureBuilt();
    dataDir = temporaryDirectory('customer-api-metrics-');
    apiPort = await freePort();
    metricsPort = await freePort();
    // The API on every interface, as by default; the metrics with METRICS_HOST left at its default.
    server = spawnServer(process.execPath, ['dist/server.js'], childEnv({ DATA_DIR: dataDir, PORT: String(apiPort), HOST: '0.0.0.0', METRICS_PORT: String(metricsPort) }));
    await waitForHealth(`http://127.0.0.1:${apiPort}`, server);
  }, processTestTimeoutMs);
  afterAll(() => {
    server?.kill();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves Prometheus text on the metrics port over loopback', async () => {
    const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(await response.text()).toContain('# TYPE http_requests_total counter');
    expect((await fetch(`http://127.0.0.1:${metricsPort}/other`)).status).toBe(404);
  });

  it('does not serve them on the API port', async () => {
    const response = await fetch(`http://127.0.0.1:${apiPort}/metrics`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('ROUTE_NOT_FOUND');
  });

  const externalAddress = Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address;

  it.skipIf(externalAddress === undefined)('is not reachable on the machine’s other addresses, while the API is', async () => {
    expect((await fetch(`http://${externalAddress}:${apiPort}/health`)).status).toBe(200);
    await expect(fetch(`http://${externalAddress}:${metricsPort}/metrics`)).rejects.toThrow();
  });
});
