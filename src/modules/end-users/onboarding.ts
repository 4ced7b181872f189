import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { onboardingLinkTtlMs, onboardingTokenLengthMin, onboardingTokenRandomBytes, onboardingUrlTokenLengthMax } from '../../config/limits.js';
import type { FieldError } from '../../errors.js';
import type { Database, EndUsersTable } from '../../storage/tables.js';
import type { OnboardingLinkRecord } from './schemas.js';

/**
 * The hosted onboarding page (docs/dashboard.md "Hosted onboarding") opens at /onboarding/{onboarding_url_token}.
 * The token is a bearer credential for one end user's page, so it must be unguessable: with verificationMethod
 * hosted_kyc the server issues one (256 random bits) unless the customer sends its own, which must then be at least
 * onboardingTokenLengthMin URL-safe characters (decision 0009). Only its SHA-256 is looked up.
 */
const customerTokenPattern = new RegExp(`^[A-Za-z0-9_-]{${onboardingTokenLengthMin},${onboardingUrlTokenLengthMax}}$`);

export type OnboardingColumns = Pick<EndUsersTable, 'onboarding_url_token' | 'onboarding_token_hash' | 'onboarding_expires_at'>;

export function hashOnboardingToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The onboarding columns of a new end user, or a problem with the token the customer sent. */
export function onboardingColumns(
  verificationMethod: string | undefined,
  customerToken: string | undefined,
  now: Date,
  errors: FieldError[],
): OnboardingColumns {
  if (verificationMethod !== 'hosted_kyc') {
    return { onboarding_url_token: customerToken ?? null, onboarding_token_hash: null, onboarding_expires_at: null };
  }
  if (customerToken !== undefined && !customerTokenPattern.test(customerToken)) {
    errors.push({
      location: 'body',
      path: '/onboarding_url_token',
      reason: `opens the hosted onboarding page, so it must be ${onboardingTokenLengthMin}-${onboardingUrlTokenLengthMax} characters of A-Z, a-z, 0-9, - and _; omit it and one is issued`,
    });
  }
  const token = customerToken ?? randomBytes(onboardingTokenRandomBytes).toString('base64url');
  return {
    onboarding_url_token: token,
    onboarding_token_hash: hashOnboardingToken(token),
    onboarding_expires_at: new Date(now.getTime() + onboardingLinkTtlMs).toISOString(),
  };
}

export async function onboardingTokenTaken(db: Kysely<Database>, tokenHash: string): Promise<boolean> {
  return (await db.selectFrom('end_users').select('id').where('onboarding_token_hash', '=', tokenHash).executeTakeFirst()) !== undefined;
}

/** The end user a hosted page token opens, whatever its state; the caller decides what an expired link shows. */
export async function findEndUserByOnboardingToken(db: Kysely<Database>, token: string): Promise<EndUsersTable | undefined> {
  if (token.length > onboardingUrlTokenLengthMax) return undefined;
  return db.selectFrom('end_users').selectAll().where('onboarding_token_hash', '=', hashOnboardingToken(token)).executeTakeFirst();
}

/** Closes an end user's hosted page for good (its link opens nothing after); not part of the API record. */
export async function markOnboardingCompleted(db: Kysely<Database>, endUserId: string, at: Date): Promise<void> {
  await db.updateTable('end_users').set({ onboarding_completed_at: at.toISOString() }).where('id', '=', endUserId).where('onboarding_completed_at', 'is', null).execute();
}

/** The link a customer sends to a hosted_kyc end user; undefined for other end users (their token opens nothing). */
export function onboardingLinkOf(row: EndUsersTable, publicUrl: string): OnboardingLinkRecord | undefined {
  if (row.onboarding_token_hash === null || row.onboarding_url_token === null || row.onboarding_expires_at === null) return undefined;
  return {
    url: `${publicUrl}/onboarding/${row.onboarding_url_token}`,
    onboarding_url_token: row.onboarding_url_token,
    expires_at: row.onboarding_expires_at,
    completed_at: row.onboarding_completed_at,
  };
}
