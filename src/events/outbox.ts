import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import { insertRowsTemplate } from '../storage/query-template.js';
import type { Database, OutboxEventsTable } from '../storage/tables.js';
import type { EventType } from './catalog.js';

export interface NewEvent {
  customerId: string;
  type: EventType;
  /** The resource as the API presents it, at the moment of the change. */
  data: unknown;
  createdAt: Date;
}

/** Every payment writes events: the insert is compiled once per number of events. */
export const insertOutboxRows = insertRowsTemplate<Omit<OutboxEventsTable, 'sequence' | 'delivery_lease_until'>>()(
  ['id', 'customer_id', 'event_type', 'payload', 'created_at', 'published_at'],
  (db, rows) => db.insertInto('outbox_events').values(rows),
);

/**
 * Appends events to the outbox, in one statement. Call it with the transaction that makes the change, so the
 * events exist if and only if the change does; a worker delivers them later.
 */
export async function appendEvents(trx: Transaction<Database> | Kysely<Database>, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await insertOutboxRows.execute(
    trx,
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
  );
}

export async function appendEvent(trx: Transaction<Database> | Kysely<Database>, event: NewEvent): Promise<void> {
  await appendEvents(trx, [event]);
}
