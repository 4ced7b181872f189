import type { Migration } from 'kysely/migration';

/**
 * Hosted onboarding links carry a server secret beside the customer's onboarding_url_token (decision 0009): only
 * the secret's SHA-256 is stored, unique, to find the end user. Links issued before it keep their token's hash
 * (onboarding_token_hash) and open until they expire; new end users leave that column empty.
 *
 * Documents keep which identity document they are (document_kind: passport, national_id, …; docs/documents.md); those
 * stored before have none.
 */
export function onboardingSecretAndDocumentKindMigration(): Migration {
  return {
    async up(db) {
      await db.schema.alterTable('end_users').addColumn('onboarding_secret_hash', 'text').execute();
      await db.schema.createIndex('end_users_onboarding_secret_idx').on('end_users').column('onboarding_secret_hash').unique().execute();
      await db.schema.alterTable('documents').addColumn('document_kind', 'text').execute();
    },
  };
}
