import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, freePort, lines, processTestTimeoutMs, run, stackFrame, startApiServer, type ProcessResult, type Spawned } from './support.js';

/**
 * A setting that cannot work stops start-up with one clear line on stderr, a non-zero exit and no stack trace
 * (issue: "A bad DATABASE_URL, unwritable DATA_DIR or invalid setting stops start-up with one clear line").
 */

const directories: string[] = [];

/** `node dist/server.js` with the given settings on a fresh DATA_DIR; killed after 30 s if it starts after all. */
async function startServer(settings: Record<string, string>): Promise<ProcessResult> {
  const dataDir = temporaryDirectory('customer-api-startup-');
  directories.push(dataDir);
  const env = childEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(await freePort()), ...settings });
  return run(process.execPath, ['dist/server.js'], { env, timeoutMs: 30_000 });
}

/** The start-up refusal: exited by itself with 1, exactly one `customer-api:` line, no stack, nothing else. */
function expectOneLineRefusal(result: ProcessResult): string {
  expect(result.signal, 'the server started instead of refusing (killed by the test timeout)').toBeNull();
  expect(result.code).toBe(1);
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).toMatch(/^customer-api: \S/);
  expect(result.stderr + result.stdout).not.toContain(stackFrame);
  expect(result.stdout).toBe('');
  return result.stderr.trim();
}

describe.concurrent('start-up refuses a setting that cannot work, with one line', { timeout: processTestTimeoutMs }, () => {
  beforeAll(async () => ensureBuilt(), processTestTimeoutMs);
  afterAll(() => {
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  });

  it('stops start-up with one line naming PostgreSQL, without the password, when DATABASE_URL cannot connect', async () => {
    const message = expectOneLineRefusal(await startServer({ DATABASE_URL: 'postgres://nobody:wrong@127.0.0.1:1/x' }));
    expect(message).toContain('PostgreSQL');
    expect(message).not.toContain('wrong');
    expect(message).not.toContain('nobody:');
  });

  it('stops start-up with one line when DATABASE_URL is not a PostgreSQL URL', async () => {
    const message = expectOneLineRefusal(await startServer({ DATABASE_URL: 'mysql://x' }));
    expect(message).toContain('DATABASE_URL');
  });

  it('stops start-up with one line when DATABASE_URL is not a URL at all', async () => {
    const message = expectOneLineRefusal(await startServer({ DATABASE_URL: 'customer_api:secret@localhost' }));
    expect(message).toContain('DATABASE_URL');
    expect(message).not.toContain('secret');
  });

  it('stops start-up with one line when DATA_DIR is not writable', async () => {
    const parent = temporaryDirectory('customer-api-startup-');
    directories.push(parent);
    const file = path.join(parent, 'file.txt');
    fs.writeFileSync(file, 'not a directory');
    const message = expectOneLineRefusal(await startServer({ DATA_DIR: path.join(file, 'data') }));
    expect(message).toContain('DATA_DIR');
    expect(fs.readFileSync(file, 'utf8')).toBe('not a directory');
  });

  it('stops start-up with one line when PORT is not a number', async () => {
    const message = expectOneLineRefusal(await startServer({ PORT: 'abc' }));
    expect(message).toContain('PORT');
  });

  it('stops start-up with one line when API_ENVIRONMENT is neither sandbox nor production', async () => {
    const message = expectOneLineRefusal(await startServer({ API_ENVIRONMENT: 'staging' }));
    expect(message).toContain('API_ENVIRONMENT');
  });

  it('refuses to start in production without a real provider, saying so in one line', async () => {
    const message = expectOneLineRefusal(await startServer({ API_ENVIRONMENT: 'production' }));
    expect(message).toContain('production');
    expect(message).toMatch(/provider/i);
  });

  it('stops start-up with one line when RATE_LIMIT_PER_SECOND is negative', async () => {
    const message = expectOneLineRefusal(await startServer({ RATE_LIMIT_PER_SECOND: '-1' }));
    expect(message).toContain('RATE_LIMIT_PER_SECOND');
  });

  it('stops start-up with one line when the metrics port is already taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', () => resolve()));
    try {
      const { port } = blocker.address() as net.AddressInfo;
      const message = expectOneLineRefusal(await startServer({ METRICS_PORT: String(port) }));
      expect(message).toContain('METRICS_PORT');
    } finally {
      blocker.close();
    }
  });

  it('stops start-up with one line naming the setting, not the value, when SECRETS_MASTER_KEY is malformed', async () => {
    const message = expectOneLineRefusal(await startServer({ SECRETS_MASTER_KEY: 'c2hvcnQga2V5' }));
    expect(message).toContain('SECRETS_MASTER_KEY');
    expect(message).not.toContain('c2hvcnQga2V5');
  });

  it('stops start-up with one line when the master key does not open the server secrets the database holds', async () => {
    const dataDir = temporaryDirectory('customer-api-startup-');
    directories.push(dataDir);
    const [stored, other] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
    const servers: Spawned[] = [];
    try {
      const { server } = await startApiServer(childEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', SECRETS_MASTER_KEY: stored }), servers);
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
    } finally {
      for (const server of servers) server.kill();
    }
    const message = expectOneLineRefusal(await startServer({ DATA_DIR: dataDir, SECRETS_MASTER_KEY: other }));
    expect(message).toContain('SECRETS_MASTER_KEY does not hold the master key');
    expect(message).not.toContain(stored);
    expect(message).not.toContain(other);
  });

  it('stops start-up with one line when the port is already taken', async () => {
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    try {
      const port = (holder.address() as net.AddressInfo).port;
      const message = expectOneLineRefusal(await startServer({ PORT: String(port) }));
      expect(message).toContain('EADDRINUSE');
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
