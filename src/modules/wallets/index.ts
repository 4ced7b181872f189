import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import type { ModuleContext } from '../module-context.js';
import { WalletOwnership } from './ownership.js';
import { sandboxWalletRoutes, walletRoutes } from './routes.js';
import { WalletDepositLifecycle } from './deposits.js';
import { WalletTransferLifecycle } from './lifecycle.js';
import { WalletSandbox } from './sandbox.js';
import { WalletService } from './service.js';
import { WalletTransferService } from './transfers.js';
import { sandboxTimersOf } from '../../providers/sandbox/timers.js';
import { noRows } from '../../ledger/unit-of-work.js';

/** What the dashboard (web/) uses of this module; the simulations exist in the sandbox only. */
export interface WalletServices {
  wallets: WalletService;
  transfers: WalletTransferService;
  sandbox: WalletSandbox | undefined;
}

/**
 * The wallet services, and the transfer and deposit lifecycles applying the custodian's reports; in the sandbox, the
 * simulated custodian's deposits and settlement of transfers, with its worker.
 */
export function walletServices(context: ModuleContext): WalletServices {
  const { storage, clock, caches, config } = context;
  const ownership = new WalletOwnership(storage, caches);
  const wallets = new WalletService(storage, context.provisioning, clock, context.endUsers);
  const timers = sandboxTimersOf(config, storage, clock, context.customerClocks);
  const transfers = new WalletTransferService(storage, clock, ownership, timers?.rowsFor('wallet_transfer') ?? noRows);
  const lifecycle = new WalletTransferLifecycle(storage, clock);
  context.providerEvents.register(lifecycle);
  context.providerEvents.register(new WalletDepositLifecycle(storage, clock));
  if (!timers) return { wallets, transfers, sandbox: undefined };
  const sandbox = new WalletSandbox(storage, ownership, { timers, inbox: context.providerEvents, transfers: lifecycle });
  context.workers.push(new PollingWorker('sandbox-wallet-settlement', () => sandbox.settleDueTransfers(), workerPollIntervalMs, context.log));
  context.customerClocks.onAdvance((testClock) => sandbox.settleDueTransfersOnClock(testClock));
  return { wallets, transfers, sandbox };
}

/**
 * The wallets plugin: docs/spec.md §4 POST /wallets, its addresses and transfers, and the live balance; the GETs are
 * additive; in the sandbox, deposits and the settlement of transfers.
 */
export async function walletsPlugin(app: FastifyInstance, { wallets, transfers, sandbox }: WalletServices): Promise<void> {
  walletRoutes(app, wallets, transfers);
  if (sandbox) sandboxWalletRoutes(app, sandbox);
}

export { addArrival } from './arrival.js';
export { WalletOwnership } from './ownership.js';
export { defaultWalletAddress, walletsReceiving } from './repository.js';
export {
  CreateWalletBody,
  type CreateWalletInput,
  CreateWalletTransferBody,
  type CreateWalletTransferInput,
  SettleWalletTransferBody,
  WalletDepositBody,
  type WalletDepositInput,
  type WalletTransferRecord,
  WalletTransfersQuery,
} from './schemas.js';
export { walletReceives } from './service.js';
