export { OnboardingLinks } from './onboarding.js';
export { presentEndUser } from './presenter.js';
export { type EndUserRow } from './repository.js';
export { endUserRoutes, sandboxEndUserRoutes } from './routes.js';
export { type EndUserRecord, type EndUserStatus, SandboxVerificationBody, type SandboxVerificationInput, identityDocumentKinds } from './schemas.js';
export { EndUserService } from './service.js';
export { EndUserVerificationLifecycle, allowedTransitions } from './lifecycle.js';
