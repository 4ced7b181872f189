import { sql, type ExpressionBuilder, type Kysely, type Selectable } from 'kysely';
import type { Storage } from '../../storage/database.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import type { Database, OutboxEventsTable } from '../../storage/tables.js';
import { deleteDue } from '../../workers/claim.js';

/**
 * Reads of the outbox: the customer's events as GET /events lists them, and what webhook replays and deliveries
 * read of them. The outbox rows are written by every writer in its own transaction (src/events/outbox.ts).
 */

export type EventRow = Selectable<OutboxEventsTable>;

/** Events of these types; none at all for an empty list (SQL has no empty IN list). */
function ofTypes(eb: ExpressionBuilder<Database, 'outbox_events'>, types: readonly string[]) {
  return types.length === 0 ? eb.lit(false) : eb('event_type', 'in', [...types]);
}

/** `readableTypes`: only events of these types (the key's scopes), or undefined for every type. */
export async function listEvents(db: Kysely<Database>, customerId: string, type: string | undefined, readableTypes: readonly string[] | undefined, offset: number, limit: number) {
  let query = db.selectFrom('outbox_events').where('customer_id', '=', customerId);
  if (type !== undefined) query = query.where('event_type', '=', type);
  if (readableTypes !== undefined) query = query.where((eb) => ofTypes(eb, readableTypes));
  return newestFirstPage<EventRow>(query, offset, limit);
}

export async function findEvent(db: Kysely<Database>, customerId: string, id: string, readableTypes: readonly string[] | undefined): Promise<EventRow | undefined> {
  let query = db.selectFrom('outbox_events').selectAll().where('customer_id', '=', customerId).where('id', '=', id);
  if (readableTypes !== undefined) query = query.where((eb) => ofTypes(eb, readableTypes));
  return query.executeTakeFirst();
}

/** A replay's events: the customer's, of the given types, from `since` on, oldest first; one more than `limit` tells there are more. */
export async function eventsSince(db: Kysely<Database>, customerId: string, types: readonly string[], since: string, until: string, limit: number) {
  return db
    .selectFrom('outbox_events')
    .select(['id', 'event_type', 'created_at'])
    .where('customer_id', '=', customerId)
    .where('event_type', 'in', [...types])
    .where('created_at', '>=', since)
    .where('created_at', '<=', until)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit + 1)
    .execute();
}

/** An event as a delivery sends it: its body, and when it was written and fanned out (the delivery metrics' lag). */
export type DeliveredEvent = Pick<EventRow, 'payload' | 'created_at' | 'published_at'>;

/** These events as deliveries send them, by id. */
export async function eventsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, DeliveredEvent>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('outbox_events').select(['id', 'payload', 'created_at', 'published_at']).where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/**
 * The reaper's batch (workers/reaper.ts): up to `limit` events created before `before`, oldest first. One not yet
 * fanned out to the subscriptions stays until it is: it is deleted after its deliveries exist, never instead.
 */
export async function deleteEventsCreatedBefore(storage: Storage, before: string, limit: number): Promise<number> {
  return deleteDue(storage, { table: 'outbox_events', key: ['id'], due: sql`created_at < ${before} and published_at is not null`, orderBy: 'created_at', limit });
}

/** An event as the stream sends it: its cursor (the outbox sequence), type and delivered body. */
export type StreamedEvent = Pick<EventRow, 'id' | 'event_type' | 'payload'> & { sequence: number };

/** The customer's events after `afterSequence`, oldest first, at most `limit`: served by (customer_id, sequence). */
export async function eventsAfterSequence(db: Kysely<Database>, customerId: string, readableTypes: readonly string[] | undefined, afterSequence: number, limit: number): Promise<StreamedEvent[]> {
  let query = db.selectFrom('outbox_events').select(['sequence', 'id', 'event_type', 'payload']).where('customer_id', '=', customerId).where(sql<boolean>`sequence > ${afterSequence}`);
  if (readableTypes !== undefined) query = query.where((eb) => ofTypes(eb, readableTypes));
  const rows = await query.orderBy('sequence').limit(limit).execute();
  return rows.map((row) => ({ ...row, sequence: Number(row.sequence) }));
}

/** The customer's newest sequence (0 when it has no event): where a stream without a cursor starts. */
export async function newestSequence(db: Kysely<Database>, customerId: string): Promise<number> {
  const row = await db.selectFrom('outbox_events').select('sequence').where('customer_id', '=', customerId).orderBy('sequence', 'desc').limit(1).executeTakeFirst();
  return row === undefined ? 0 : Number(row.sequence);
}
