import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../storage/tables.js';
import type { EventType } from './catalog.js';

export interface NewEvent {
  customerId: string;
  type: EventType;
  /** The resource as the API presents it, at the moment of the change. */
  data: unknown;
  createdAt: Date;
}

/**
 * Appends events to the outbox, in one statement. Call it with the transaction that makes the change, so the
 * events exist if and only if the change does; a worker delivers them later.
 */
export async function appendEvents(trx: Transaction<Database> | Kysely<Database>, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await trx
    .insertInto('outbox_events')
    .values(
      events.map((event) => {
        const id = randomUUID();
        const createdAt = event.createdAt.toISOString();
        return {
          id,
          customer_id: event.customerId,
          event_type: event.type,
          payload: JSON.stringify({ id, type: event.type, created_at: createdAt, data: event.data }),
          created_at: createdAt,
          published_at: null,
        };
      }),
    )
    .execute();
}

export async function appendEvent(trx: Transaction<Database> | Kysely<Database>, event: NewEvent): Promise<void> {
  await appendEvents(trx, [event]);
}
