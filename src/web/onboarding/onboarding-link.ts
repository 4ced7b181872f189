import { onboardingSecretLength, onboardingUrlTokenLengthMax } from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import type { EndUserRow } from '../../modules/end-users/index.js';
import type { WebServices } from '../dashboard/services.js';

/** A link's path parameters: its token (in two parts, below) and secret; or, for a legacy link, its token alone. */
export interface LinkParams {
  token: string;
  tokenTail?: string;
  secret?: string;
}

/**
 * The route of a link's one path segment, `{onboarding_url_token}.{secret}` (modules/end-users/onboarding.ts). The
 * router decodes the percent-encoded token and keeps each captured value to 100 UTF-16 units (find-my-way's
 * maxParamLength), while a token of 100 characters outside the BMP (emoji) is 200 of them: so the token is captured
 * in two parts, the first as short as it can be, and joined again when the link is opened.
 */
export const linkRoute =
  `/:token(^[\\s\\S]{1,${onboardingUrlTokenLengthMax}}?):tokenTail(^[\\s\\S]{0,${onboardingUrlTokenLengthMax}})` +
  `.:secret(^[A-Za-z0-9_-]{${onboardingSecretLength}})`;
/** A link issued before links carried a secret: the token alone, of URL-safe characters. */
export const legacyLinkRoute = '/:token';

/** What one valid hosted page link opens: its end user, acting as the customer for that end user alone. */
export interface OnboardingVisit {
  endUser: EndUserRow;
  /** The services' caller: the end user's customer, so the API's own checks (ownership, quota) apply. */
  caller: AuthenticatedKey;
  /** The customer's name (its display name when set): the person must see who is asking for their documents. */
  companyName: string;
  /** The customer's logo, if it set one on an origin still allowed (ONBOARDING_LOGO_ORIGINS); null otherwise. */
  logoUrl: string | null;
  /** What the page's form tokens are bound to: the link itself (by its hash, as stored), nothing else. */
  formBinding: string;
  /** The link's path, as issued: the page's forms post below it. */
  pagePath: string;
}

/**
 * One answer for every link that opens nothing — unknown, expired, already used, or not a hosted_kyc end user's —
 * so that the page never tells a guesser which of those a link is.
 */
export function linkNotValid(): DomainError {
  return new DomainError('NOT_FOUND', 'This link is no longer valid. Ask the company that sent it to you for a new one.');
}

/**
 * The visit of a valid link. A completed link opens only with `completed` (the page then says it is complete, and
 * shows nothing of the person: reading it, never its forms), and does so after its expiry too: whoever holds the
 * whole link was its recipient, and "complete" tells them more than "no longer valid".
 */
export async function openOnboardingLink(
  services: Pick<WebServices, 'config' | 'customers' | 'endUsers' | 'clock' | 'onboardingLinks'>,
  params: LinkParams,
  options: { completed?: boolean } = {},
): Promise<OnboardingVisit> {
  const token = params.token + (params.tokenTail ?? '');
  const endUser = await services.endUsers.findByOnboardingLink(token, params.secret);
  const linkHash = endUser?.onboarding_secret_hash ?? endUser?.onboarding_token_hash;
  const pagePath = endUser && services.onboardingLinks.pathOf(endUser);
  const completed = endUser !== undefined && endUser.onboarding_completed_at !== null;
  if (
    !endUser ||
    endUser.verification_method !== 'hosted_kyc' ||
    !linkHash ||
    !pagePath ||
    endUser.onboarding_expires_at === null ||
    (completed && options.completed !== true) ||
    (!completed && services.clock.now().toISOString() >= endUser.onboarding_expires_at)
  ) {
    throw linkNotValid();
  }
  const customer = await services.customers.get(endUser.customer_id);
  if (!customer) throw linkNotValid();
  const branding = await services.customers.branding(customer.id);
  // A logo set while its origin was allowed shows only while it still is: the page's policy names allowed origins only.
  const logoUrl = branding.logo_url !== null && services.config.onboardingLogoOrigins.includes(new URL(branding.logo_url).origin) ? branding.logo_url : null;
  return {
    endUser,
    caller: { id: `onboarding:${endUser.id}`, customerId: customer.id, frOwnerBusinessId: customer.fr_owner_business_id, scopes: ['*'] },
    companyName: branding.display_name ?? customer.name,
    logoUrl,
    formBinding: `onboarding:${linkHash}`,
    pagePath,
  };
}

/** The person is done here: from now on the link answers like an unknown one. */
export async function completeOnboarding(services: Pick<WebServices, 'endUsers'>, visit: OnboardingVisit): Promise<void> {
  await services.endUsers.completeOnboarding(visit.endUser.id);
}
