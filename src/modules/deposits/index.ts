import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { sandboxDepositRoutes } from './routes.js';
import { DepositService } from './service.js';

/** Registers the deposits module: money arriving from outside, simulated in the sandbox (it has no other route). */
export function registerDeposits(app: FastifyInstance, context: ModuleContext): DepositService | undefined {
  if (context.config.apiEnvironment !== 'sandbox') return undefined;
  const deposits = new DepositService(context.storage, context.clock, context.caches);
  sandboxDepositRoutes(app, deposits);
  return deposits;
}

export { DepositBody } from './schemas.js';
export { type DepositInput, DepositService } from './service.js';
