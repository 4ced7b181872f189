import type { FastifyInstance } from 'fastify';
import type { OnboardingLinks } from './onboarding.js';
import { endUserRoutes, sandboxEndUserRoutes } from './routes.js';
import type { EndUserService } from './service.js';
import type { VerificationService } from './verification.js';

export interface EndUserPluginOptions {
  endUsers: EndUserService;
  onboardingLinks: OnboardingLinks;
  /** The verification decided on demand: in the sandbox only. */
  sandboxVerification: VerificationService | undefined;
}

/** The end users plugin: docs/spec.md §4 /end-users, their onboarding links and, in the sandbox, verification decisions. */
export async function endUsersPlugin(app: FastifyInstance, { endUsers, onboardingLinks, sandboxVerification }: EndUserPluginOptions): Promise<void> {
  endUserRoutes(app, endUsers, onboardingLinks);
  if (sandboxVerification) sandboxEndUserRoutes(app, sandboxVerification);
}

export { OnboardingLinks } from './onboarding.js';
export { presentEndUser } from './presenter.js';
export { type EndUserRow } from './repository.js';
export { type EndUserStatus, SandboxVerificationBody, type SandboxVerificationInput, identityDocumentKinds } from './schemas.js';
export { EndUserService } from './service.js';
export { VerificationService, allowedTransitions } from './verification.js';
