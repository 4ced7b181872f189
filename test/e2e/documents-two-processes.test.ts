import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, exitWithin, processTestTimeoutMs, runCli, startApiServer, type Spawned } from './support.js';

/**
 * Instances share nothing but PostgreSQL (docs/operations.md "Several instances"): a document uploaded through one
 * server is read from the database by another, which syncs it to the provider, while the first one is gone. Each
 * server has a DATA_DIR of its own, so nothing can come from a shared disk.
 */
describe.skipIf(!process.env.TEST_DATABASE_URL)('documents with two server processes on PostgreSQL', { timeout: processTestTimeoutMs }, () => {
  const servers: Spawned[] = [];
  const directories: string[] = [];
  const schema = `e2e_docs_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string;

  const envFor = () => {
    const dataDir = temporaryDirectory('customer-api-e2e-docs-');
    directories.push(dataDir);
    return childEnv({ DATA_DIR: dataDir, DATABASE_URL: databaseUrl, HOST: '127.0.0.1', LOG_LEVEL: 'warn', RATE_LIMIT_PER_SECOND: 'off' });
  };
  const startServer = () => startApiServer(envFor(), servers);

  beforeAll(async () => {
    await ensureBuilt();
    const url = new URL(process.env.TEST_DATABASE_URL!);
    const admin = new pg.Client({ connectionString: url.toString() });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    url.searchParams.set('options', `-c search_path=${schema}`);
    databaseUrl = url.toString();
  }, processTestTimeoutMs);

  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => exitWithin(server, 10_000)));
    for (const server of servers) server.kill();
    const admin = new pg.Client({ connectionString: process.env.TEST_DATABASE_URL! });
    await admin.connect();
    await admin.query(`drop schema if exists ${schema} cascade`);
    await admin.end();
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  });

  it('uploads through one server; another, with a DATA_DIR of its own, syncs the file to the provider after the first has stopped', async () => {
    const cliEnv = envFor();
    const cli = <T>(...args: string[]) => runCli<T>(cliEnv, ...args);
    const customer = await cli<{ id: string }>('customers', 'create', '--name', 'Docs Ltd');
    const { key } = await cli<{ key: string }>('keys', 'create', '--customer', customer.id);

    const uploader = await startServer();
    const token = ((await (await fetch(`${uploader.baseUrl}/csrf-token`, { headers: { 'x-api-key': key } })).json()) as { data: { csrf_token: string } }).data.csrf_token;
    const headers = { 'x-api-key': key, 'x-csrf-token': token, 'content-type': 'application/json' };
    const endUser = (await (
      await fetch(`${uploader.baseUrl}/end-users`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', dob: '1990-12-10', address: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'DE' } }),
      })
    ).json()) as { data: { id: string } };
    // "sync-flaky": the provider refuses the first two attempts, so the sync is still pending when the uploader stops.
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), randomBytes(2000)]);
    const uploaded = await fetch(`${uploader.baseUrl}/documents`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ endUserId: endUser.data.id, documentType: 'identity', fileName: 'sync-flaky.pdf', mimeType: 'application/pdf', fileData: pdf.toString('base64') }),
    });
    expect(uploaded.status).toBe(201);
    const document = (await uploaded.json()) as { data: { id: string; storage_path: string } };
    expect(document.data.storage_path).toMatch(/^database\//);
    uploader.server.child.kill('SIGTERM');
    expect(await exitWithin(uploader.server, 10_000)).toMatchObject({ code: 0 });
    // Nothing of the file is on the uploader's disk.
    expect(fs.existsSync(`${directories[1]}/documents`)).toBe(false);

    const syncer = await startServer();
    let status = '';
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
      const read = (await (await fetch(`${syncer.baseUrl}/documents/${document.data.id}`, { headers: { 'x-api-key': key } })).json()) as {
        data: { fr_sync_status: string; sync_attempts: number; last_sync_error: string | null };
      };
      status = read.data.fr_sync_status;
      if (status !== 'pending') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(status).toBe('synced');
  });
});
