import net from 'node:net';

/** A loopback port nothing listens on: connecting to it is refused at once (a dependency that is down). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A client's connection and its own connection to the target, with what a freeze held back in either direction. */
interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
  held: Array<{ to: 'upstream' | 'client'; data: Buffer }>;
}

/**
 * A TCP proxy on loopback in front of a server every test shares (PostgreSQL, Redis), so that a test can take that
 * server away from one application without touching the server itself:
 * - dropAll(): every open connection ends at once, as on a restart or pg_terminate_backend;
 * - refuse(): the port stops listening, so new connections are refused (a server that is down);
 * - cut(): both at once (a server gone away);
 * - freeze(): connections are accepted and kept, but nothing goes either way (a frozen server, a black hole);
 * - restore(): listening and forwarding again; what a freeze held back is delivered.
 */
export class FaultProxy {
  private readonly pairs = new Set<Pair>();
  private server: net.Server | undefined;
  #port = 0;
  /** Connections accepted so far. */
  accepted = 0;

  private constructor(
    private readonly target: { host: string; port: number },
    private frozen: boolean,
  ) {}

  /** A proxy to `target` on a free loopback port; `startFrozen` gives a black hole from the start. */
  static async start(target: { host: string; port: number }, options: { startFrozen?: boolean } = {}): Promise<FaultProxy> {
    const proxy = new FaultProxy(target, options.startFrozen === true);
    proxy.#port = await proxy.listen(0);
    return proxy;
  }

  /** The proxy's loopback port, the same after refuse() and restore(). */
  get port(): number {
    return this.#port;
  }

  /** A proxy to the host and port of `url` (a postgres:// or redis:// URL). */
  static async startFor(url: string, defaultPort: number): Promise<FaultProxy> {
    const parsed = new URL(url);
    return FaultProxy.start({ host: parsed.hostname, port: Number(parsed.port || defaultPort) });
  }

  /** host:port of the proxy. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlFor(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** How many connections are open through the proxy now. */
  get openConnections(): number {
    return this.pairs.size;
  }

  dropAll(): void {
    for (const pair of this.pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    this.pairs.clear();
  }

  refuse(): void {
    // close() stops listening at once; its callback would wait for the open connections to end.
    if (this.server?.listening) this.server.close();
    this.server = undefined;
  }

  cut(): void {
    this.dropAll();
    this.refuse();
  }

  freeze(): void {
    this.frozen = true;
  }

  async restore(): Promise<void> {
    this.frozen = false;
    if (this.server === undefined) await this.listen(this.port);
    for (const pair of this.pairs) {
      if (!pair.upstream) this.connectUpstream(pair);
      for (const { to, data } of pair.held.splice(0)) (to === 'upstream' ? pair.upstream : pair.client)?.write(data);
    }
  }

  async close(): Promise<void> {
    this.cut();
  }

  private async listen(port: number): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    return (server.address() as net.AddressInfo).port;
  }

  private accept(client: net.Socket): void {
    this.accepted += 1;
    const pair: Pair = { client, upstream: undefined, held: [] };
    this.pairs.add(pair);
    client.on('data', (data) => (!this.frozen && pair.upstream ? pair.upstream.write(data) : pair.held.push({ to: 'upstream', data })));
    client.on('error', () => pair.upstream?.destroy());
    client.on('close', () => {
      pair.upstream?.destroy();
      this.pairs.delete(pair);
    });
    // A frozen server still accepts (the kernel does), but the connection goes nowhere until it is restored.
    if (!this.frozen) this.connectUpstream(pair);
  }

  private connectUpstream(pair: Pair): void {
    const upstream = net.connect(this.target.port, this.target.host);
    pair.upstream = upstream;
    upstream.on('data', (data) => (!this.frozen ? pair.client.write(data) : pair.held.push({ to: 'client', data })));
    upstream.on('error', () => pair.client.destroy());
    upstream.on('close', () => pair.client.destroy());
  }
}
