import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { settings } from '../../src/config/settings.js';
import { temporaryDirectory } from '../helpers/test-app.js';

/**
 * Helpers for the tests that run the real programs as child processes (test/cli, test/e2e): the checkout,
 * a build of dist/ shared between test files, free ports and process bookkeeping. Every address is 127.0.0.1.
 */

export const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Per-test timeout of the files that start processes: generous, because a loaded 2-CPU machine is slow to start node. */
export const processTestTimeoutMs = 120_000;

/**
 * How long a stopping server may take to exit. Shutdown is quick; the window is wide only for a loaded machine.
 * It stays below SHUTDOWN_TIMEOUT_MS (10 s), the deadline a stuck shutdown would hit (exiting 1).
 */
export const shutdownWindowMs = 8_000;

/** The stack frame prefix Node prints; none may reach an operator's terminal. */
export const stackFrame = '    at ';

export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion (killed after timeoutMs); never rejects on a non-zero exit. */
export function run(command: string, args: string[], options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): Promise<ProcessResult> {
  return new Promise((resolve, reject) => {
    execFile(
      command,
      args,
      { cwd: options.cwd ?? checkout, env: options.env ?? process.env, timeout: options.timeoutMs ?? 60_000, killSignal: 'SIGKILL', maxBuffer: 16 * 1024 * 1024 },
      // An ExecFileException is an Error; @types/node writes it as a mapped type that no longer says so.
      (error: (Error & { code?: string | number | null }) | null, stdout, stderr) => {
        if (error && typeof (error as NodeJS.ErrnoException).code === 'string') return reject(error);
        const exit = error as (Error & { code?: number | null; signal?: NodeJS.Signals | null }) | null;
        resolve({ code: exit ? (exit.code ?? null) : 0, signal: exit ? (exit.signal ?? null) : null, stdout, stderr });
      },
    );
  });
}

/**
 * The environment of a child process: this one's, with every setting the server reads (src/config/settings.ts)
 * set but empty, which is unset for the server, unless the test gives it. Neither the developer's shell nor a .env
 * in the checkout (which `npm start` and the CLI read, and whose variables yield to the environment's, even empty
 * ones) can change what a test runs.
 */
export function childEnv(overrides: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...Object.fromEntries(Object.keys(settings).map((name) => [name, ''])) };
  delete env.TEST_DB;
  // Servers of parallel tests would all want the default metrics port; each gets a free one unless a test says.
  return { ...env, METRICS_PORT: '0', ...overrides };
}

function newestMtimeMs(target: string): number {
  const stat = fs.statSync(target);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...fs.readdirSync(target).map((entry) => newestMtimeMs(path.join(target, entry))));
}

function distIsCurrent(): boolean {
  const buildInfo = path.join(checkout, 'dist/.tsbuildinfo');
  if (!fs.existsSync(buildInfo) || !fs.existsSync(path.join(checkout, 'dist/server.js'))) return false;
  const sources = Math.max(newestMtimeMs(path.join(checkout, 'src')), newestMtimeMs(path.join(checkout, 'tsconfig.json')), newestMtimeMs(path.join(checkout, 'tsconfig.build.json')));
  return fs.statSync(buildInfo).mtimeMs >= sources;
}

const buildLock = path.join(os.tmpdir(), `customer-api-build-${Buffer.from(checkout).toString('hex').slice(-24)}.lock`);

/**
 * `npm run build`, once for all test files running in parallel: a lock directory serialises the builds, and a
 * build is skipped when dist/ is newer than every source file (so one file cannot read dist/ while another
 * rewrites it).
 */
