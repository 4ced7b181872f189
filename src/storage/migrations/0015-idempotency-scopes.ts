import { sql } from 'kysely';
import type { Migration } from 'kysely/migration';

/**
 * What reading a stored Idempotency-Key answer takes (docs/idempotency.md "Scopes"), and whether the answer is kept
 * sealed because it holds a secret.
 *
 * - `read_scope`: the scopes (space-separated, any one of them suffices) a key needs to be given the answer again,
 *   whatever endpoint the key is reused on: a reuse must not read what a direct read would refuse.
 * - `response_sealed`: 1 when `response_body` is encrypted (the answer of POST /webhooks holds the signing secret).
 *
 * Keys stored before this migration live at most a day; those of an operation whose answer one scope reads get it,
 * the others (fiat or virtual account deposits) are replayed to full-access keys only.
 */
export function idempotencyScopesMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('idempotency_keys').addColumn('read_scope', 'text', (col) => col.notNull().defaultTo('*')).execute();
      await db.schema
        .alterTable('idempotency_keys')
        .addColumn('response_sealed', 'integer', (col) => col.notNull().defaultTo(0).check(sql`response_sealed in (0, 1)`))
        .execute();
      const readScopeByOperation: Array<[string, string]> = [
        ['POST /wallets/:walletId/transfers', 'wallets:read'],
        ['POST /sandbox/wallets/:walletId/deposits', 'wallets:read'],
        ['POST /otc-exchanges', 'otc-exchanges:read'],
      ];
      for (const [operation, scope] of readScopeByOperation) {
        await db.updateTable('idempotency_keys').set({ read_scope: scope }).where('operation', '=', operation).execute();
      }
    },
  };
}
