import type { Migration } from 'kysely/migration';

/**
 * Sandbox test clocks (docs/test-clocks.md): a customer's own time, frozen until advanced.
 *
 * - `sandbox_test_clocks` holds one row per clock; a clock is attached to its customer from creation until deleted,
 *   and a customer has at most one (the unique index), so every time rule of that customer reads one clock.
 * - `sandbox_timers.clock_id` names the clock a timer's `due_at` is read by: null for the server clock (every timer
 *   so far), a clock's id for a timer in that clock's time, which only an advance of that clock fires.
 */
export function sandboxTestClocksMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('sandbox_test_clocks')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull())
        .addColumn('name', 'text')
        .addColumn('frozen_time', 'text', (col) => col.notNull())
        .addColumn('created_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('sandbox_test_clocks_customer_idx').on('sandbox_test_clocks').column('customer_id').unique().execute();
      await db.schema.alterTable('sandbox_timers').addColumn('clock_id', 'text').execute();
      await db.schema.createIndex('sandbox_timers_clock_idx').on('sandbox_timers').columns(['clock_id', 'due_at']).execute();
    },
  };
}
