// Helpers shared by the benchmark scripts: connection strings, ports, child processes, memory readings.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The V8 heap flags and the allocator's settings `npm start` gives the server (package.json's start script;
 * docs/operations.md "Memory"), read from there so that the benchmark and the fault harness measure the server as it
 * runs and cannot drift from it.
 */
const packageJson = /** @type {{ scripts: { start: string } }} */ (parseJson(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8')));
const startWords = packageJson.scripts.start.split(/\s+/);
export const serverHeapFlags = startWords.filter((word) => /^--(max-(semi|old)-space-size=\d+|no-allocation-site-pretenuring)$/.test(word));
/** The environment `npm start` sets for the server (`env NAME=value`): glibc's malloc settings. */
export const serverStartEnv = Object.fromEntries(
  startWords.filter((word) => /^MALLOC_[A-Z_]+=\d+$/.test(word)).map((word) => /** @type {[string, string]} */ (word.split('='))),
);

/**
 * `JSON.parse` typed as what its result is until the caller says what it expects: unknown, not any (a JSDoc cast of
 * an `any` is invisible to ESLint's type-aware rules, a cast of an `unknown` is what it says).
 *
 * @param {string} text
 * @returns {unknown}
 */
export function parseJson(text) {
  return JSON.parse(text);
}

/**
 * The connection string with `search_path` set to one schema, as a libpq `options` parameter: both pg.Pool({
 * connectionString }) in the server and the raw baseline read it, so every unqualified table name (and the
 * migrations) lands in that schema and nothing outside it is touched.
 *
 * @param {string} databaseUrl
 * @param {string} schema
 */
export function withSearchPath(databaseUrl, schema) {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The URL without its password, for printing. @param {string} databaseUrl */
export function describeDatabaseUrl(databaseUrl) {
  const url = new URL(databaseUrl);
  return `postgres://${url.hostname}:${url.port || 5432}${url.pathname}`;
}

/** A port free on 127.0.0.1 at the time of the call. @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {net.AddressInfo} */ (server.address());
      server.close(() => resolve(port));
    });
  });
}

/**
 * Every child this process started and has not seen exit; killed by PID on exit, error or signal.
 * @type {Set<import('node:child_process').ChildProcess>}
 */
const children = new Set();

export function killChildren() {
  for (const child of children) {
    try {
      if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
}

/**
 * Starts `node <script>` with the given environment (stdout/stderr drained, kept for error messages). The child
 * is node itself, not npm, so its PID is the process whose memory is read.
 *
 * @param {string} script
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {string} label
 * @param {string[]} nodeArgs
 */
export function startNode(script, args, env, label, nodeArgs = []) {
  return startProcess(process.execPath, [...nodeArgs, script, ...args], env, label);
}

/**
 * @typedef {{ code: number | null, signal: NodeJS.Signals | null }} ExitInfo
 * @typedef {{
 *   label: string,
 *   pid: number,
 *   exited: Promise<ExitInfo>,
 *   output: () => string,
 *   isRunning: () => boolean,
 *   stop: (graceMs?: number) => Promise<ExitInfo | undefined>,
 * }} Child
 */

/**
 * Starts any program as a child of this process, watched and stopped like `startNode`'s (redis-server, for one).
 *
 * @param {string} command
 * @param {string[]} args
 * @param {NodeJS.ProcessEnv} env
 * @param {string} label
 * @returns {Child}
 */
export function startProcess(command, args, env, label) {
  const child = spawn(command, args, { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
  // Undefined only when the program could not be spawned at all, which the child's 'error' event then reports.
  const pid = /** @type {number} */ (child.pid);
  let output = '';
  /** @param {Buffer} chunk */
  const keep = (chunk) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  children.add(child);
  /** @type {ExitInfo | undefined} */
  let exitInfo;
  /** @type {Promise<ExitInfo>} */
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      const info = { code, signal };
      exitInfo = info;
      resolve(info);
    }),
  );
  return {
    label,
    pid,
    exited,
    output: () => output,
    isRunning: () => exitInfo === undefined,
    /** SIGTERM, then SIGKILL after a grace period. */
    async stop(graceMs = 5000) {
      if (exitInfo !== undefined) return exitInfo;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return exitInfo;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }, graceMs);
      const result = await exited;
      clearTimeout(timer);
      return result;
    },
  };
}

/**
 * Polls `url` until it answers 2xx; fails early if the process exits first.
 *
 * @param {string} url
 * @param {Child} proc
 * @param {Record<string, string>} headers
 */
export async function waitForHttp(url, proc, timeoutMs = 60_000, headers = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.isRunning()) throw new Error(`${proc.label} exited before answering ${url}:\n${proc.output()}`);
    try {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${proc.label}: no answer from ${url} within ${timeoutMs} ms:\n${proc.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Peak (VmHWM) and current (VmRSS) resident memory of a process, in MB; undefined off Linux.
 *
 * @param {number} pid
 */
export function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    /** @param {string} name */
    const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
    return { peakMb: kb('VmHWM') / 1024, currentMb: kb('VmRSS') / 1024 };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (clock ticks of 10 ms); undefined off
 * Linux. The difference over a run divided by its requests is the server's CPU cost per request, a figure that a
 * busy machine disturbs much less than requests/s.
 *
 * @param {number} pid
 */
export function cpuSecondsOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces) start at field 3; utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicksPerSecond;
  } catch {
    return undefined;
  }
}
const clockTicksPerSecond = 100;

/**
 * The median of numbers (undefined for none).
 *
 * @param {(number | undefined)[]} values
 */
export function median(values) {
  const sorted = values.filter(isFiniteNumber).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  /** @param {number} index */
  const at = (index) => /** @type {number} */ (sorted[index]);
  return sorted.length % 2 === 1 ? at(middle) : (at(middle - 1) + at(middle)) / 2;
}

/**
 * @param {number | undefined} value
 * @returns {value is number}
 */
function isFiniteNumber(value) {
  return value !== undefined && Number.isFinite(value);
}
