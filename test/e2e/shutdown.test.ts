import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { checkout, childEnv, ensureBuilt, exitWithin, freePort, processTestTimeoutMs, shutdownWindowMs, runCli, spawnServer, tryConnect, waitForHealth, walFileExists, type Spawned } from './support.js';

/**
 * Graceful shutdown through the commands the README gives: `npm start`, and the direct command it gives for
 * supervisors (systemd, Docker). SIGTERM or SIGINT sent to the PID the command gives (npm's, for `npm start`) stops
 * the server accepting connections, lets the request in flight finish, closes the database and ends the whole
 * process tree with exit 0.
 */

/** The direct command of the README and docs/operations.md, run as written. */
const directCommand = 'MALLOC_ARENA_MAX=1 node --env-file-if-exists=.env --max-semi-space-size=16 --no-allocation-site-pretenuring dist/server.js';
/** The command's leading NAME=value words, as a POSIX shell sets them in the environment, and then its words after node. */
const [directAssignments, directNodeArgs] = ((words) => {
  const first = words.findIndex((word) => !/^[A-Z_]+=/.test(word));
  return [Object.fromEntries(words.slice(0, first).map((word) => word.split('=') as [string, string])), words.slice(first + 1)] as const;
})(directCommand.split(' '));

const commands: Array<[string, (env: NodeJS.ProcessEnv) => Spawned]> = [
  // Detached: npm leads a process group of its own, so the test can see whether anything of the tree survives.
  ['`npm start`', (env) => spawnServer('npm', ['start'], env, { detached: true })],
  [`\`${directCommand}\``, (env) => spawnServer(process.execPath, [...directNodeArgs], { ...env, ...directAssignments }, { detached: true })],
];

const servers: Spawned[] = [];
const dataDir = temporaryDirectory('customer-api-shutdown-');
let key: string;
/** Accounts created by requests in flight at a signal, each answered 201. */
let accountsWritten = 0;

beforeAll(async () => {
  await ensureBuilt();
  // The CLI opens the database itself: one customer and key serve every server started below on this DATA_DIR.
  const env = childEnv({ DATA_DIR: dataDir });
  const customer = await runCli<{ id: string }>(env, 'customers', 'create', '--name', 'Shutdown Ltd');
  key = (await runCli<{ key: string }>(env, 'keys', 'create', '--customer', customer.id)).key;
}, processTestTimeoutMs);
// A server that outlived its test (the finding: a SIGTERM to npm left it running) would hold the next one's database.
afterEach(() => {
  for (const server of servers.splice(0)) server.kill();
});
afterAll(() => {
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** True while any process of the group led by `pid` is alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(condition: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * A POST whose headers the server has taken (it answered `100 Continue`) but whose body has not been sent: the
 * request is in flight and cannot complete until `finish()` sends the body.
 */
async function requestInFlight(port: number, token: string) {
  const body = JSON.stringify({ accountName: 'In flight', currency: 'EUR' });
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let response = '';
  const continued = new Promise<void>((resolve) =>
    socket.on('data', (chunk: Buffer) => {
      response += chunk.toString();
      if (response.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) resolve();
    }),
  );
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write(
    [
      'POST /fiat-accounts HTTP/1.1',
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Expect: 100-continue',
      `x-api-key: ${key}`,
      `X-CSRF-Token: ${token}`,
      '',
      '',
    ].join('\r\n'),
  );
  await continued;
  return {
    /** Sends the body; resolves with the status line and body of the final answer once the server closes the connection. */
    async finish(): Promise<{ statusLine: string; body: string }> {
      socket.write(body);
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, shutdownWindowMs))]);
      const final = response.slice('HTTP/1.1 100 Continue\r\n\r\n'.length);
      return { statusLine: final.split('\r\n')[0]!, body: final.slice(final.indexOf('\r\n\r\n') + 4) };
    },
  };
}

describe.each(commands)('graceful shutdown of %s', (_label, start) => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s to its PID finishes the request in flight, closes the database and ends the process tree with 0', { timeout: processTestTimeoutMs }, async (signal) => {
    const port = await freePort();
    const server = start(childEnv({ DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port) }));
    servers.push(server);
    const baseUrl = `http://127.0.0.1:${port}`;
    await waitForHealth(baseUrl, server);
    const tokenResponse = await fetch(`${baseUrl}/csrf-token`, { headers: { 'x-api-key': key } });
    const token = ((await tokenResponse.json()) as { data: { csrf_token: string } }).data.csrf_token;
    const accountsBefore = ((await (await fetch(`${baseUrl}/fiat-accounts`, { headers: { 'x-api-key': key } })).json()) as { data: unknown[] }).data.length;
    // Every account answered 201 during an earlier shutdown was written for good.
    expect(accountsBefore).toBe(accountsWritten);
    expect(walFileExists(dataDir)).toBe(true);
    const inFlight = await requestInFlight(port, token);

    process.kill(server.child.pid!, signal);

    // Stopped accepting, yet still running: the request in flight holds it open.
    expect(await until(async () => (await tryConnect(port)) === 'ECONNREFUSED', shutdownWindowMs), `still accepting connections after ${signal}:\n${server.output()}`).toBe(true);
    expect(server.child.exitCode).toBeNull();

    const answer = await inFlight.finish();
    expect(answer.statusLine, server.output()).toBe('HTTP/1.1 201 Created');
    expect((JSON.parse(answer.body) as { data: { account_name: string } }).data.account_name).toBe('In flight');
    accountsWritten += 1;
    expect(await exitWithin(server, shutdownWindowMs), server.output()).toEqual({ code: 0, signal: null });
    expect(await until(() => !groupAlive(server.child.pid!), shutdownWindowMs), 'a process of the tree outlived the signal').toBe(true);
    expect(walFileExists(dataDir), 'the database was not closed').toBe(false);
  });
});

describe('the commands', () => {
  it('are the ones the README and docs/operations.md give', () => {
    const readme = fs.readFileSync(path.join(checkout, 'README.md'), 'utf8');
    const operations = fs.readFileSync(path.join(checkout, 'docs/operations.md'), 'utf8');
    expect(readme.includes('npm start'), 'README.md gives `npm start`').toBe(true);
    expect(readme.includes(directCommand), `README.md gives \`${directCommand}\``).toBe(true);
    expect(operations.includes(directCommand), `docs/operations.md gives \`${directCommand}\``).toBe(true);
  });
});
