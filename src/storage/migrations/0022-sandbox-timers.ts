import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * The sandbox's own schedule (docs/providers.md "The worked example: the sandbox"): when the simulated bank, custodian
 * and liquidity provider answer for a payment, a wallet transfer or an OTC order was a `settle_at` column of each
 * resource table. It becomes the table `sandbox_timers`, owned by the sandbox adapter, so the resource tables hold no
 * state of one provider.
 *
 * - `id` is the resource's id (ids are unique across tables), `resource` its kind; `customer_id` names its owner.
 * - `due_at` is when the sandbox next answers; a claim moves it ahead by the lease (workers/claim.ts).
 * - The pending resources' timers move into it, so what was due stays due.
 * - payments keep what a real payment rail's submission needs, under its own name: `submit_at`, when the payment is
 *   next due to be handed to the rail (null once handed over). It was `settle_at`, which meant either.
 */
export function sandboxTimersMigration(): Migration {
  return {
    async up(db) {
      await db.schema
        .createTable('sandbox_timers')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('resource', 'text', (col) => col.notNull().check(sql`resource in ('payment', 'wallet_transfer', 'otc_order')`))
        .addColumn('customer_id', 'text', (col) => col.notNull())
        .addColumn('due_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('sandbox_timers_due_idx').on('sandbox_timers').columns(['resource', 'due_at']).execute();

      await sql`insert into sandbox_timers (id, resource, customer_id, due_at)
        select id, 'payment', customer_id, settle_at from payments where status = 'pending' and settle_at is not null`.execute(db);
      await sql`insert into sandbox_timers (id, resource, customer_id, due_at)
        select id, 'wallet_transfer', customer_id, settle_at from wallet_transfers where status = 'pending' and settle_at is not null`.execute(db);
      await sql`insert into sandbox_timers (id, resource, customer_id, due_at)
        select id, 'otc_order', customer_id, settle_at from otc_orders where status in ('debit_pending', 'debited') and settle_at is not null`.execute(db);

      await db.schema.dropIndex('payments_settle_idx').execute();
      await db.schema.alterTable('payments').renameColumn('settle_at', 'submit_at').execute();
      await db.schema.createIndex('payments_submission_idx').on('payments').columns(['status', 'submit_at']).execute();
      await db.schema.dropIndex('wallet_transfers_settle_idx').execute();
      await db.schema.alterTable('wallet_transfers').dropColumn('settle_at').execute();
      await db.schema.dropIndex('otc_orders_settle_idx').execute();
      await db.schema.alterTable('otc_orders').dropColumn('settle_at').execute();
    },
  };
}
