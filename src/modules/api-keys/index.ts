export { checkExpiresAt } from './expiry.js';
export { type Scope, grants, requireScope, scopeResources } from './scopes.js';
export { ApiKeyService, type ApiKeyView, type AuthenticatedKey, keyInputProblems, unauthenticated } from './service.js';
