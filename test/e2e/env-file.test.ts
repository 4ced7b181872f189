import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { checkout, childEnv, ensureBuilt, exitWithin, freePort, lines, processTestTimeoutMs, run, shutdownWindowMs, spawnServer, tryConnect, waitForHealth, type Spawned } from './support.js';

/**
 * `.env`: `npm start` (node --env-file-if-exists=.env) and the CLI read the file of the directory they run in, so the
 * CLI opens the server's database; a variable set in the environment wins over the file, and a bad value in the file
 * stops start-up like one in the environment.
 */

const servers: Spawned[] = [];
const directories: string[] = [];

/** A directory to run `npm start` in, as the checkout is: its package.json and dist/, and the given .env. */
function directoryWithEnvFile(envFile: string): string {
  const directory = temporaryDirectory('customer-api-env-file-');
  directories.push(directory);
  fs.symlinkSync(path.join(checkout, 'package.json'), path.join(directory, 'package.json'));
  fs.symlinkSync(path.join(checkout, 'dist'), path.join(directory, 'dist'));
  fs.writeFileSync(path.join(directory, '.env'), envFile);
  return directory;
}

/** The test's environment without the given settings, which the .env file then gives. */
function envWithout(...names: string[]): NodeJS.ProcessEnv {
  const env = childEnv({ HOST: '127.0.0.1' });
  for (const name of names) delete env[name];
  return env;
}

async function cli<T>(directory: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<T> {
  const result = await run(process.execPath, [path.join(checkout, 'bin/customer-api.js'), ...args], { cwd: directory, env });
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as T;
}

beforeAll(async () => ensureBuilt(), processTestTimeoutMs);
afterAll(() => {
  for (const server of servers) server.kill();
  for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
});

describe('.env', { timeout: processTestTimeoutMs }, () => {
  it('is read by `npm start` and by the CLI in the same directory, under the variables of the environment', async () => {
    const [filePort, environmentPort] = [await freePort(), await freePort()];
    const directory = directoryWithEnvFile(`# the operator's settings\nDATA_DIR=./from-env-file\nPORT=${filePort}\n`);
    const env = { ...envWithout('DATA_DIR'), PORT: String(environmentPort) };

    // The CLI creates its customer in the DATA_DIR of .env.
    const customer = await cli<{ id: string }>(directory, env, 'customers', 'create', '--name', 'Env File Ltd');
    const { key } = await cli<{ key: string }>(directory, env, 'keys', 'create', '--customer', customer.id);
    expect(fs.existsSync(path.join(directory, 'from-env-file/customer-api.sqlite'))).toBe(true);

    const server = spawnServer('npm', ['start'], env, { detached: true, cwd: directory });
    servers.push(server);
    // PORT from the environment, not from the file.
    const baseUrl = `http://127.0.0.1:${environmentPort}`;
    await waitForHealth(baseUrl, server);
    expect(await tryConnect(filePort)).toBe('ECONNREFUSED');
    // The server opened the database the CLI wrote: it knows the key.
    const accounts = await fetch(`${baseUrl}/fiat-accounts`, { headers: { 'x-api-key': key } });
    expect(accounts.status).toBe(200);

    process.kill(server.child.pid!, 'SIGTERM');
    expect(await exitWithin(server, shutdownWindowMs), server.output()).toEqual({ code: 0, signal: null });
  });

  it('holding a bad value stops `npm start` and the CLI with one line naming the variable, and exit code 1', async () => {
    const directory = directoryWithEnvFile('OTC_SPREAD_BPS=lots\n');
    const env = { ...envWithout('OTC_SPREAD_BPS'), PORT: '0' };
    const expected = 'customer-api: OTC_SPREAD_BPS must be a whole number from 0 to 1000, got "lots"';
    // Detached, so that a server which started after all is killed with its npm whatever happens.
    const started = spawnServer('npm', ['start'], env, { detached: true, cwd: directory });
    servers.push(started);
    expect(await exitWithin(started, 30_000), started.output()).toEqual({ code: 1, signal: null });
    expect(lines(started.errorOutput())).toEqual([expected]);
    const listed = await run(process.execPath, [path.join(checkout, 'bin/customer-api.js'), 'fees', 'list'], { cwd: directory, env });
    expect(listed.code).toBe(1);
    expect(lines(listed.stderr)).toEqual([expected]);
  });
});
