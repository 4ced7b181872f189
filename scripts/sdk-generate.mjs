// `npm run sdk:generate`: writes the SDK's generated sources (scripts/sdk-sources.mjs) from the OpenAPI document of
// a sandbox server started from dist/ on a free loopback port with a throwaway SQLite database, then stopped.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sdkSources } from './sdk-sources.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'sdk-generate-'));
const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(process.execPath, [path.join(root, 'dist/server.js')], {
  env: { PATH: process.env.PATH, API_ENVIRONMENT: 'sandbox', HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir, LOG_LEVEL: 'warn', METRICS_PORT: 'off' },
  stdio: ['ignore', 'inherit', 'inherit'],
});
try {
  let document;
  for (let attempt = 0; attempt < 100 && document === undefined; attempt += 1) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/openapi.json`);
      if (response.ok) document = await response.json();
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  if (document === undefined) throw new Error('the server did not serve /openapi.json within 10 s');
  for (const [file, content] of Object.entries(await sdkSources(document))) {
    fs.writeFileSync(path.join(root, file), content);
    process.stdout.write(`wrote ${file}\n`);
  }
} finally {
  server.kill('SIGTERM');
  await new Promise((resolve) => server.once('exit', resolve));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
