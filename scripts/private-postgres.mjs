// A PostgreSQL cluster of its own: made with initdb in a temp directory, listening on a free loopback port with its
// unix socket in that directory, so it can be restarted, its backends terminated, and finally stopped and removed
// without disturbing anyone else's database. The fault harness breaks one (scripts/chaos); the test suite runs its
// PostgreSQL project on one when TEST_DATABASE_URL is unset (vitest.config.ts).
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from '../bench/lib.mjs';

const run = promisify(execFile);

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

  /** `role`: the login role that owns the databases made by createDatabase (the superuser is postgres). */
  constructor({ role }) {
    this.role = role;
    this.bin = postgresBinDir();
    this.dir = fs.mkdtempSync(path.join(os.tmpdir(), `customer-api-pg-${role}-`));
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
    await this.tool('initdb', ['-D', this.dataDir, '-U', 'postgres', '--auth=scram-sha-256', `--pwfile=${passwordFile}`, '-E', 'UTF8', '--locale=C', '--no-sync']);
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
    await this.admin(`create role ${this.role} login password '${this.appPassword}'`);
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
    await this.admin(`create database ${name} owner ${this.role}`);
    return `postgres://${this.role}:${this.appPassword}@127.0.0.1:${this.port}/${name}`;
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
