import net from 'node:net';
import type { Server, ServerResponse } from 'node:http';

export interface ConnectionDrain {
  /** Stops accepting connections; resolves once every open one has ended, each cleanly. */
  drain(): Promise<void>;
}

/** An open connection, and the response in flight on it (undefined between requests). */
interface OpenConnection {
  responding: ServerResponse | undefined;
}

/**
 * Ends an HTTP server's connections without resetting a request a client already sent (docs/operations.md
 * "Stopping"). Closing a Node HTTP server destroys its idle keep-alive connections at once: a request its client had
 * just sent on one is then reset, and the client cannot tell whether it ran. Instead, once `drain` is called, the
 * listener stops accepting (a new connection is refused before any byte of a request) and each open connection ends
 * on its own:
 * - one with a response in flight, after that response (`Connection: close`; a response that is already streaming
 *   is left as it is, and its connection counts as idle after it);
 * - an idle one, after the next request on it, which the app refuses 503 SHUTTING_DOWN with `Connection: close`
 *   (http/shutdown-refusal.ts) — or, if no byte arrives on it for `idleGraceMs`, by closing it then:
 *   its client is not sending, and a close after a quiet spell is the keep-alive expiry every client expects.
 * Must be called before the server listens: it tracks the connections from the first.
 */
export function trackConnections(server: Server, idleGraceMs: number): ConnectionDrain {
  // One record per connection, made when it opens; each request only sets the record's field. Not a Map from socket
  // to response set and deleted per request: such a Map moves to a new table every few requests, each old table
  // linking to the new one and still holding the responses it held, so once one old table has lived long enough to
  // be promoted, that chain kept every request's objects alive until the next full collection (docs/operations.md
  // "Memory").
  const connections = new Map<net.Socket, OpenConnection>();
  let draining = false;
  server.on('connection', (socket: net.Socket) => {
    connections.set(socket, { responding: undefined });
    socket.on('close', () => connections.delete(socket));
  });
  server.on('request', (request, response: ServerResponse) => {
    // Whoever answers a request that arrives while draining (the shutdown refusal, a CORS preflight, a page), its
    // connection ends after that answer: a kept-alive one would wait out the keep-alive timeout, past the deadline.
    if (draining) response.shouldKeepAlive = false;
    const connection = connections.get(request.socket);
    if (connection === undefined) return;
    connection.responding = response;
    response.on('close', () => {
      if (connection.responding === response) connection.responding = undefined;
    });
  });
  // Node's HTTP server destroys a connection that stays silent for its socket timeout, when nothing is in flight.
  const endWhenQuiet = (socket: net.Socket) => socket.setTimeout(idleGraceMs);

  return {
    drain() {
      draining = true;
      // net.Server's own close: http.Server's would destroy the idle connections first (Node 19+), the resets this avoids.
      const closed = new Promise<void>((resolve) => net.Server.prototype.close.call(server, () => resolve()));
      for (const [socket, { responding: response }] of connections) {
        if (response === undefined) endWhenQuiet(socket);
        else if (!response.headersSent) response.setHeader('connection', 'close');
        else response.on('finish', () => endWhenQuiet(socket));
      }
      return closed;
    },
  };
}
