// The API instances under test and their supervisor. Each instance keeps its port across restarts, so the load
// balancer (load.mjs) always knows where to send; the supervisor restarts an instance that exits without the
// harness having stopped it, as systemd or Kubernetes would, and records that exit as a crash.
import path from 'node:path';
import { checkout, serverHeapFlags, serverStartEnv, startNode } from '../../bench/lib.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long a start may take before it counts as failed; a restart is retried until the fleet's deadline. */
const startTimeoutMs = 60_000;
/** Between two failed starts (the database still away, say), as a supervisor's restart delay would be. */
const restartDelayMs = 500;
const superviseIntervalMs = 100;
/** How often the fleet samples each instance's /ready, as a load balancer's health check would. */
export const readinessIntervalMs = 250;

/** Answers whether GET /ready is 200 within a second. */
export async function isReady(url) {
  try {
    const response = await fetch(`${url}/ready`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

class Instance {
  constructor(name, port, env) {
    this.name = name;
    this.port = port;
    this.env = { ...env, PORT: String(port) };
    this.url = `http://127.0.0.1:${port}`;
    /** Set while the harness itself has stopped or killed the instance: its exit is no crash. */
    this.held = false;
    this.restarting = false;
  }

  /** Spawns the server and waits for /ready; answers the milliseconds from spawn to ready. */
  async start() {
    const startedAt = Date.now();
    this.proc = startNode(path.join(checkout, 'dist/server.js'), [], { ...this.env, ...serverStartEnv }, this.name, serverHeapFlags);
    this.wasReady = false;
    for (;;) {
      if (!this.proc.isRunning()) throw new StartFailed(this, await this.proc.exited);
      if (await isReady(this.url)) break;
      if (Date.now() - startedAt > startTimeoutMs) {
        await this.proc.stop(1000);
        throw new StartFailed(this, { code: null, signal: 'timeout' });
      }
      await sleep(50);
    }
    this.wasReady = true;
    return Date.now() - startedAt;
  }

  isRunning() {
    return this.proc?.isRunning() ?? false;
  }

  /** The last lines the process wrote. */
  tail(lines = 6) {
    return (this.proc?.output() ?? '').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** The error an exit came with: Node prints an uncaught error's message on a line of its own, before the stack. */
  cause() {
    const lines = (this.proc?.output() ?? '').split('\n');
    return (lines.filter((line) => /^[\w.]*(Error|error)\b/.test(line)).at(-1) ?? lines.filter(Boolean).at(-1) ?? '').slice(0, 300);
  }
}

class StartFailed extends Error {
  constructor(instance, exit) {
    super(`${instance.name} did not become ready (exit ${exit.code ?? exit.signal}): ${instance.cause()}`);
    this.exit = exit;
  }
}

export class Fleet {
  /** `count` instances on the given ports, each started with `env`. */
  constructor({ count, ports, env, log }) {
    this.instances = Array.from({ length: count }, (_, index) => new Instance(`instance ${index + 1}`, ports[index], env));
    this.log = log;
    /** Exits the harness did not cause: { instance, at, code, signal, tail }. */
    this.crashes = [];
    /** Every start after the first: { instance, cause, readyMs }, or failedStarts for the ones that never got ready. */
    this.restarts = [];
    this.failedStarts = 0;
  }

  get urls() {
    return this.instances.map((instance) => instance.url);
  }

  async startAll() {
    for (const instance of this.instances) await instance.start();
    this.timer = setInterval(() => this.supervise(), superviseIntervalMs);
    this.watchReadiness();
  }

  /**
   * What a load balancer's health check would see: each running instance's /ready, every 250 ms, as
   * { at, instance, ready } samples (an instance the harness has stopped is not sampled).
   */
  watchReadiness() {
    this.readiness = [];
    this.watching = true;
    const watch = async () => {
      while (this.watching) {
        const at = Date.now();
        const samples = await Promise.all(
          this.instances.filter((instance) => instance.isRunning() && !instance.held && !instance.restarting).map(async (instance) => ({ at, instance: instance.name, ready: await isReady(instance.url) })),
        );
        this.readiness.push(...samples);
        await sleep(readinessIntervalMs);
      }
    };
    this.watcher = watch();
  }

  supervise() {
    for (const instance of this.instances) {
      if (instance.held || instance.restarting || instance.isRunning()) continue;
      instance.restarting = true;
      instance.proc.exited.then((exit) => {
        this.crashes.push({ instance: instance.name, at: Date.now(), code: exit.code, signal: exit.signal, cause: instance.cause(), tail: instance.tail(40) });
        this.log(`    ${instance.name} exited by itself (code ${exit.code ?? exit.signal}): ${instance.cause()}; restarting it`);
        return this.restart(instance, 'crash');
      }).catch((error) => this.log(`    ${error.message}`));
    }
  }

  /** Starts an instance again until it is ready (failed starts retried after a delay, up to a deadline). */
  async restart(instance, cause) {
    instance.restarting = true;
    const deadline = Date.now() + startTimeoutMs;
    try {
      for (;;) {
        try {
          const readyMs = await instance.start();
          this.restarts.push({ instance: instance.name, cause, readyMs });
          return readyMs;
        } catch (error) {
          if (!(error instanceof StartFailed)) throw error;
          this.failedStarts += 1;
          if (Date.now() > deadline) throw error;
          await sleep(restartDelayMs);
        }
      }
    } finally {
      instance.restarting = false;
    }
  }

  /** Sends `signal` to one instance and waits for it to exit; the supervisor leaves it down until `restart`. */
  async signal(index, signal) {
    const instance = this.instances[index];
    // An instance the supervisor is still bringing back (after a crash) is signalled once it is up.
    for (const deadline = Date.now() + startTimeoutMs; (instance.restarting || !instance.isRunning()) && Date.now() < deadline; ) await sleep(100);
    instance.held = true;
    process.kill(instance.proc.pid, signal);
    const exit = await instance.proc.exited;
    return { instance, exit };
  }

  async restartHeld(instance, cause) {
    try {
      return await this.restart(instance, cause);
    } finally {
      instance.held = false;
    }
  }

  /** Waits until every instance answers /ready; answers when, or undefined at the deadline. */
  async allReady(timeoutMs) {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const ready = await Promise.all(this.instances.map((instance) => !instance.restarting && isReady(instance.url)));
      if (ready.every(Boolean)) return Date.now();
      await sleep(100);
    }
    return undefined;
  }

  /** No more restarts or readiness samples: the harness is stopping the instances. */
  halt() {
    clearInterval(this.timer);
    this.watching = false;
    for (const instance of this.instances) instance.held = true;
  }

  async stopAll() {
    this.halt();
    await this.watcher;
    await Promise.all(this.instances.map((instance) => instance.proc?.stop(15_000)));
  }
}
