import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import { DomainError, notFound } from '../errors.js';
import type { EventType } from '../events/catalog.js';
import { appendEvent } from '../events/outbox.js';
import type { Storage } from '../storage/database.js';
import type { Database } from '../storage/tables.js';
import { statusChangeAttemptsMax } from '../config/limits.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What `changeStatus` needs to know about one kind of resource. */
export interface StatusChange<Row extends { status: string }, Presented> {
  /** For the 404 message: "No such fiat account." */
  resource: string;
  /** The caller's row, or undefined (another customer's id is indistinguishable from an unknown one). */
  find(db: Db): Promise<Row | undefined>;
  /** Sets status and updated_at where the row still has status `from`; false when it no longer has. */
  transition(trx: Transaction<Database>, from: string, changes: { status: string; updated_at: string }): Promise<boolean>;
  present(row: Row): Presented;
  /** Statuses that are final: nothing moves out of them. */
  final: readonly string[];
  event: EventType;
}

/**
 * Sets a resource's status as the provider would (the sandbox simulation endpoints; docs/payments.md "Account and
 * payee status"). The status it already has answers the record and writes nothing; a final status answers 422
 * INVALID_STATUS_TRANSITION. Otherwise the row and its `<resource>.status_updated` event (data: the record, read back
 * in the same transaction, so a fiat account's balance is the committed one) are written together. The update is
 * guarded by the status read before it; when a concurrent change got there first, the decision is made again.
 */
export async function changeStatus<Row extends { status: string }, Presented>(
  storage: Storage,
  clock: Clock,
  customerId: string,
  to: string,
  change: StatusChange<Row, Presented>,
): Promise<Presented> {
  for (let attempt = 1; ; attempt += 1) {
    const row = await change.find(storage.db);
    if (!row) throw notFound(change.resource);
    const from = row.status;
    if (from === to) return change.present(row);
    if (change.final.includes(from)) {
      throw new DomainError('INVALID_STATUS_TRANSITION', `A ${change.resource} that is ${from} cannot become ${to}.`, { from, to });
    }
    const now = clock.now();
    const record = await storage.transaction(async (trx) => {
      if (!(await change.transition(trx, from, { status: to, updated_at: now.toISOString() }))) return undefined;
      const updated = await change.find(trx);
      if (!updated) throw notFound(change.resource);
      const presented = change.present(updated);
      await appendEvent(trx, { customerId, type: change.event, data: presented, createdAt: now });
      return presented;
    });
    if (record !== undefined) return record;
    if (attempt >= statusChangeAttemptsMax) {
      throw new DomainError('INVALID_STATUS_TRANSITION', `The ${change.resource} changed status meanwhile; read it again.`, { to });
    }
  }
}
