import { sql, type RawBuilder } from 'kysely';

/**
 * The rows of `table` (webhook deliveries, documents, Idempotency-Keys, sandbox timers) kept due in a test clock's
 * time that go back to the server clock when that clock is deleted: those of `clockId`, or with null every row whose
 * clock no longer exists. The second form catches what the deletion's own release missed: a row written with the
 * clock a moment after (another instance remembers a clock for a few seconds), or a release cut short by a crash.
 */
export function clockRowsToRelease(table: string, clockId: string | null): RawBuilder<boolean> {
  const column = sql.ref(`${table}.clock_id`);
  return clockId === null
    ? sql<boolean>`${column} is not null and not exists (select 1 from sandbox_test_clocks where sandbox_test_clocks.id = ${column})`
    : sql<boolean>`${column} = ${clockId}`;
}
