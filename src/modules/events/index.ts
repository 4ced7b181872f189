import type { FastifyInstance } from 'fastify';
import { eventRoutes } from './routes.js';
import type { EventService } from './service.js';

/** The events plugin: GET /events and GET /events/{eventId}, the reads of the outbox. */
export async function eventsPlugin(app: FastifyInstance, { events }: { events: EventService }): Promise<void> {
  eventRoutes(app, events);
}

export { deleteEventsCreatedBefore, eventsByIds, eventsSince } from './repository.js';
export { Event, type EventRecord, EventsQuery } from './schemas.js';
export { EventService } from './service.js';
