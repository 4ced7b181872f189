import type { Migration } from 'kysely/migration';

/**
 * The reverse solicitation attestation of an end user is kept as the customer sent it (docs/end-users.md): docs/spec.md §4
 * shows no inner fields, so members beyond the ones the record reflects (`accepted`, `acceptedAt`,
 * `disclosureVersion`) are the customer's evidence, stored as JSON text like `identification_document`.
 */
export function reverseSolicitationAttestationMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('end_users').addColumn('reverse_solicitation_attestation', 'text').execute();
    },
  };
}
