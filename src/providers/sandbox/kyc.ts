import type { DocumentUpload, KycProvider, RegisterEndUserRequest, RegisteredEndUser, VerificationOutcome } from '../kyc.js';
import { providerId } from '../provider-ids.js';

/**
 * Magic names (docs/end-users.md): an individual's last name or a business's company name of exactly "Verify",
 * "Reject" or "Review" (any case) makes the simulated provider decide by itself after SANDBOX_AUTO_SETTLE_MS.
 */
const magicDecisions: Record<string, VerificationOutcome> = { verify: 'verified', reject: 'rejected', review: 'review_required' };

/** Magic file names (docs/documents.md): "sync-fail" always fails, "sync-flaky" fails the first two attempts. */
const flakyAttempts = 2;

export class SandboxKycProvider implements KycProvider {
  async registerEndUser(request: RegisterEndUserRequest): Promise<RegisteredEndUser> {
    return { frEndUserId: providerId('eu'), upcomingDecision: magicDecisions[request.name.trim().toLowerCase()] };
  }

  async uploadDocument(upload: DocumentUpload): Promise<void> {
    const name = upload.fileName.toLowerCase();
    if (name.includes('sync-fail')) throw new Error('sandbox provider refused the document (magic file name sync-fail)');
    if (name.includes('sync-flaky') && upload.attempt <= flakyAttempts) throw new Error(`sandbox provider unavailable (attempt ${upload.attempt})`);
  }
}
