import type { FastifyInstance } from 'fastify';
import { type EventDeliveries, eventRoutes } from './routes.js';
import type { EventService } from './service.js';

/** The events plugin: GET /events and GET /events/{eventId}, the reads of the outbox (an event with its deliveries). */
export async function eventsPlugin(app: FastifyInstance, { events, deliveries }: { events: EventService; deliveries: EventDeliveries }): Promise<void> {
  eventRoutes(app, events, deliveries);
}

export { type DeliveredEvent, deleteEventsCreatedBefore, eventsByIds, eventsSince } from './repository.js';
export { Event, type EventRecord, EventsQuery } from './schemas.js';
export { EventService } from './service.js';
export { type EventDeliveries } from './routes.js';
