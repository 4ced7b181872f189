import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The sandbox KYC provider's announced decisions (a magic name decides an end user SANDBOX_AUTO_SETTLE_MS after its
 * creation) were the last sandbox state kept in a resource table: `end_users.sandbox_decision` and
 * `sandbox_decide_at`. They join the sandbox's own schedule, `sandbox_timers`, as timers of the resource `end_user`
 * whose `answer` is the decision announced.
 *
 * SQLite cannot change a CHECK constraint, so the table is rebuilt on both databases: a new table with the new
 * resource and the `answer` column, the rows copied, the old one dropped and the new one renamed.
 */
export function sandboxKycTimersMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('sandbox_timers_next')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('resource', 'text', (col) => col.notNull().check(sql`resource in ('payment', 'wallet_transfer', 'otc_order', 'end_user')`))
        .addColumn('customer_id', 'text', (col) => col.notNull())
        .addColumn('due_at', 'text', (col) => col.notNull())
        .addColumn('answer', 'text')
        .execute();
      await sql`insert into sandbox_timers_next (id, resource, customer_id, due_at, answer)
        select id, resource, customer_id, due_at, null from sandbox_timers`.execute(db);
      await sql`insert into sandbox_timers_next (id, resource, customer_id, due_at, answer)
        select id, 'end_user', customer_id, sandbox_decide_at, sandbox_decision from end_users
        where sandbox_decision is not null and sandbox_decide_at is not null`.execute(db);
      await db.schema.dropTable('sandbox_timers').execute();
      await db.schema.alterTable('sandbox_timers_next').renameTo('sandbox_timers').execute();
      await db.schema.createIndex('sandbox_timers_due_idx').on('sandbox_timers').columns(['resource', 'due_at']).execute();

      await db.schema.dropIndex('end_users_sandbox_decision_idx').execute();
      await db.schema.alterTable('end_users').dropColumn('sandbox_decision').execute();
      await db.schema.alterTable('end_users').dropColumn('sandbox_decide_at').execute();
    },
  };
}
