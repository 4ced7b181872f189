import type { Kysely } from 'kysely';
import type { Database, SandboxTestClocksTable } from '../../storage/tables.js';

export async function insertTestClock(db: Kysely<Database>, row: SandboxTestClocksTable): Promise<boolean> {
  // One clock per customer (the unique index): a second, even from a concurrent request, inserts nothing.
  const result = await db.insertInto('sandbox_test_clocks').values(row).onConflict((conflict) => conflict.column('customer_id').doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export function findTestClock(db: Kysely<Database>, customerId: string, id: string): Promise<SandboxTestClocksTable | undefined> {
  return db.selectFrom('sandbox_test_clocks').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

export function testClockOfCustomer(db: Kysely<Database>, customerId: string): Promise<SandboxTestClocksTable | undefined> {
  return db.selectFrom('sandbox_test_clocks').selectAll().where('customer_id', '=', customerId).executeTakeFirst();
}

/**
 * Moves the clock from `from` to `to` and holds it until `holdUntil` (server time) for the advance's work; false when
 * it was not at `from` any more (a concurrent advance, a delete) or another advance's work holds it (until `now`).
 */
export async function moveTestClock(db: Kysely<Database>, id: string, from: string, to: string, now: string, holdUntil: string): Promise<boolean> {
  const result = await db
    .updateTable('sandbox_test_clocks')
    .set({ frozen_time: to, advancing_until: holdUntil })
    .where('id', '=', id)
    .where('frozen_time', '=', from)
    .where((eb) => eb.or([eb('advancing_until', 'is', null), eb('advancing_until', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The advance's work is done: the clock is free for the next (unless the hold ran out and another took it). */
export async function releaseTestClock(db: Kysely<Database>, id: string, heldUntil: string): Promise<void> {
  await db.updateTable('sandbox_test_clocks').set({ advancing_until: null }).where('id', '=', id).where('advancing_until', '=', heldUntil).execute();
}

/** Deletes the clock unless an advance holds it (until `now`, server time); false when it is held or gone. */
export async function deleteTestClock(db: Kysely<Database>, customerId: string, id: string, now: string): Promise<boolean> {
  const result = await db
    .deleteFrom('sandbox_test_clocks')
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .where((eb) => eb.or([eb('advancing_until', 'is', null), eb('advancing_until', '<=', now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
