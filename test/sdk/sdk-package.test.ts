import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSources } from '../../scripts/sdk-sources.mjs';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/** docs/sdk.md: the SDK's generated files match the server's document, and the package builds to ESM with types. */
describe('SDK package', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(async () => t?.close());

  it('is generated from the document the server serves (run `npm run sdk:generate` when this fails)', async () => {
    const files = await sdkSources((await t.request({ url: '/openapi.json' })).json());
    expect(Object.keys(files).sort()).toEqual(['sdk/openapi.json', 'sdk/src/operations.ts', 'sdk/src/schema.ts']);
    for (const [file, content] of Object.entries(files)) {
      expect(fs.readFileSync(file, 'utf8') === content, `${file} is stale: run npm run sdk:generate`).toBe(true);
    }
  });

  it('builds to ESM with type declarations, at the paths its package.json exports', async () => {
    const manifest = JSON.parse(fs.readFileSync('sdk/package.json', 'utf8')) as { name: string; version: string; license: string; type: string; exports: { '.': { types: string; import: string } } };
    expect(manifest).toMatchObject({ name: '@customer-api/sdk', type: 'module', license: expect.any(String), version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
    const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-build-'));
    try {
      await promisify(execFile)(path.resolve('node_modules/.bin/tsc'), ['-p', 'sdk/tsconfig.json', '--outDir', outDir]);
      for (const exported of [manifest.exports['.'].types, manifest.exports['.'].import]) {
        expect(fs.existsSync(path.join(outDir, path.relative('./dist', exported))), exported).toBe(true);
      }
      const built = (await import(pathToFileURL(path.join(outDir, 'index.js')).href)) as Record<string, unknown>;
      expect(Object.keys(built).sort()).toEqual(['CustomerApi', 'CustomerApiConnectionError', 'CustomerApiError', 'Webhook', 'WebhookVerificationError', 'operations', 'verifyWebhook']);
      expect(fs.readFileSync(path.join(outDir, 'client.d.ts'), 'utf8')).toMatch(/export declare class CustomerApi/);
    } finally {
      fs.rmSync(outDir, { recursive: true, force: true });
    }
  }, 60_000);
});
