import type { FastifyInstance } from 'fastify';
import type { ModuleContext } from '../module-context.js';
import { walletRoutes } from './routes.js';
import { WalletService } from './service.js';

/** Registers the wallets module (spec §4 POST /wallets, POST /wallets/{id}/addresses; GET /wallets and GET /wallets/{id} are additive). */
export function registerWallets(app: FastifyInstance, context: ModuleContext): void {
  walletRoutes(app, new WalletService(context.storage, context.provisioning, context.clock, context.endUsers));
}
