import net from 'node:net';

/** A loopback port nothing listens on: connecting to it is refused at once (a dependency that is down). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface FaultProxy {
  /** host:port of the proxy on loopback. */
  readonly address: string;
  /** Connections stay open and new ones are accepted, but nothing is forwarded either way (a frozen server). */
  freeze(): void;
  /** Every connection is closed, and new ones are closed as soon as they are accepted (a server gone away). */
  cut(): void;
  /** Forwards again: what a frozen connection held back is delivered, new connections reach the target. */
  restore(): void;
  close(): Promise<void>;
}

type Mode = 'forward' | 'frozen' | 'cut';

/** A client's connection and its own connection to the target, with what a freeze held back in either direction. */
interface Pair {
  client: net.Socket;
  upstream: net.Socket | undefined;
  held: Array<{ to: 'upstream' | 'client'; data: Buffer }>;
}

/**
 * A loopback TCP proxy to `target` (host:port) that a test freezes, cuts and restores, so a test can take a shared
 * server away from one application without touching the server itself. `startFrozen` gives a black hole: a server
 * that accepts connections and never answers.
 */
export async function faultProxy(target: { host: string; port: number }, options: { startFrozen?: boolean } = {}): Promise<FaultProxy> {
  let mode: Mode = options.startFrozen ? 'frozen' : 'forward';
  const pairs = new Set<Pair>();

  const connectUpstream = (pair: Pair) => {
    const upstream = net.connect(target.port, target.host);
    pair.upstream = upstream;
    upstream.on('data', (data) => (mode === 'forward' ? pair.client.write(data) : pair.held.push({ to: 'client', data })));
    upstream.on('error', () => pair.client.destroy());
    upstream.on('close', () => pair.client.destroy());
  };

  const server = net.createServer((client) => {
    if (mode === 'cut') return void client.destroy();
    const pair: Pair = { client, upstream: undefined, held: [] };
    pairs.add(pair);
    client.on('data', (data) => (mode === 'forward' && pair.upstream ? pair.upstream.write(data) : pair.held.push({ to: 'upstream', data })));
    client.on('error', () => pair.upstream?.destroy());
    client.on('close', () => {
      pair.upstream?.destroy();
      pairs.delete(pair);
    });
    // A frozen server still accepts (the kernel does), but the connection goes nowhere until it is restored.
    if (mode === 'forward') connectUpstream(pair);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;

  const destroyAll = () => {
    for (const pair of pairs) {
      pair.client.destroy();
      pair.upstream?.destroy();
    }
    pairs.clear();
  };
  return {
    address: `127.0.0.1:${port}`,
    freeze: () => void (mode = 'frozen'),
    cut: () => {
      mode = 'cut';
      destroyAll();
    },
    restore: () => {
      mode = 'forward';
      for (const pair of pairs) {
        if (!pair.upstream) connectUpstream(pair);
        for (const { to, data } of pair.held.splice(0)) (to === 'upstream' ? pair.upstream : pair.client)?.write(data);
      }
    },
    close: async () => {
      destroyAll();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
