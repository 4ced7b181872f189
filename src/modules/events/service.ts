import { pageLimitMax } from '../../config/limits.js';
import { notFound } from '../../errors.js';
import { readableEventTypes } from '../../events/catalog.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { findEvent, listEvents, type EventRow } from './repository.js';
import type { EventRecord } from './schemas.js';

/** The stored payload is the delivered body, `{ id, type, created_at, data }`, written with the change itself. */
export function presentEvent(row: Pick<EventRow, 'payload'>): EventRecord {
  return JSON.parse(row.payload) as EventRecord;
}

/** The customer's events, as far as the key may read them (each type needs its resource's read scope). */
export class EventService {
  constructor(private readonly storage: Storage) {}

  async list(caller: AuthenticatedKey, type: string | undefined, page: number, limit: number) {
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await listEvents(this.storage.db, caller.customerId, type, readableEventTypes(caller.scopes), (page - 1) * size, size);
    return { data: rows.map(presentEvent), meta: { pagination: { page, limit: size, total: Number(total) } } };
  }

  async get(caller: AuthenticatedKey, id: string): Promise<EventRecord> {
    // An event the key may not read answers exactly like an unknown id.
    const row = await findEvent(this.storage.db, caller.customerId, id, readableEventTypes(caller.scopes));
    if (!row) throw notFound('event');
    return presentEvent(row);
  }
}
