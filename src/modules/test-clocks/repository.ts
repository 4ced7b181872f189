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

/** Moves the clock from `from` to `to`; false when it was not at `from` any more (a concurrent advance, a delete). */
export async function moveTestClock(db: Kysely<Database>, id: string, from: string, to: string): Promise<boolean> {
  const result = await db.updateTable('sandbox_test_clocks').set({ frozen_time: to }).where('id', '=', id).where('frozen_time', '=', from).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteTestClock(db: Kysely<Database>, customerId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('sandbox_test_clocks').where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}
