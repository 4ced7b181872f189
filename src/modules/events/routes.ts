import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { callerOf } from '../../http/auth.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { DataOf, authenticatedReadErrors, errorResponses } from '../../http/schemas.js';
import { Pagination } from '../transactions/index.js';
import { Event, EventParams, EventsQuery } from './schemas.js';
import type { EventService } from './service.js';
import type { EventStreams } from './stream.js';
import { eventStreamCursorLengthMax, eventStreamHeartbeatMs, eventStreamsPerCustomerMax } from '../../config/limits.js';

/**
 * The deliveries of one event, which GET /events/{eventId} lists: the record of one and how to read them. The
 * webhooks module provides both (it depends on events, so events take them as an option rather than importing them).
 */
export interface EventDeliveries {
  item: TSchema;
  list(caller: AuthenticatedKey, eventId: string): Promise<unknown[]>;
}

/**
 * GET /events and GET /events/{eventId} (docs/webhooks.md "Events"): the events webhooks deliver, so they are
 * documented with the webhooks and read with their scope.
 */
export function eventRoutes(app: FastifyInstance, events: EventService, deliveries: EventDeliveries): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Webhooks'];

  routes.get(
    '/events',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags,
        operationId: 'listEvents',
        summary: 'List events, newest first',
        description:
          'The customer’s events the key may read (each type needs its resource’s read scope), in the body a delivery carries; paginated like GET /transactions.',
        querystring: EventsQuery,
        response: {
          200: Type.Object({ data: Type.Array(Event), meta: Type.Object({ pagination: Pagination }) }, { additionalProperties: false }),
          ...errorResponses(...authenticatedReadErrors),
        },
      },
    },
    async (request) => events.list(callerOf(request), request.query.type, request.query.page ?? 1, request.query.limit ?? 50),
  );

  const EventWithDeliveries = Type.Object(
    { ...Event.properties, deliveries: Type.Array(deliveries.item, { description: 'Its deliveries to the customer’s subscriptions, oldest first, as GET /webhooks/{webhookId}/deliveries lists them (their attempts: GET /webhooks/{webhookId}/deliveries/{deliveryId})' }) },
    { additionalProperties: false },
  );
  routes.get(
    '/events/:eventId',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags,
        operationId: 'getEvent',
        summary: 'Get an event and its deliveries',
        description: '404 also for an event the key may not read.',
        params: EventParams,
        response: { 200: DataOf(EventWithDeliveries), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      const event = await events.get(caller, request.params.eventId);
      return { data: { ...event, deliveries: await deliveries.list(caller, event.id) } };
    },
  );
}

const Cursor = Type.String({ pattern: `^[0-9]{1,${eventStreamCursorLengthMax}}$`, description: 'A cursor: the `id` of a message of the stream (opaque)' });

/**
 * GET /events/stream (docs/webhooks.md "Event stream"): the customer's events as server-sent events, as they are
 * written, with the read rules of GET /events. `customer-api listen` forwards them to a local receiver.
 */
export function eventStreamRoute(app: FastifyInstance, streams: EventStreams): void {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/events/stream',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags: ['Webhooks'],
        operationId: 'streamEvents',
        summary: 'Stream events as they happen (server-sent events)',
        description: `The customer’s events the key may read (as GET /events), oldest first, as \`text/event-stream\`: each message has \`id\` (a cursor), \`event\` (the type) and \`data\` (the body a webhook delivery carries, one JSON line). Without a cursor it starts with the next new event; with \`Last-Event-ID\` or \`after\` it resumes after that message. A comment line every ${eventStreamHeartbeatMs / 1000} s keeps a quiet stream open. At most ${eventStreamsPerCustomerMax} streams per customer (429 beyond).`,
        querystring: Type.Object({ after: Type.Optional(Cursor) }, { additionalProperties: false }),
        headers: Type.Object({ 'last-event-id': Type.Optional(Cursor) }),
        response: {
          200: { description: 'An endless `text/event-stream`', content: { 'text/event-stream': { schema: Type.String({ description: 'id: <cursor>\\nevent: <type>\\ndata: <event JSON>\\n\\n, repeated' }) } } },
          ...errorResponses(...authenticatedReadErrors),
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const release = streams.reserve(caller.customerId);
      try {
        const cursor = request.headers['last-event-id'] ?? request.query.after;
        const afterSequence = cursor === undefined ? await streams.currentCursor(caller.customerId) : Number(cursor);
        reply.hijack();
        // `connection: close`: once the stream ends (the server stopping) its connection goes too, rather than idling
        // in keep-alive after the moment the shutdown closed the idle ones.
        reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no', connection: 'close' });
        // The first line tells the client the stream is open (and where it starts) before any event.
        reply.raw.write(`: stream open after ${afterSequence}\n\n`);
        streams.run(caller, afterSequence, reply.raw, release).catch((error: unknown) => {
          request.log.error({ err: error }, 'event stream failed');
          reply.raw.destroy();
        });
      } catch (error) {
        release();
        throw error;
      }
    },
  );
}
