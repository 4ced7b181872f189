// `npm run chaos` (docs/operations.md "Fault harness"): the mixed load against two instances on PostgreSQL and one
// and two on SQLite, one fault per run (kill -9, SIGTERM, PostgreSQL restart, backend termination, Redis kill and
// freeze, a full disk), then the invariants. Everything it needs it starts itself on 127.0.0.1 — its own PostgreSQL
// cluster, Redis, black-hole proxy and tmpfs — and removes at the end. Exit code 1 when an invariant fails.
//
// Tiers: `--tier short` (default; every CI run) and `--tier long` (on demand: every fault several times per run,
// more combinations). `--only <text>[,<text>]` runs the runs whose name contains one of the texts
// (`--only postgres-2/kill-9`), `--list` lists them. A run this machine cannot do (no PostgreSQL binaries, no
// redis-server, no tmpfs without root) is skipped with a line saying why; with `--strict` (CI) that is a failure.
// Env: CHAOS_TIER, CHAOS_ONLY, CHAOS_CONCURRENCY (10).
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkout, freePort, killChildren } from '../../bench/lib.mjs';
import { evaluate, quiesce } from './checks.mjs';
import { makeFixture } from './fixture.mjs';
import { BlackHole, PrivatePostgres, PrivateRedis, SmallDisk } from './infra.mjs';
import { Fleet } from './instances.mjs';
import { Client, Load } from './load.mjs';
import { WebhookReceiver } from './receiver.mjs';
import { printRun, printSummary } from './report.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line) => process.stdout.write(`${line}\n`);

const { values: options } = parseArgs({
  options: { tier: { type: 'string' }, only: { type: 'string' }, list: { type: 'boolean', default: false }, strict: { type: 'boolean', default: false } },
});
const tierName = options.tier ?? process.env.CHAOS_TIER?.trim() ?? 'short';
const only = (options.only ?? process.env.CHAOS_ONLY ?? '')
  .split(',')
  .map((text) => text.trim())
  .filter(Boolean);
const concurrency = Number(process.env.CHAOS_CONCURRENCY?.trim() || 10);

/**
 * The timings of a run: load before the first fault, how long a fault lasts (Redis away, the disk full, an instance
 * down before its restart), the load between two faults and after the last, how many faults per run, and how long
 * the workers get to finish what is pending (past the leases a killed instance leaves behind, 5 s here).
 */
const tiers = {
  short: { preFaultMs: 3000, faultMs: 4000, gapMs: 3000, postFaultMs: 3000, repetitions: 1, quiesceMs: 90_000 },
  long: { preFaultMs: 5000, faultMs: 8000, gapMs: 8000, postFaultMs: 8000, repetitions: 4, quiesceMs: 120_000 },
};
const tier = tiers[tierName];
if (!tier || !Number.isInteger(concurrency) || concurrency < 1) {
  process.stderr.write(`chaos: --tier must be short or long (got ${tierName}); CHAOS_CONCURRENCY a whole number >= 1\n`);
  process.exit(2);
}

/**
 * Which faults run where: the short tier runs every fault once on some configuration (SQLite's kill -9 with two
 * processes only), the long tier adds the rest of the combinations.
 */
