// Peak memory of the server while it takes concurrent end-user bodies of ~29 MB (two reports at the spec's maximum
// length), the load that once took it from 105 to 607 MB. Usage: npm run build && node bench/upload-memory.mjs [count]
// Prints the server's resident memory before and at its peak, and how the requests were answered.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkout, freePort, killChildren, memoryOf, parseJson, startNode, waitForHttp } from './lib.mjs';

const concurrent = Number(process.argv[2] ?? 6);
const reportLength = 14_680_064;

function reportOfMaximumLength() {
  const bytes = Buffer.alloc((reportLength / 4) * 3, 0x20);
  bytes.write('%PDF-1.4');
  return bytes.toString('base64');
}

async function main() {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-upload-memory-'));
  const port = await freePort();
  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', METRICS_PORT: 'off', RATE_LIMIT_PER_SECOND: 'off' };
  /** @type {(...args: string[]) => unknown} */
  const cli = (...args) => parseJson(execFileSync(process.execPath, [path.join(checkout, 'bin/customer-api.js'), ...args], { env, cwd: checkout }).toString());
  const server = startNode('dist/server.js', [], env, 'server');
  try {
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHttp(`${baseUrl}/health`, server);
    const customer = /** @type {{ id: string }} */ (cli('customers', 'create', '--name', 'Upload memory'));
    const { key } = /** @type {{ key: string }} */ (cli('keys', 'create', '--customer', customer.id));
    const csrf = /** @type {{ data: { csrf_token: string } }} */ (parseJson(await (await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } })).text())).data.csrf_token;
    const report = reportOfMaximumLength();
    const body = JSON.stringify({
      firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', dob: '1990-12-10',
      address: { line1: '1 Main Street', city: 'Berlin', postalCode: '10115', country: 'DE' },
      kycReportBase64: report, providerReportBase64: report,
    });
    const before = memoryOf(server.pid);
    let peakMb = before?.currentMb ?? 0;
    const sampler = setInterval(() => {
      const now = memoryOf(server.pid);
      if (now) peakMb = Math.max(peakMb, now.currentMb);
    }, 10);
    const started = Date.now();
    const statuses = await Promise.all(
      Array.from({ length: concurrent }, () =>
        fetch(`${baseUrl}/end-users`, { method: 'POST', headers: { 'x-api-key': key, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body }).then((response) => response.status),
      ),
    );
    clearInterval(sampler);
    console.log(`${concurrent} concurrent end-user bodies of ${(body.length / 1e6).toFixed(1)} MB: statuses ${statuses.join(',')} in ${Date.now() - started} ms`);
    console.log(`server RSS before ${before?.currentMb.toFixed(0)} MB, peak during ${peakMb.toFixed(0)} MB`);
  } finally {
    await server.stop();
    killChildren();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  killChildren();
  console.error(error);
  process.exit(1);
});
