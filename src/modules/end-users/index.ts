import type { FastifyInstance } from 'fastify';
import type { OnboardingLinks } from './onboarding.js';
import { endUserRoutes, sandboxEndUserRoutes } from './routes.js';
import type { EndUserService } from './service.js';
import type { SandboxVerification } from '../../providers/sandbox/verification.js';
import type { EndUserRecord } from './schemas.js';

export interface EndUserPluginOptions {
  endUsers: EndUserService;
  onboardingLinks: OnboardingLinks;
  /** The simulated KYC provider's decisions on demand: in the sandbox only. */
  sandboxVerification: SandboxVerification<EndUserRecord> | undefined;
}

/** The end users plugin: docs/spec.md §4 /end-users, their onboarding links and, in the sandbox, verification decisions. */
export async function endUsersPlugin(app: FastifyInstance, { endUsers, onboardingLinks, sandboxVerification }: EndUserPluginOptions): Promise<void> {
  endUserRoutes(app, endUsers, onboardingLinks);
  if (sandboxVerification) sandboxEndUserRoutes(app, sandboxVerification);
}

export { OnboardingLinks } from './onboarding.js';
export { presentEndUser } from './presenter.js';
export { type EndUserRow, providerEndUserIds } from './repository.js';
export {
  CreateBusinessBody,
  type CreateBusinessInput,
  CreateIndividualBody,
  type CreateIndividualInput,
  type EndUserRecord,
  type EndUserStatus,
  SandboxVerificationBody,
  type SandboxVerificationInput,
  identityDocumentKinds,
} from './schemas.js';
export { EndUserService } from './service.js';
export { EndUserVerificationLifecycle, allowedTransitions } from './lifecycle.js';
