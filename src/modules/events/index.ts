import type { FastifyInstance } from 'fastify';
import { type EventDeliveries, eventRoutes, eventStreamRoute } from './routes.js';
import type { EventService } from './service.js';
import type { EventStreams } from './stream.js';

/** The events plugin: GET /events, GET /events/stream and GET /events/{eventId}, the reads of the outbox (an event with its deliveries). */
export async function eventsPlugin(app: FastifyInstance, { events, deliveries, streams }: { events: EventService; deliveries: EventDeliveries; streams: EventStreams }): Promise<void> {
  eventRoutes(app, events, deliveries);
  eventStreamRoute(app, streams);
  // The server stops: streams end first, so the connection drain is not held by them; app.close ends them before
  // closing the listener too (it waits for every open response).
  app.shuttingDown.addEventListener('abort', () => streams.closeAll(), { once: true });
  app.addHook('preClose', async () => streams.closeAll());
}

export { type DeliveredEvent, deleteEventsCreatedBefore, eventsByIds, eventsSince } from './repository.js';
export { Event, type EventRecord, EventsQuery } from './schemas.js';
export { EventService } from './service.js';
export { EventStreams } from './stream.js';
export { type EventDeliveries } from './routes.js';
