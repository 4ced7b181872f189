/** The identity-verification side of the provider (KYC for individuals, KYB for businesses). */

export type VerificationOutcome = 'verified' | 'rejected' | 'review_required';

export interface RegisterEndUserRequest {
  ownerBusinessId: string;
  endUserType: 'INDIVIDUAL' | 'BUSINESS';
  /** Last name of an individual, or company name of a business. */
  name: string;
}

export interface RegisteredEndUser {
  frEndUserId: string;
  /** A decision the provider will report by itself later (the sandbox's magic names), if any. */
  upcomingDecision: VerificationOutcome | undefined;
}

export interface DocumentUpload {
  frDocumentId: string;
  frEndUserId: string;
  documentType: string;
  /** Which identity document it is (passport, national_id, …), when the customer or the person said so. */
  documentKind: string | null;
  fileName: string;
  mimeType: string;
  bytes: Buffer;
  /** 1 for the first try; providers may use it to deduplicate. */
  attempt: number;
}

/**
 * The provider's decisions (`end_user.verified`, `rejected`, `review_required`) and its later review of a document
 * (`document.synced`, `document.rejected`) are reported as provider events into the inbox, never as answers to these
 * calls (docs/providers.md "Reporting outcomes"); uploadDocument's own answer says only whether it took the file.
 */
export interface KycProvider {
  /** Idempotent per key, like the banking provider's creating calls; removeEndUser undoes it. */
  registerEndUser(request: RegisterEndUserRequest, idempotencyKey: string): Promise<RegisteredEndUser>;
  removeEndUser(frEndUserId: string): Promise<void>;
  /** Hands a stored document to the provider; throws when the provider refuses or cannot be reached. */
  uploadDocument(upload: DocumentUpload): Promise<void>;
}