export async function ensureBuilt(): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      fs.mkdirSync(buildLock);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // A lock left by a killed run is stale after a minute.
      if (Date.now() - fs.statSync(buildLock, { throwIfNoEntry: false })!.mtimeMs > 60_000) fs.rmSync(buildLock, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${buildLock}`, { cause: error });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    if (distIsCurrent()) return;
    const result = await run('npm', ['run', 'build'], { timeoutMs: 120_000 });
    if (result.code !== 0) throw new Error(`npm run build failed:\n${result.stdout}\n${result.stderr}`);
  } finally {
    fs.rmSync(buildLock, { recursive: true, force: true });
  }
}

/** A port free on 127.0.0.1 at the time of the call (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A long-running child (the server): output collected, exit awaited, killed by `kill` whatever happened. */
export interface Spawned {
  child: ChildProcess;
  output(): string;
  /** What it wrote to stderr alone. */
  errorOutput(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * Resolves once the output holds `text` at least `count` times: an event the server reports, awaited as it is
   * written (not polled). Rejects after `timeoutMs`.
   */
  logged(text: string, count?: number, timeoutMs?: number): Promise<void>;
  /** Kills the process if it is still running (its whole process group when spawned detached). */
  kill(): void;
}

export function spawnServer(command: string, args: string[], env: NodeJS.ProcessEnv, options: { detached?: boolean; cwd?: string } = {}): Spawned {
  const child = spawn(command, args, { cwd: options.cwd ?? checkout, env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  let output = '';
  let errorOutput = '';
  const outputWatchers = new Set<() => void>();
  const append = (chunk: Buffer) => {
    output += chunk.toString();
    for (const watcher of outputWatchers) watcher();
  };
  // Drained always: a full pipe would block the server's logging and with it the server.
  child.stdout.on('data', append);
  child.stderr.on('data', (chunk: Buffer) => {
    append(chunk);
    errorOutput += chunk.toString();
  });
  let running = true;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      running = false;
      resolve({ code, signal });
    }),
  );
  return {
    child,
    output: () => output,
    errorOutput: () => errorOutput,
    exited,
    logged(text, count = 1, timeoutMs = processTestTimeoutMs) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (output.split(text).length - 1 < count) return;
          stop();
          resolve();
        };
        const timer = setTimeout(() => {
          stop();
          reject(new Error(`"${text}" not logged ${count} times within ${timeoutMs} ms:\n${output}`));
        }, timeoutMs);
        const stop = () => {
          clearTimeout(timer);
          outputWatchers.delete(check);
        };
        outputWatchers.add(check);
        check();
      });
    },
    kill() {
      if (child.pid === undefined) return;
      try {
        // A detached group is killed even when its leader (npm) has exited: the server may have outlived it.
        if (options.detached) process.kill(-child.pid, 'SIGKILL');
        else if (running) child.kill('SIGKILL');
      } catch {
        // already gone
      }
    },
  };
}

/** Polls GET /health until it answers 200; fails early if the process exits first. */
export async function waitForHealth(baseUrl: string, server: Spawned, timeoutMs = 60_000): Promise<void> {
  let exited = false;
  void server.exited.then(() => (exited = true));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) throw new Error(`the server exited before answering /health:\n${server.output()}`);
    try {
      const response = await fetch(`${baseUrl}/health`);
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`no answer from ${baseUrl}/health within ${timeoutMs} ms:\n${server.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resolves with the exit, or with 'timeout' if the process is still running after ms. */
export function exitWithin(server: Spawned, ms: number): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'timeout'> {
  return Promise.race([server.exited, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), ms))]);
}

/** Resolves with the connection error code, or 'connected'. */
export function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
  });
}

/** The SQLite WAL file exists while a connection is open and is removed when the last one closes cleanly. */
export function walFileExists(dataDir: string): boolean {
  return fs.existsSync(path.join(dataDir, 'customer-api.sqlite-wal'));
}

/** The stderr of a failed command as lines, for "one line, no stack" assertions. */
export function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.length > 0);
}

/** `node dist/server.js` on a free loopback port with `env`, once /health answers; added to `started` for clean-up. */
export async function startApiServer(env: NodeJS.ProcessEnv, started: Spawned[]): Promise<{ baseUrl: string; server: Spawned }> {
  const port = await freePort();
  const server = spawnServer(process.execPath, ['dist/server.js'], { ...env, PORT: String(port) });
  started.push(server);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitForHealth(baseUrl, server);
  return { baseUrl, server };
}

/** The operator CLI with `env`; its one JSON object, or an error carrying its stderr. */
export async function runCli<T>(env: NodeJS.ProcessEnv, ...args: string[]): Promise<T> {
  const result = await run(process.execPath, ['bin/customer-api.js', ...args], { env });
  if (result.code !== 0) throw new Error(`customer-api ${args.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}

/** Where the processes of a test keep their data: an environment, made ready before and removed after. */
export interface Deployment {
  env: NodeJS.ProcessEnv;
  prepare(): Promise<void>;
  cleanUp(): Promise<void>;
}

function sqliteDeployment(name: string): Deployment {
  const dataDir = temporaryDirectory(`customer-api-e2e-${name}-`);
  return { env: childEnv({ DATA_DIR: dataDir }), prepare: async () => {}, cleanUp: async () => fs.rmSync(dataDir, { recursive: true, force: true }) };
}

/** A fresh schema of the test database, chosen through search_path, so every process sees only its own tables. */
function postgresDeployment(name: string, databaseUrl: string): Deployment {
  const schema = `e2e_${randomBytes(6).toString('hex')}`;
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  const dataDir = temporaryDirectory(`customer-api-e2e-${name}-pg-`);
  const admin = async (text: string) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query(text);
    } finally {
      await client.end();
    }
  };
  return {
    env: childEnv({ DATA_DIR: dataDir, DATABASE_URL: url.toString() }),
    prepare: () => admin(`create schema ${schema}`),
    async cleanUp() {
      await admin(`drop schema if exists ${schema} cascade`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** SQLite, and PostgreSQL when TEST_DATABASE_URL is set: for describe.each over both databases. */
export function databaseDeployments(sqliteLabel: string, name: string): Array<[string, () => Deployment]> {
  const deployments: Array<[string, () => Deployment]> = [[sqliteLabel, () => sqliteDeployment(name)]];
  const databaseUrl = process.env.TEST_DATABASE_URL;
  if (databaseUrl) deployments.push(['PostgreSQL', () => postgresDeployment(name, databaseUrl)]);
  return deployments;
}
