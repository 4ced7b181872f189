import { newId } from '../ids.js';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Storage } from '../storage/database.js';
import { insertRowsTemplate } from '../storage/query-template.js';
import { claimDue } from '../workers/claim.js';
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
      const id = newId();
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

/**
 * Appends an event that is published from the start, so the fan-out never sends it to the subscriptions: a
 * webhook's test event, delivered to its own subscription alone.
 */
export async function appendPublishedEvent(
  trx: Transaction<Database> | Kysely<Database>,
  customerId: string,
  event: { id: string; type: string; created_at: string; data: unknown },
): Promise<void> {
  await trx
    .insertInto('outbox_events')
    .values({ id: event.id, customer_id: customerId, event_type: event.type, payload: JSON.stringify(event), created_at: event.created_at, published_at: event.created_at })
    .execute();
}

/** An event as stored, claimed for delivery. */
export type OutboxRow = OutboxEventsTable;

/**
 * Claims up to `limit` undelivered events for delivery, oldest first, for `leaseMs` (workers/claim.ts): each event
 * goes to one instance at a time, and comes back if that instance stops before marking it delivered. There is no
 * "last delivered sequence" cursor: on PostgreSQL `sequence` is taken at insert, not at commit, so a cursor could
 * move past an event whose transaction commits late — a claim of unpublished rows never can.
 */
export async function claimUndeliveredEvents(storage: Storage, now: Date, leaseMs: number, limit: number): Promise<OutboxRow[]> {
  return claimDue<OutboxRow>(storage, {
    table: 'outbox_events',
    due: sql`published_at is null`,
    leaseColumn: 'delivery_lease_until',
    now: now.toISOString(),
    leaseUntil: new Date(now.getTime() + leaseMs).toISOString(),
    orderBy: 'sequence',
    limit,
  });
}

/**
 * Marks claimed events published: each is now a delivery row per matching subscription (modules/webhooks/fan-out.ts),
 * written in the same transaction, and is never claimed again.
 */
export async function markEventsPublished(db: Transaction<Database> | Kysely<Database>, ids: readonly string[], now: Date): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('outbox_events').set({ published_at: now.toISOString(), delivery_lease_until: null }).where('id', 'in', [...ids]).execute();
}
