import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import {
  onboardingLinkTtlMs,
  onboardingSecretLength,
  onboardingTokenRandomBytes,
  onboardingUrlTokenLengthMax,
} from '../../config/limits.js';
import type { Database, EndUsersTable } from '../../storage/tables.js';
import type { OnboardingLinkRecord } from './schemas.js';

/**
 * The hosted onboarding page (docs/dashboard.md "Hosted onboarding", decision 0009) opens at
 * /onboarding/{onboarding_url_token}.{secret}: the customer's token (any 1-100 characters, percent-encoded), a dot,
 * and a secret the server derives for that end user alone — HMAC-SHA256 of its id under a per-deployment key,
 * 43 characters of base64url. The secret makes the page unguessable whatever token the customer chose, so tokens
 * need not be unique: two customers, or one customer twice, may choose the same. Only the secret's SHA-256 is stored
 * (to find the end user); the secret itself is derived again when the customer asks for the link.
 *
 * Links issued before the secret existed (decision 0009) are the token alone, found by its SHA-256
 * (`onboarding_token_hash`); they open until they expire.
 */

const secretPattern = new RegExp(`^[A-Za-z0-9_-]{${onboardingSecretLength}}$`);

export type OnboardingColumns = Pick<EndUsersTable, 'onboarding_url_token' | 'onboarding_secret_hash' | 'onboarding_expires_at'>;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

export class OnboardingLinks {
  constructor(
    private readonly key: Buffer,
    /** PUBLIC_URL: where browsers reach this server. */
    private readonly publicUrl: string,
  ) {}

  private secretOf(endUserId: string): string {
    return createHmac('sha256', this.key).update(`onboarding-link:${endUserId}`).digest('base64url');
  }

  /** The onboarding columns of a new end user; a token the customer sent is kept as sent. */
  columns(endUserId: string, verificationMethod: string | undefined, customerToken: string | undefined, now: Date): OnboardingColumns {
    if (verificationMethod !== 'hosted_kyc') {
      return { onboarding_url_token: customerToken ?? null, onboarding_secret_hash: null, onboarding_expires_at: null };
    }
    return {
      onboarding_url_token: customerToken ?? randomBytes(onboardingTokenRandomBytes).toString('base64url'),
      onboarding_secret_hash: sha256(this.secretOf(endUserId)),
      onboarding_expires_at: new Date(now.getTime() + onboardingLinkTtlMs).toISOString(),
    };
  }

  /** The page's path (its forms post below it); undefined for end users without a hosted page. */
  pathOf(row: EndUsersTable): string | undefined {
    if (row.onboarding_url_token === null || row.onboarding_expires_at === null) return undefined;
    if (row.onboarding_secret_hash !== null) return `/onboarding/${encodeURIComponent(row.onboarding_url_token)}.${this.secretOf(row.id)}`;
    if (row.onboarding_token_hash !== null) return `/onboarding/${row.onboarding_url_token}`;
    return undefined;
  }

  /** The link a customer sends to a hosted_kyc end user; undefined for other end users (their token opens nothing). */
  linkOf(row: EndUsersTable): OnboardingLinkRecord | undefined {
    const path = this.pathOf(row);
    if (path === undefined || row.onboarding_url_token === null || row.onboarding_expires_at === null) return undefined;
    return {
      url: `${this.publicUrl}${path}`,
      onboarding_url_token: row.onboarding_url_token,
      expires_at: row.onboarding_expires_at,
      completed_at: row.onboarding_completed_at,
    };
  }
}

/** Compares two texts in time that depends on neither. */
function sameText(a: string, b: string): boolean {
  return timingSafeEqual(createHash('sha256').update(a).digest(), createHash('sha256').update(b).digest());
}

/**
 * The end user a link opens, whatever its state (the caller decides what an expired link shows): found by the
 * secret's SHA-256 — a timing difference there tells at most a prefix of a hash, nothing of the secret — and only
 * if the token beside it is that end user's, compared in constant time.
 */
export async function findEndUserByOnboardingLink(db: Kysely<Database>, token: string, secret: string): Promise<EndUsersTable | undefined> {
  if (!secretPattern.test(secret)) return undefined;
  const row = await db.selectFrom('end_users').selectAll().where('onboarding_secret_hash', '=', sha256(secret)).executeTakeFirst();
  if (!row || row.onboarding_url_token === null || !sameText(row.onboarding_url_token, token)) return undefined;
  return row;
}

/** The end user a link issued before the secret opens (the token alone), whatever its state. */
export async function findEndUserByLegacyOnboardingToken(db: Kysely<Database>, token: string): Promise<EndUsersTable | undefined> {
  if (token.length > onboardingUrlTokenLengthMax) return undefined;
  return db.selectFrom('end_users').selectAll().where('onboarding_token_hash', '=', sha256(token)).executeTakeFirst();
}

/** Closes an end user's hosted page for good (its link opens nothing after); not part of the API record. */
export async function markOnboardingCompleted(db: Kysely<Database>, endUserId: string, at: Date): Promise<void> {
  await db.updateTable('end_users').set({ onboarding_completed_at: at.toISOString() }).where('id', '=', endUserId).where('onboarding_completed_at', 'is', null).execute();
}

/**
 * A new link for the end user's hosted page (the dashboard's "new link"): a new server-issued token — the secret is
 * the end user's own, so the token is what tells the new link from the old, which opens nothing from now on —
 * seven days from now, and the page open again if it was completed. A link issued before secrets existed ends too.
 */
export async function replaceOnboardingLink(db: Kysely<Database>, endUserId: string, columns: OnboardingColumns): Promise<void> {
  await db
    .updateTable('end_users')
    .set({ ...columns, onboarding_token_hash: null, onboarding_completed_at: null })
    .where('id', '=', endUserId)
    .execute();
}
