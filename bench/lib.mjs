// Helpers shared by the benchmark scripts: connection strings, ports, child processes, memory readings.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const checkout = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The V8 heap sizes `npm start` gives the server (package.json's start script; docs/operations.md "Memory"), read
 * from there so that the benchmark and the fault harness measure the server as it runs and cannot drift from it.
 */
export const serverHeapFlags = JSON.parse(fs.readFileSync(path.join(checkout, 'package.json'), 'utf8'))
  .scripts.start.split(/\s+/)
  .filter((word) => /^--max-(semi|old)-space-size=\d+$/.test(word));

/**
 * The connection string with `search_path` set to one schema, as a libpq `options` parameter: both pg.Pool({
 * connectionString }) in the server and the raw baseline read it, so every unqualified table name (and the
 * migrations) lands in that schema and nothing outside it is touched.
 */
export function withSearchPath(databaseUrl, schema) {
  const url = new URL(databaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

/** The URL without its password, for printing. */
export function describeDatabaseUrl(databaseUrl) {
  const url = new URL(databaseUrl);
  return `postgres://${url.hostname}:${url.port || 5432}${url.pathname}`;
}

/** A port free on 127.0.0.1 at the time of the call. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Every child this process started and has not seen exit; killed by PID on exit, error or signal. */
const children = new Set();

export function killChildren() {
  for (const child of children) {
    try {
      process.kill(child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  children.clear();
}

/**
 * Starts `node <script>` with the given environment (stdout/stderr drained, kept for error messages). The child
 * is node itself, not npm, so its PID is the process whose memory is read.
 */
export function startNode(script, args, env, label, nodeArgs = []) {
  return startProcess(process.execPath, [...nodeArgs, script, ...args], env, label);
}

/** Starts any program as a child of this process, watched and stopped like `startNode`'s (redis-server, for one). */
export function startProcess(command, args, env, label) {
  const child = spawn(command, args, { cwd: checkout, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk) => {
    output += chunk.toString();
    if (output.length > 200_000) output = output.slice(-100_000);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  children.add(child);
  let exitInfo;
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      children.delete(child);
      exitInfo = { code, signal };
      resolve(exitInfo);
    }),
  );
  return {
    label,
    pid: child.pid,
    exited,
    output: () => output,
    isRunning: () => exitInfo === undefined,
    /** SIGTERM, then SIGKILL after a grace period. */
    async stop(graceMs = 5000) {
      if (exitInfo !== undefined) return exitInfo;
      try {
        process.kill(child.pid, 'SIGTERM');
      } catch {
        return exitInfo;
      }
      const timer = setTimeout(() => {
        try {
          process.kill(child.pid, 'SIGKILL');
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

/** Polls `url` until it answers 2xx; fails early if the process exits first. */
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

/** Peak (VmHWM) and current (VmRSS) resident memory of a process, in MB; undefined off Linux. */
export function memoryOf(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
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

/** The median of numbers (undefined for none). */
export function median(values) {
  const sorted = values.filter((value) => Number.isFinite(value)).sort((a, b) => a - b);
  if (sorted.length === 0) return undefined;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}
