import type { CompiledQuery, Kysely, Transaction, Updateable } from 'kysely';
import type { Database, IdempotencyKeysTable } from './tables.js';

/** The reservation one attempt holds on an Idempotency-Key. */
export interface KeyHold {
  customerId: string;
  key: string;
  attemptId: string;
}

type Db = Kysely<Database> | Transaction<Database>;

/**
 * What an operation run under an Idempotency-Key gets (http/idempotency.ts): the reservation its attempt holds.
 * The money plan or the create commits only while it still is.
 */
export type Reservation = KeyHold;

/**
 * What an operation answers: the status and the payload, which the route's response schema serialises; `stored`
 * when the operation stored that answer already (with what it committed).
 */
export interface Answer {
  status: number;
  payload: unknown;
  stored: boolean;
}

/**
 * Called by a create inside the transaction that writes the new resource, with the resource as the API presents
 * it: under an Idempotency-Key its answer is stored right there, so the resource and its answer commit together.
 */
export type OnCreated<T> = (trx: Transaction<Database>, record: T) => Promise<void>;

/** Changes the key's row only while this attempt still holds it, in progress; false when it was taken over or released. */
async function changeHeldKey(db: Db, hold: KeyHold, changes: Updateable<IdempotencyKeysTable>): Promise<boolean> {
  const changed = await heldKeyUpdate(db, hold, changes).executeTakeFirst();
  return changed.numUpdatedRows === 1n;
}

function heldKeyUpdate(db: Db, hold: KeyHold, changes: Updateable<IdempotencyKeysTable>) {
  return db
    .updateTable('idempotency_keys')
    .set(changes)
    .where('customer_id', '=', hold.customerId)
    .where('key', '=', hold.key)
    .where('attempt_id', '=', hold.attemptId)
    .where('status', '=', 'in_progress');
}

/**
 * Stores the answer on a key this attempt still holds; false when the reservation was taken over or released
 * meanwhile. The SQLite money movement calls it inside its transaction (PostgreSQL's apply_money_plan runs the same
 * UPDATE), a create inside the transaction that writes what it created, the HTTP wrapper after a refusal that
 * changed nothing. `sealed`: the body is encrypted (it holds a secret).
 */
export async function storeIdempotentAnswer(db: Db, hold: KeyHold, status: number, body: string, sealed = false): Promise<boolean> {
  return changeHeldKey(db, hold, answerChanges(status, body, sealed));
}

const answerChanges = (status: number, body: string, sealed: boolean): Updateable<IdempotencyKeysTable> => ({
  status: 'completed',
  response_status: status,
  response_body: body,
  ...(sealed ? { response_sealed: 1 } : {}),
});

/** storeIdempotentAnswer as a query to run (the SQLite money path runs it on the writer): it stored when it changed one row. */
export function storeIdempotentAnswerQuery(db: Db, hold: KeyHold, status: number, body: string): CompiledQuery {
  return heldKeyUpdate(db, hold, answerChanges(status, body, false)).compile();
}

/**
 * Moves the lease of a key this attempt still holds to `leaseUntil`, while its request runs; false when the
 * reservation was taken over, released or completed meanwhile (there is nothing left to keep).
 */
export async function renewIdempotentLease(db: Kysely<Database>, hold: KeyHold, leaseUntil: string): Promise<boolean> {
  return changeHeldKey(db, hold, { lease_until: leaseUntil });
}

/**
 * Narrows what reading the key's answer takes, once the operation knows what it acts on (a deposit: a fiat or a
 * virtual account); false when the reservation is no longer this attempt's.
 */
export async function narrowIdempotentReadScope(db: Kysely<Database>, hold: KeyHold, readScope: string): Promise<boolean> {
  return changeHeldKey(db, hold, { read_scope: readScope });
}
