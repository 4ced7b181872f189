export { OnboardingLinks, onboardingSecretLength } from './onboarding.js';
export { presentEndUser } from './presenter.js';
export { type EndUserRow } from './repository.js';
export { endUserRoutes, sandboxEndUserRoutes } from './routes.js';
export { type EndUserStatus, SandboxVerificationBody, type SandboxVerificationInput, identityDocumentKinds } from './schemas.js';
export { EndUserService } from './service.js';
export { VerificationService, allowedTransitions } from './verification.js';
