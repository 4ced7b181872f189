import type { DocumentUpload, KycProvider, RegisterEndUserRequest, RegisteredEndUser, VerificationOutcome } from '../kyc.js';
import { providerId } from '../provider-ids.js';
import { DerivedRandom } from './derived-random.js';
import { sandboxKycFlakyAttempts } from '../../config/limits.js';

/**
 * Magic names (docs/end-users.md): an individual's last name or a business's company name of exactly "Verify",
 * "Reject" or "Review" (any case) makes the simulated provider decide by itself after SANDBOX_AUTO_SETTLE_MS.
 */
const magicDecisions: Record<string, VerificationOutcome> = { verify: 'verified', reject: 'rejected', review: 'review_required' };

export class SandboxKycProvider implements KycProvider {
  /** The id is derived from the idempotency key, so a repeated call answers the same end user. */
  async registerEndUser(request: RegisterEndUserRequest, idempotencyKey: string): Promise<RegisteredEndUser> {
    const frEndUserId = providerId('eu', new DerivedRandom(idempotencyKey).hex(12));
    return { frEndUserId, upcomingDecision: magicDecisions[request.name.trim().toLowerCase()] };
  }

  async removeEndUser(): Promise<void> {}

  async uploadDocument(upload: DocumentUpload): Promise<void> {
    const name = upload.fileName.toLowerCase();
    if (name.includes('sync-fail')) throw new Error('sandbox provider refused the document (magic file name sync-fail)');
    if (name.includes('sync-flaky') && upload.attempt <= sandboxKycFlakyAttempts) throw new Error(`sandbox provider unavailable (attempt ${upload.attempt})`);
  }
}
