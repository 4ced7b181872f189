export { type DashboardUserRow } from './repository.js';
export { type DashboardSession, DashboardUserService, type DashboardUserView, type SignInLink } from './service.js';
export { DashboardReveals } from './reveals.js';
