export { csrfTokenRoutes } from './routes.js';
export { CsrfTokenService } from './service.js';
