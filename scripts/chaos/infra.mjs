// The dependencies the fault harness owns and breaks: a private PostgreSQL cluster, a private Redis, a TCP proxy in
// front of that Redis that can turn into a black hole, and a small tmpfs that can be filled. Everything listens on
// 127.0.0.1 on free ports and lives in temp directories removed at the end; nothing here touches a PostgreSQL or
// Redis the machine already runs.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startProcess } from '../../bench/lib.mjs';

// The cluster is shared with the test suite's throwaway one (vitest.config.ts).
export { PrivatePostgres } from '../private-postgres.mjs';

const run = promisify(execFile);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where a program is on PATH, or undefined. */
export function which(program) {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    const candidate = path.join(dir, program);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// Redis: a redis-server of its own (a child of this process, killed by PID), restartable on the same port.

export class PrivateRedis {
  static unavailable() {
    return which('redis-server') ? undefined : 'no redis-server on PATH (apt-get install redis-server)';
  }

  async start() {
    this.port ??= await freePort();
    this.process = startProcess(which('redis-server'), ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env, 'redis-server');
    const deadline = Date.now() + 10_000;
    while (!(await redisAnswers(this.port))) {
      if (!this.process.isRunning() || Date.now() > deadline) throw new Error(`redis-server did not start on port ${this.port}:\n${this.process.output()}`);
      await sleep(50);
    }
  }

  /** kill -9: every connection drops, nothing answers on the port until start() again. */
  async kill() {
    process.kill(this.process.pid, 'SIGKILL');
    await this.process.exited;
  }

  async stop() {
    await this.process?.stop(2000);
  }
}

function redisAnswers(port) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const done = (ok) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => done(chunk.toString().startsWith('+PONG')));
  });
}

// ---------------------------------------------------------------------------------------------------------------
// The black hole: a TCP proxy on loopback between the instances and Redis. Open, it forwards both ways. Frozen, it
// keeps every connection open and accepts new ones but moves no byte either way: Redis "up" but never answering,
// as a stalled network or a hung server looks to a client. Thawed, the bytes held back flow again.

export class BlackHole {
  constructor(targetPort) {
    this.targetPort = targetPort;
    this.frozen = false;
    this.pairs = new Set();
  }

  async listen() {
    this.server = net.createServer((client) => this.accept(client));
    await new Promise((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = this.server.address().port;
  }

  accept(client) {
    const pair = {
      client,
      upstream: undefined,
      close: () => {
        this.pairs.delete(pair);
        client.destroy();
        pair.upstream?.destroy();
      },
    };
    this.pairs.add(pair);
    client.on('error', pair.close);
    client.on('close', pair.close);
    if (this.frozen) client.pause();
    else this.connect(pair);
  }

  connect(pair) {
    const upstream = net.connect(this.targetPort, '127.0.0.1');
    pair.upstream = upstream;
    upstream.on('error', pair.close);
    upstream.on('close', pair.close);
    pair.client.pipe(upstream);
    upstream.pipe(pair.client);
  }

  freeze() {
    this.frozen = true;
    for (const pair of this.pairs) {
      pair.client.pause();
      pair.upstream?.pause();
    }
  }

  thaw() {
    this.frozen = false;
    for (const pair of this.pairs) {
      if (!pair.upstream) this.connect(pair);
      pair.client.resume();
      pair.upstream.resume();
    }
  }

  async close() {
    for (const pair of this.pairs) pair.close();
    await new Promise((resolve) => this.server?.close(resolve) ?? resolve());
  }
}

// ---------------------------------------------------------------------------------------------------------------
// A full disk: SQLite's data directory on a small tmpfs, filled to the last byte by a filler file, then freed.

export class SmallDisk {
  /** Why a tmpfs cannot be mounted here, or undefined (mounting needs root; a container may forbid it anyway). */
  static async unavailable() {
    if (process.platform !== 'linux') return 'tmpfs mounts need Linux';
    if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
    const probe = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-chaos-probe-'));
    try {
      await run('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', probe]);
      await run('umount', [probe]);
      return undefined;
    } catch (error) {
      return `mount -t tmpfs failed: ${(error.stderr || error.message).trim()}`;
    } finally {
      fs.rmSync(probe, { recursive: true, force: true });
    }
  }

  async mount(sizeMb) {
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-chaos-disk-'));
    await run('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', this.dir]);
    this.mounted = true;
    this.filler = path.join(this.dir, 'chaos-filler');
    return this.dir;
  }

  /** Writes zeros until the file system says ENOSPC, in ever smaller pieces down to one byte: 100 % used. */
  fill() {
    const fd = fs.openSync(this.filler, 'a');
    try {
      for (let chunk = 1 << 20; chunk >= 1; chunk >>= 2) {
        const zeros = Buffer.alloc(chunk);
        for (;;) {
          try {
            fs.writeSync(fd, zeros);
          } catch (error) {
            if (error.code === 'ENOSPC') break;
            throw error;
          }
        }
      }
    } finally {
      fs.closeSync(fd);
    }
  }

  free() {
    fs.rmSync(this.filler, { force: true });
  }

  async unmount() {
    if (!this.mounted) return;
    this.mounted = false;
    await run('umount', ['-l', this.dir]).catch(() => undefined);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
