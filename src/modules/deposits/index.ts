import type { FastifyInstance } from 'fastify';
import { SandboxDeposits } from '../../providers/sandbox/deposits.js';
import type { ModuleContext } from '../module-context.js';
import { DepositLifecycle } from './lifecycle.js';
import { sandboxDepositRoutes } from './routes.js';
import { DepositService } from './service.js';

/**
 * The deposit lifecycle, applying the bank's reports of money arriving from outside, registered with the provider
 * events inbox; in the sandbox, the simulated bank's deposits (no deposit service elsewhere).
 */
export function depositServices(context: ModuleContext): { deposits: DepositService | undefined } {
  const { storage, clock, caches } = context;
  context.providerEvents.register(new DepositLifecycle(storage, clock, caches));
  if (context.config.apiEnvironment !== 'sandbox') return { deposits: undefined };
  return { deposits: new DepositService(storage, caches, new SandboxDeposits(context.providerEvents)) };
}

/** The deposits plugin: POST /sandbox/fiat-accounts/{id}/deposits in the sandbox (the module has no other route). */
export async function depositsPlugin(app: FastifyInstance, { deposits }: { deposits: DepositService | undefined }): Promise<void> {
  if (deposits) sandboxDepositRoutes(app, deposits);
}

export { DepositBody } from './schemas.js';
export { type DepositInput, DepositService } from './service.js';
