import type { Migration } from 'kysely/migration';

/**
 * Server secrets wrapped with the operator's master key (docs/operations.md "Server secrets"): `value` holds the
 * wrapped secret and `key_id` the id of the master key that wrapped it; null for a secret stored unwrapped (written
 * before this migration, or by a sandbox on PostgreSQL without a master key), wrapped at the next start with one.
 */
export function wrappedServerSecretsMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('server_secrets').addColumn('key_id', 'text').execute();
    },
  };
}
