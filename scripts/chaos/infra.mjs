// The dependencies the fault harness owns and breaks: a private PostgreSQL cluster, a private Redis, a TCP proxy in
// front of that Redis that can turn into a black hole, and a small tmpfs that can be filled. Everything listens on
// 127.0.0.1 on free ports and lives in temp directories removed at the end; nothing here touches a PostgreSQL or
// Redis the machine already runs.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort, startProcess } from '../../bench/lib.mjs';

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
// PostgreSQL: a cluster of its own, made with initdb in a temp directory, so it can be restarted and its backends
// terminated without disturbing anyone else's database.

/** The newest Debian PostgreSQL server binaries, /usr/lib/postgresql/<version>/bin, or undefined. */
function postgresBinDir() {
  const root = '/usr/lib/postgresql';
  let versions;
  try {
    versions = fs.readdirSync(root).filter((name) => fs.existsSync(path.join(root, name, 'bin', 'postgres')));
  } catch {
    return undefined;
  }
  versions.sort((a, b) => Number(b) - Number(a));
  return versions.length > 0 ? path.join(root, versions[0], 'bin') : undefined;
}

export class PrivatePostgres {
  /** Why the cluster cannot run here (no binaries, no postgres user), or undefined. */
  static unavailable() {
    if (!postgresBinDir()) return 'no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)';
    if (process.getuid?.() === 0 && !userIds('postgres')) return 'running as root and there is no postgres user to run the cluster as';
    return undefined;
  }

  constructor() {
    this.bin = postgresBinDir();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-chaos-pg-'));
    this.dataDir = path.join(this.dir, 'data');
    this.password = randomBytes(18).toString('hex');
    this.appPassword = randomBytes(18).toString('hex');
    // initdb and postgres refuse to run as root: as root, the cluster runs as the postgres user and owns its dir.
    this.owner = process.getuid?.() === 0 ? userIds('postgres') : undefined;
    if (this.owner) fs.chownSync(this.dir, this.owner.uid, this.owner.gid);
    fs.chmodSync(this.dir, 0o700);
  }

  /** Runs one of the cluster's programs as its owner. */
  async tool(name, args, timeoutMs = 60_000) {
    const program = path.join(this.bin, name);
    const [command, argv] = this.owner ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
    return run(command, argv, { cwd: this.dir, timeout: timeoutMs });
  }

  async start() {
    const passwordFile = path.join(this.dir, 'superuser-password');
    fs.writeFileSync(passwordFile, `${this.password}\n`, { mode: 0o600 });
    if (this.owner) fs.chownSync(passwordFile, this.owner.uid, this.owner.gid);
    await this.tool('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C']);
    fs.rmSync(passwordFile);
    this.port = await freePort();
    // Loopback only, sockets in the temp dir (never the system's /var/run/postgresql). Durability against a machine
    // crash is not what is tested, so fsync is off: the shared machine's disk is spared.
    fs.appendFileSync(
      path.join(this.dataDir, 'postgresql.conf'),
      [
        `port = ${this.port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${this.dir}'`,
        'max_connections = 200',
        'shared_buffers = 64MB',
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        '',
      ].join('\n'),
    );
    await this.tool('pg_ctl', ['start', '-w', '-t', '60', '-D', this.dataDir, '-l', path.join(this.dir, 'server.log')]);
    await this.admin(`create role chaos login password '${this.appPassword}'`);
  }

  /** One statement as the superuser, on a connection of its own (a restart must not leave a broken client behind). */
  async admin(statement, values = []) {
    const client = new pg.Client({ host: '127.0.0.1', port: this.port, user: 'postgres', password: this.password, database: 'postgres' });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.query(statement, values)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  }

  async createDatabase(name) {
    await this.admin(`create database ${name} owner chaos`);
    return `postgres://chaos:${this.appPassword}@127.0.0.1:${this.port}/${name}`;
  }

  async dropDatabase(name) {
    await this.admin(`drop database if exists ${name} with (force)`);
  }

  /** `pg_ctl restart -m fast`: every connection is closed, in-flight transactions roll back, the server comes back. */
  async restart() {
    await this.tool('pg_ctl', ['restart', '-m', 'fast', '-w', '-t', '60', '-D', this.dataDir, '-l', path.join(this.dir, 'server.log')]);
  }

  /** pg_terminate_backend of every connection to the database: "terminating connection due to administrator command". */
  async terminateBackends(database) {
    const rows = await this.admin('select count(pg_terminate_backend(pid))::int as terminated from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [database]);
    return rows[0].terminated;
  }

  /** Stops the cluster at once and removes its directory. Safe to call twice. */
  async destroy() {
    if (!fs.existsSync(this.dir)) return;
    if (fs.existsSync(path.join(this.dataDir, 'postmaster.pid'))) {
      await this.tool('pg_ctl', ['stop', '-m', 'immediate', '-w', '-t', '30', '-D', this.dataDir]).catch(() => this.killPostmaster());
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** The last resort of a harness exiting on an error: SIGKILL to the postmaster named in its pid file. */
  killPostmaster() {
    try {
      const pid = Number(fs.readFileSync(path.join(this.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGKILL');
    } catch {
      // not running
    }
  }
}

function userIds(name) {
  try {
    const line = fs
      .readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith(`${name}:`));
    if (!line) return undefined;
    const [, , uid, gid] = line.split(':');
    return { uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
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
