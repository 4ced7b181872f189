import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { callerOf } from '../../http/auth.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { DataOf, authenticatedReadErrors, errorResponses } from '../../http/schemas.js';
import { Pagination } from '../transactions/index.js';
import { Event, EventParams, EventsQuery } from './schemas.js';
import type { EventService } from './service.js';

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
