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
 * Appends an event to the outbox. Call it with the transaction that makes the change, so the event exists if
 * and only if the change does; a worker delivers it later.
 */
export async function appendEvent(trx: Transaction<Database> | Kysely<Database>, event: NewEvent): Promise<string> {
  const id = randomUUID();
  const createdAt = event.createdAt.toISOString();
  await trx
    .insertInto('outbox_events')
    .values({
      id,
      customer_id: event.customerId,
      event_type: event.type,
      payload: JSON.stringify({ id, type: event.type, created_at: createdAt, data: event.data }),
      created_at: createdAt,
      published_at: null,
    })
    .execute();
  return id;
}
