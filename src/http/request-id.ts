import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { requestIdLengthMax } from '../config/limits.js';

const requestIdPattern = new RegExp(`^[A-Za-z0-9._:-]{1,${requestIdLengthMax}}$`);

/** Echo the client's X-Request-Id when it is a sane token, so both sides can correlate logs; otherwise mint one. */
export function requestIdFor(raw: IncomingMessage): string {
  const incoming = raw.headers['x-request-id'];
  return typeof incoming === 'string' && requestIdPattern.test(incoming) ? incoming : randomUUID();
}

export function installRequestIdHeader(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });
}
