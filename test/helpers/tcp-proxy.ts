import net from 'node:net';

/**
 * A TCP proxy on loopback between the server and PostgreSQL, so a test can take the database away from one server
 * without touching the PostgreSQL that every other test shares:
 * - dropAll(): every open connection ends at once, as on a restart or pg_terminate_backend;
 * - refuse(): new connections are refused (the port stops listening) until forward();
 * - blackHole(): new connections are accepted and never answered until forward();
 * - forward(): back to forwarding new connections.
 */
export class TcpProxy {
  private readonly pairs = new Set<[net.Socket, net.Socket]>();
  private readonly held = new Set<net.Socket>();
  private mode: 'forward' | 'black-hole' = 'forward';
  private server: net.Server;
  /** Connections accepted so far (forwarded or held). */
  accepted = 0;

  private constructor(
    readonly port: number,
    private readonly target: { host: string; port: number },
    server: net.Server,
  ) {
    this.server = server;
  }

  /** A proxy to `target` (PostgreSQL's URL: its host and port) on a free loopback port. */
  static async start(targetUrl: string): Promise<TcpProxy> {
    const url = new URL(targetUrl);
    const target = { host: url.hostname, port: Number(url.port || 5432) };
    let proxy: TcpProxy | undefined;
    const server = net.createServer((socket) => proxy!.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    proxy = new TcpProxy((server.address() as net.AddressInfo).port, target, server);
    return proxy;
  }

  /** `databaseUrl` with its host and port replaced by the proxy's. */
  urlFor(databaseUrl: string): string {
    const url = new URL(databaseUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  private accept(client: net.Socket): void {
    this.accepted += 1;
    client.on('error', () => undefined);
    if (this.mode === 'black-hole') {
      this.held.add(client);
      client.on('close', () => this.held.delete(client));
      return;
    }
    const upstream = net.connect(this.target.port, this.target.host);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    const pair: [net.Socket, net.Socket] = [client, upstream];
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  /** Ends every open connection, both ways, as a restarting database does. */
  dropAll(): void {
    for (const [client, upstream] of this.pairs) {
      client.destroy();
      upstream.destroy();
    }
    this.pairs.clear();
    for (const socket of this.held) socket.destroy();
    this.held.clear();
  }

  /** How many connections are open through the proxy now. */
  get openConnections(): number {
    return this.pairs.size + this.held.size;
  }

  /** Stops listening: new connections are refused until forward(); open ones are left alone. */
  async refuse(): Promise<void> {
    // close() stops listening at once; its callback would wait for the open connections to end.
    if (this.server.listening) this.server.close();
  }

  /** New connections are accepted and never answered until forward(). */
  async blackHole(): Promise<void> {
    this.mode = 'black-hole';
    await this.listen();
  }

  /** Forwards new connections again (listening again after refuse()). */
  async forward(): Promise<void> {
    this.mode = 'forward';
    for (const socket of this.held) socket.destroy();
    this.held.clear();
    await this.listen();
  }

  private async listen(): Promise<void> {
    if (this.server.listening) return;
    const server = net.createServer((socket) => this.accept(socket));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  async close(): Promise<void> {
    this.dropAll();
    await this.refuse();
  }
}
