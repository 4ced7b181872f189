import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, exitWithin, freePort, processTestTimeoutMs, shutdownWindowMs, run, spawnServer, tryConnect, waitForHealth, walFileExists, type Spawned } from './support.js';

/**
 * The quick start played as a newcomer plays it: a fresh DATA_DIR, `npm start`, the CLI, then HTTP calls, then
 * Ctrl-C. Graceful shutdown through each start command: shutdown.test.ts.
 */

const servers: Spawned[] = [];
const directories: string[] = [];

function freshDataDir(): string {
  const directory = temporaryDirectory('customer-api-e2e-');
  directories.push(directory);
  return directory;
}

async function cliJson<T>(env: NodeJS.ProcessEnv, args: string[]): Promise<T> {
  const result = await run(process.execPath, ['bin/customer-api.js', ...args], { env });
  if (result.code !== 0) throw new Error(`customer-api ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** A customer and a `*` key made with the CLI, as the quick start does. */
async function customerWithKey(env: NodeJS.ProcessEnv): Promise<{ customerId: string; key: string }> {
  const customer = await cliJson<{ id: string }>(env, ['customers', 'create', '--name', 'Acme Ltd']);
  const key = await cliJson<{ key: string }>(env, ['keys', 'create', '--customer', customer.id]);
  return { customerId: customer.id, key: key.key };
}

beforeAll(async () => ensureBuilt(), processTestTimeoutMs);
afterAll(() => {
  for (const server of servers) server.kill();
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

describe('the quick start, as a newcomer plays it', { timeout: processTestTimeoutMs }, () => {
  let server: Spawned;
  let baseUrl: string;
  let env: NodeJS.ProcessEnv;
  let dataDir: string;
  let port: number;

  beforeAll(async () => {
    dataDir = freshDataDir();
    port = await freePort();
    env = childEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' });
    // Detached: npm and the server it starts form one process group, killed together in afterAll whatever happens.
    server = spawnServer('npm', ['start'], env, { detached: true });
    servers.push(server);
    baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server);
  }, processTestTimeoutMs);

  it('answers GET /health without a key once `npm start` is up', async () => {
    const response = await fetch(`${baseUrl}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('creates a customer and a key with `npx customer-api`, then a fiat account over HTTP that the list shows', async () => {
    // The README's steps: npx in the checkout (--no: never from the registry), /v1 paths, a Bearer key on the list.
    const npx = async <T>(args: string[]): Promise<T> => {
      const result = await run('npx', ['--no', 'customer-api', ...args], { env });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as T;
    };
    const customer = await npx<{ id: string; name: string; fr_owner_business_id: string }>(['customers', 'create', '--name', 'Acme Ltd']);
    expect(customer).toMatchObject({ name: 'Acme Ltd', fr_owner_business_id: expect.stringMatching(/^busi_/) });
    const { key, scopes } = await npx<{ key: string; scopes: string[] }>(['keys', 'create', '--customer', customer.id]);
    expect(key).toMatch(/^sk_test_[A-Za-z0-9_-]{43}$/);
    expect(scopes).toEqual(['*']);

    const tokenResponse = await fetch(`${baseUrl}/v1/csrf-token`, { headers: { 'x-api-key': key } });
    expect(tokenResponse.status).toBe(200);
    const token = ((await tokenResponse.json()) as { data: { csrf_token: string } }).data.csrf_token;
    expect(token).toMatch(/^[0-9a-f]{64}$/);

    const created = await fetch(`${baseUrl}/v1/fiat-accounts`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'X-CSRF-Token': token, 'Content-Type': 'application/json' },
      body: JSON.stringify({ accountName: 'Main EUR', currency: 'EUR' }),
    });
    expect(created.status).toBe(201);
    const account = ((await created.json()) as { data: { id: string; fr_account_id: string; iban: string; balance: number; status: string } }).data;
    expect(account).toMatchObject({ account_name: 'Main EUR', currency: 'EUR', balance: 0, status: 'active' });
    expect(account.fr_account_id).toMatch(/^facc_/);
    expect(account.iban).toMatch(/^DE/);

    const listed = await fetch(`${baseUrl}/v1/fiat-accounts`, { headers: { Authorization: `Bearer ${key}` } });
    expect(listed.status).toBe(200);
    const accounts = ((await listed.json()) as { data: Array<{ id: string }> }).data;
    expect(accounts.map((entry) => entry.id)).toEqual([account.id]);
    // The unversioned paths answer the same.
    const unversioned = await fetch(`${baseUrl}/fiat-accounts`, { headers: { 'x-api-key': key } });
    expect(((await unversioned.json()) as { data: Array<{ id: string }> }).data.map((entry) => entry.id)).toEqual([account.id]);
  });

  it('sets up a sandbox with `npx customer-api sandbox init`, whose printed export line and first call answer in a shell', async () => {
    const result = await run('npx', ['--no', 'customer-api', 'sandbox', 'init'], { env });
    expect(result.code, result.stderr).toBe(0);
    const sandbox = JSON.parse(result.stdout) as { export: string; first_call: string; csrf_token_call: string; dashboard_user: { sign_in_url: string } };
    // The server runs on another port than 3000 and the CLI's shell does not say so: the lines point at the server.
    expect(sandbox.first_call).toContain(`http://localhost:${port}/v1/`);
    const shell = await run('bash', ['-c', `${sandbox.export} && ${sandbox.first_call} && echo && ${sandbox.csrf_token_call}`], { env });
    expect(shell.code, shell.stderr).toBe(0);
    const [accounts, token] = shell.stdout.split('\n');
    expect(JSON.parse(accounts!)).toEqual({ data: [] });
    expect(JSON.parse(token!).data.csrf_token).toMatch(/^[0-9a-f]{64}$/);
    expect((await fetch(sandbox.dashboard_user.sign_in_url)).status).toBe(200);

    // The same in one line, as the README offers it.
    const evaluated = await run('bash', ['-c', `eval "$(npx --no customer-api sandbox init --shell)" && ${sandbox.first_call}`], { env });
    expect(evaluated.code, evaluated.stderr).toBe(0);
    expect(JSON.parse(evaluated.stdout)).toEqual({ data: [] });
  });

  it('refuses the write without the CSRF token and without a key, as the quick start warns', async () => {
    const { key } = await customerWithKey(env);
    const body = JSON.stringify({ accountName: 'No token', currency: 'EUR' });
    const withoutToken = await fetch(`${baseUrl}/fiat-accounts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body });
    expect(withoutToken.status).toBe(403);
    const withoutKey = await fetch(`${baseUrl}/fiat-accounts`);
    expect(withoutKey.status).toBe(401);
  });

  it('keeps its data in DATA_DIR', () => {
    expect(fs.existsSync(path.join(dataDir, 'customer-api.sqlite'))).toBe(true);
  });

  it('stops cleanly on Ctrl-C in the terminal (SIGINT to the whole `npm start` process group)', async () => {
    expect(walFileExists(dataDir)).toBe(true);
    process.kill(-server.child.pid!, 'SIGINT');
    // The server has it from the terminal and again from npm (a second signal changes nothing); npm waits for it.
    const deadline = Date.now() + shutdownWindowMs;
    while ((walFileExists(dataDir) || (await tryConnect(port)) !== 'ECONNREFUSED') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(walFileExists(dataDir), 'the database was not closed').toBe(false);
    expect(await tryConnect(port)).toBe('ECONNREFUSED');
    expect(await exitWithin(server, shutdownWindowMs)).toEqual({ code: 0, signal: null });
  });
});
