import type { FastifyInstance } from 'fastify';
import { DomainError } from '../errors.js';

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * From now on, refuses every request that arrives: 503 SHUTTING_DOWN with `Connection: close` and Retry-After.
     * server.ts calls it on SIGTERM/SIGINT (docs/operations.md "Stopping").
     */
    refuseNewRequests(): void;
    /** Aborted when refuseNewRequests is called: long-lived responses (GET /events/stream) end on it, so the drain can finish. */
    readonly shuttingDown: AbortSignal;
  }
}

/**
 * Once the process is stopping, a request still arriving — on a keep-alive connection that was idle when the signal
 * came — is refused before anything looks at it (no key, no database): nothing of it ran, its client may retry it at
 * once on another instance, and the connection closes after the answer (the error handler adds `Connection: close`
 * and Retry-After). Answering it, rather than closing the connection under it, is what spares the client a reset
 * request it could not tell from one that ran (http/connection-drain.ts).
 */
export function installShutdownRefusal(app: FastifyInstance): void {
  let refusing = false;
  const shutdown = new AbortController();
  app.decorate('shuttingDown', shutdown.signal);
  app.decorate('refuseNewRequests', () => {
    refusing = true;
    shutdown.abort();
  });
  app.addHook('onRequest', async () => {
    if (refusing) throw new DomainError('SHUTTING_DOWN', 'This instance is shutting down and took no action. Retry the request; it will reach another instance.');
  });
}