const matrix = [
  { dialect: 'postgres', instances: 2, short: ['kill-9', 'sigterm', 'pg-restart', 'pg-terminate', 'redis-kill', 'redis-freeze'], long: [] },
  { dialect: 'sqlite', instances: 1, short: ['sigterm', 'full-disk'], long: ['kill-9', 'redis-kill', 'redis-freeze'] },
  { dialect: 'sqlite', instances: 2, short: ['kill-9'], long: ['sigterm', 'full-disk'] },
];
const runs = matrix.flatMap((group) =>
  [...group.short, ...(tierName === 'long' ? group.long : [])].map((fault) => ({ name: `${group.dialect}-${group.instances}/${fault}`, dialect: group.dialect, instances: group.instances, fault })),
);
const selected = runs.filter((run) => only.length === 0 || only.some((text) => run.name.includes(text)));
if (options.list) {
  for (const run of runs) log(run.name);
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------------------------
// The faults. Each injects, waits for its end (the dependency back, the instance restarted) and answers what it did.

const faults = {
  'kill-9': {
    what: 'kill -9 of one instance, restarted after the fault time',
    resetsAllowed: true,
    async inject(ctx) {
      const index = ctx.repetition % ctx.fleet.instances.length;
      const { instance } = await ctx.fleet.signal(index, 'SIGKILL');
      await sleep(ctx.tier.faultMs / 4);
      return { instance: instance.name, index, readyMs: await ctx.fleet.restartHeld(instance, 'kill -9') };
    },
  },
  sigterm: {
    what: 'SIGTERM to one instance under load, restarted once it has exited',
    async inject(ctx) {
      const index = ctx.repetition % ctx.fleet.instances.length;
      const { instance, exit } = await ctx.fleet.signal(index, 'SIGTERM');
      return { instance: instance.name, index, exit, readyMs: await ctx.fleet.restartHeld(instance, 'SIGTERM') };
    },
  },
  'pg-restart': {
    what: 'pg_ctl restart -m fast of the PostgreSQL cluster',
    async inject(ctx) {
      const startedAt = Date.now();
      await ctx.postgres.restart();
      return { restartMs: Date.now() - startedAt };
    },
  },
  'pg-terminate': {
    what: "pg_terminate_backend of every connection of the instances' database",
    async inject(ctx) {
      return { terminated: await ctx.postgres.terminateBackends(ctx.database) };
    },
  },
  'redis-kill': {
    what: 'kill -9 of Redis, started again after the fault time',
    latencyBound: true,
    async inject(ctx) {
      await ctx.redis.kill();
      await sleep(ctx.tier.faultMs);
      await ctx.redis.start();
      return {};
    },
  },
  'redis-freeze': {
    what: 'Redis behind a TCP black hole (connections accepted, no byte answered) for the fault time',
    latencyBound: true,
    async inject(ctx) {
      ctx.blackHole.freeze();
      await sleep(ctx.tier.faultMs);
      ctx.blackHole.thaw();
      return {};
    },
  },
  'full-disk': {
    what: "SQLite's data directory on a tmpfs filled to 100 % for the fault time, then freed",
    allowedStatuses: [503, 507],
    async inject(ctx) {
      ctx.disk.fill();
      await sleep(ctx.tier.faultMs);
      ctx.disk.free();
      return {};
    },
  },
};

// ---------------------------------------------------------------------------------------------------------------
// Environment of the instances and the CLI: every setting of the server blanked first (empty is unset, and wins over
// a developer's .env), then the harness's.

const { settings } = await import('../../dist/config/settings.js').catch(() => {
  process.stderr.write('chaos: dist/ is missing: run `npm run build` (npm run chaos does)\n');
  process.exit(2);
});

function instanceEnv({ databaseUrl, dataDir, redisPort }) {
  const env = { ...process.env, ...Object.fromEntries(Object.keys(settings).map((name) => [name, ''])) };
  delete env.NODE_OPTIONS;
  return {
    ...env,
    API_ENVIRONMENT: 'sandbox',
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    METRICS_PORT: 'off',
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    // The limiter runs (through Redis, which the Redis faults break) but never limits the harness's own load.
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    RATE_LIMIT_PER_SECOND: '1000000',
    RATE_LIMIT_PER_IP_PER_SECOND: '1000000',
    // Payments and transfers settle, OTC orders move on, within the run.
    SANDBOX_AUTO_SETTLE_MS: '500',
    OTC_QUOTE_TTL_SECONDS: '3600',
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    WEBHOOK_RETRY_DELAYS: '1s,1s,2s,5s,10s,20s,30s',
    WEBHOOK_TIMEOUT_MS: '5000',
    // A key whose request died with its instance is free again within the run, not a minute later.
    IDEMPOTENCY_LEASE_SECONDS: '10',
    // A settlement or a batch of events claimed by an instance that was killed is taken over within the run's
    // quiescing, not a minute later.
    SETTLEMENT_LEASE_SECONDS: '5',
    WEBHOOK_FAN_OUT_LEASE_SECONDS: '5',
  };
}

function cliWith(env) {
  return (args) =>
    new Promise((resolve, reject) => {
      execFile(process.execPath, [path.join(checkout, 'bin/customer-api.js'), ...args], { cwd: checkout, env, timeout: 120_000 }, (error, stdout, stderr) => {
        if (error) return reject(new Error(`customer-api ${args.join(' ')}: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout));
      });
    });
}

/** `customer-api ledger verify`: its report, whatever its exit code. */
function verifyLedger(env) {
  return new Promise((resolve) => {
    execFile(process.execPath, [path.join(checkout, 'bin/customer-api.js'), 'ledger', 'verify'], { cwd: checkout, env, timeout: 300_000 }, (error, stdout, stderr) => {
      try {
        const report = JSON.parse(stdout);
        resolve({ ok: report.ok === true && !error, report: { ok: report.ok, checked: report.checked, problems: report.problems?.slice(0, 5) } });
      } catch {
        resolve({ ok: false, error: `${error?.message ?? 'no report'} ${stderr}`.trim() });
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------------------------

const shared = { postgres: undefined, redis: undefined, blackHole: undefined, receiver: undefined, disks: new Set(), tempDirs: new Set(), fleet: undefined };
let cleanedUp = false;
async function cleanUp() {
  if (cleanedUp) return;
  cleanedUp = true;
  shared.fleet?.halt();
  killChildren();
  for (const disk of shared.disks) await disk.unmount();
  for (const dir of shared.tempDirs) fs.rmSync(dir, { recursive: true, force: true });
  await shared.postgres?.destroy().catch((error) => process.stderr.write(`chaos: could not stop the private PostgreSQL: ${error.message}\n`));
  await shared.blackHole?.close();
  await shared.receiver?.close();
}
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    process.stderr.write(`\nchaos: ${signal}, stopping everything it started\n`);
    cleanUp().finally(() => process.exit(130));
  });
}
// A synchronous last resort: no child and no postmaster outlives the harness.
process.on('exit', () => {
  killChildren();
  shared.postgres?.killPostmaster();
});

/** One run: a fresh database, the instances, the fixture, the load with its faults, then the checks. */
async function runOne(run, index) {
  const fault = faults[run.fault];
  const startedAt = Date.now();
  const tempDir = fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-chaos-'));
  shared.tempDirs.add(tempDir);
  let disk;
  let database;
  let fleet;
  let client;
  try {
    let dataDir = path.join(tempDir, 'data');
    if (run.fault === 'full-disk') {
      disk = new SmallDisk();
      shared.disks.add(disk);
      // Room for the database and its WAL through the run; the filler takes the rest when the fault starts.
      dataDir = path.join(await disk.mount(256), 'data');
    }
    if (run.dialect === 'postgres') database = `chaos_${process.pid}_${index}`;
    const databaseUrl = database ? await shared.postgres.createDatabase(database) : undefined;
    const env = instanceEnv({ databaseUrl, dataDir, redisPort: shared.blackHole.port });
    const cli = cliWith(env);
    const ports = await Promise.all(Array.from({ length: run.instances }, () => freePort()));
    fleet = new Fleet({ count: run.instances, ports, env, log });
    shared.fleet = fleet;
    // The first instance applies the migrations to the fresh database; the others start after it.
    await fleet.startAll();
    client = new Client(fleet.urls);
    const fixture = await makeFixture({ client, cli, receiver: shared.receiver, name: `chaos-${index}-${run.fault}` });
    const load = new Load({ client, fixture, concurrency, runId: `${process.pid}-${index}` });

    const loadStartedAt = Date.now();
    load.start();
    await sleep(tier.preFaultMs);
    const injected = [];
    for (let repetition = 0; repetition < tier.repetitions; repetition += 1) {
      if (repetition > 0) await sleep(tier.gapMs);
      const record = { kind: run.fault, startedAt: Date.now() };
      Object.assign(record, await fault.inject({ fleet, postgres: shared.postgres, database, redis: shared.redis, blackHole: shared.blackHole, disk, tier, repetition }));
      record.injectedAt = Date.now();
      record.recoveredAt = await fleet.allReady(60_000);
      injected.push(record);
    }
    await sleep(tier.postFaultMs);
    await load.stop();
    const loadStoppedAt = Date.now();
    const reopened = await load.settleUp();
    if (reopened > 0) log(`    ${reopened} keyed operations had no final answer when the load stopped; retried with their keys`);
    const quiesced = await quiesce(client, fixture, tier.quiesceMs);
    const ledger = await verifyLedger(env);
    const result = evaluate({
      load,
      fixture,
      quiesced,
      ledger,
      fleet,
      faults: injected,
      policy: { allowedStatuses: fault.allowedStatuses ?? [503], resetsAllowed: fault.resetsAllowed === true, latencyBound: fault.latencyBound === true },
      loadStartedAt,
    });
    return {
      ...run,
      what: fault.what,
      seconds: (Date.now() - startedAt) / 1000,
      loadSeconds: (loadStoppedAt - loadStartedAt) / 1000,
      faultsInjected: injected,
      // Each crash with the last lines the process wrote, for whoever reads the JSON.
      crashes: fleet.crashes,
      ...result,
    };
  } catch (error) {
    return { ...run, what: fault.what, seconds: (Date.now() - startedAt) / 1000, error: error.stack ?? String(error) };
  } finally {
    await fleet?.stopAll();
    await client?.close();
    if (database) await shared.postgres.dropDatabase(database).catch((error) => log(`    could not drop ${database}: ${error.message}`));
    if (disk) {
      await disk.unmount();
      shared.disks.delete(disk);
    }
    fs.rmSync(tempDir, { recursive: true, force: true });
    shared.tempDirs.delete(tempDir);
  }
}

async function main() {
  const startedAt = Date.now();
  log(`Customer API fault harness — tier ${tierName}, ${selected.length} runs, concurrency ${concurrency}; node ${process.version}, ${os.cpus().length} CPU, load average ${os.loadavg().map((v) => v.toFixed(2)).join(' ')}`);
  if (!fs.existsSync(path.join(checkout, 'dist/server.js'))) throw new Error('dist/ is missing: run `npm run build` (npm run chaos does)');

  // What this machine cannot do is skipped with a line saying so (a failure with --strict).
  const skipped = [];
  const unavailable = {
    postgres: PrivatePostgres.unavailable(),
    redis: PrivateRedis.unavailable(),
    disk: selected.some((run) => run.fault === 'full-disk') ? await SmallDisk.unavailable() : undefined,
  };
  const runnable = selected.filter((run) => {
    const reason = unavailable.redis ?? (run.dialect === 'postgres' ? unavailable.postgres : undefined) ?? (run.fault === 'full-disk' ? unavailable.disk : undefined);
    if (reason) skipped.push({ name: run.name, reason });
    return !reason;
  });
  for (const skip of skipped) log(`SKIPPED ${skip.name}: ${skip.reason}`);

  shared.receiver = await new WebhookReceiver().listen();
  if (runnable.length > 0) {
    shared.redis = new PrivateRedis();
    await shared.redis.start();
    shared.blackHole = new BlackHole(shared.redis.port);
    await shared.blackHole.listen();
    log(`redis-server on 127.0.0.1:${shared.redis.port}, behind the black-hole proxy on 127.0.0.1:${shared.blackHole.port}`);
  }
  if (runnable.some((run) => run.dialect === 'postgres')) {
    shared.postgres = new PrivatePostgres({ role: 'chaos' });
    await shared.postgres.start();
    log(`PostgreSQL: a private cluster on 127.0.0.1:${shared.postgres.port} (${shared.postgres.bin}, data in ${shared.postgres.dir}; fsync off)`);
  }
  if (runnable.some((run) => run.fault === 'full-disk')) log('full disk: a 256 MB tmpfs under the SQLite data directory, filled to 100 % by a filler file');

  const results = [];
  for (const [index, run] of runnable.entries()) {
    log(`\n${run.name} — ${faults[run.fault].what}`);
    const result = await runOne(run, index);
    results.push(result);
    printRun(result, log);
  }
  const totalSeconds = (Date.now() - startedAt) / 1000;
  const failed = printSummary({ results, skipped, tierName, totalSeconds, log });

  const report = {
    tier: tierName,
    settings: { ...tier, concurrency },
    startedAt: new Date(startedAt).toISOString(),
    totalSeconds,
    machine: { node: process.version, cpus: os.cpus().length, loadAverageAtEnd: os.loadavg() },
    skipped,
    results,
  };
  const outDir = path.join(checkout, '.chaos');
  fs.mkdirSync(outDir, { recursive: true });
  const outFile = path.join(outDir, `results-${tierName}.json`);
  fs.writeFileSync(outFile, `${JSON.stringify(report, (_key, value) => (typeof value === 'bigint' ? value.toString() : value), 2)}\n`);
  log(`written: ${path.relative(checkout, outFile)}`);
  const strictlyMissing = options.strict && skipped.length > 0;
  if (strictlyMissing) log('--strict: a skipped run is a failure (install what it names, run as root for the tmpfs)');
  return failed || strictlyMissing ? 1 : 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  process.stderr.write(`\nchaos failed: ${error.stack ?? error}\n`);
} finally {
  await cleanUp();
}
process.exit(exitCode);
