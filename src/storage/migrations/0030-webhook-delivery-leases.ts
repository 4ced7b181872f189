import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Declared here: a migration imports nothing of the application (src/storage/migrate.ts). */
type Dialect = 'sqlite' | 'postgres';

/**
 * A claimed webhook delivery's lease gets a column of its own, `leased_until` (docs/webhooks.md "Delivery"), where it
 * used to be written over `next_attempt_at`. The claim then changes no indexed column: on PostgreSQL it can be a
 * heap-only (HOT) update, a new row version on the same page with no index entry, where moving `next_attempt_at`
 * wrote a new entry into each of the table's six indexes. For the claim's version to fit on its row's page, pages
 * are filled half by inserts (`fillfactor`): each delivery is written three times (created, claimed, recorded), so the
 * room is taken by its own later versions rather than left empty (docs/benchmarks.md). A lease taken before this
 * migration stays in `next_attempt_at`: the delivery is due again when it runs out, as it was.
 */
export function webhookDeliveryLeasesMigration(dialect: Dialect): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('webhook_deliveries').addColumn('leased_until', 'text').execute();
      if (dialect === 'postgres') await sql`alter table webhook_deliveries set (fillfactor = 50)`.execute(db);
    },
  };
}
