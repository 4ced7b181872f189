import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { sandboxDepositRoutes } from './routes.js';
import { DepositService } from './service.js';

/** Money arriving from outside, simulated in the sandbox: no deposit service elsewhere. */
export function depositServices(context: ModuleContext): { deposits: DepositService | undefined } {
  return { deposits: context.config.apiEnvironment === 'sandbox' ? new DepositService(context.storage, context.clock, context.caches) : undefined };
}

/** The deposits plugin: POST /sandbox/fiat-accounts/{id}/deposits in the sandbox (the module has no other route). */
export async function depositsPlugin(app: FastifyInstance, { deposits }: { deposits: DepositService | undefined }): Promise<void> {
  if (deposits) sandboxDepositRoutes(app, deposits);
}

export { DepositBody } from './schemas.js';
export { type DepositInput, DepositService } from './service.js';
