export { type FiatAccountRow } from './repository.js';
export { fiatAccountStatusLifecycle } from './lifecycle.js';
export { fiatAccountRoutes, sandboxFiatAccountRoutes } from './routes.js';
export { type FiatAccountRecord, ibanCountries } from './schemas.js';
export { FiatAccountService, findCustomerFiatAccount } from './service.js';
