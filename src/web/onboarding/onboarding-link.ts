import { DomainError } from '../../errors.js';
import type { AuthenticatedKey } from '../../modules/api-keys/service.js';
import { findCustomer } from '../../modules/customers/repository.js';
import { findEndUserByOnboardingToken, markOnboardingCompleted } from '../../modules/end-users/onboarding.js';
import type { EndUserRow } from '../../modules/end-users/repository.js';
import type { WebServices } from '../dashboard/services.js';

/** What one valid hosted page link opens: its end user, acting as the customer for that end user alone. */
export interface OnboardingVisit {
  endUser: EndUserRow;
  /** The services' caller: the end user's customer, so the API's own checks (ownership, quota) apply. */
  caller: AuthenticatedKey;
  /** The customer's name: the person must see who is asking for their documents. */
  companyName: string;
  /** What the page's form tokens are bound to: the link itself (by its hash, as stored), nothing else. */
  formBinding: string;
}

/**
 * One answer for every link that opens nothing — unknown, expired, already used, or not a hosted_kyc end user's —
 * so that the page never tells a guesser which of those a token is.
 */
export function linkNotValid(): DomainError {
  return new DomainError('NOT_FOUND', 'This link is no longer valid. Ask the company that sent it to you for a new one.');
}

export async function openOnboardingLink(services: Pick<WebServices, 'storage' | 'clock'>, token: string): Promise<OnboardingVisit> {
  const endUser = await findEndUserByOnboardingToken(services.storage.db, token);
  if (
    !endUser ||
    endUser.verification_method !== 'hosted_kyc' ||
    endUser.onboarding_token_hash === null ||
    endUser.onboarding_expires_at === null ||
    endUser.onboarding_completed_at !== null ||
    services.clock.now().toISOString() >= endUser.onboarding_expires_at
  ) {
    throw linkNotValid();
  }
  const customer = await findCustomer(services.storage.db, endUser.customer_id);
  if (!customer) throw linkNotValid();
  return {
    endUser,
    caller: { id: `onboarding:${endUser.id}`, customerId: customer.id, frOwnerBusinessId: customer.fr_owner_business_id, scopes: ['*'] },
    companyName: customer.name,
    formBinding: `onboarding:${endUser.onboarding_token_hash}`,
  };
}

/** The person is done here: from now on the link answers like an unknown one. */
export async function completeOnboarding(services: Pick<WebServices, 'storage' | 'clock'>, visit: OnboardingVisit): Promise<void> {
  await markOnboardingCompleted(services.storage.db, visit.endUser.id, services.clock.now());
}
