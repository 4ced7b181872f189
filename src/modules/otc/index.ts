import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import type { ModuleContext } from '../module-context.js';
import { WalletOwnership } from '../wallets/index.js';
import { otcRoutes, sandboxOtcRoutes } from './routes.js';
import { OtcSandbox } from './sandbox.js';
import { OtcService } from './service.js';

/** Registers the OTC exchange (spec §4 /otc-exchanges…; the order reads are additive) and, in the sandbox, its settlement. */
export function registerOtc(app: FastifyInstance, context: ModuleContext): void {
  const { storage, clock, config } = context;
  const settings = { quoteTtlSeconds: config.otcQuoteTtlSeconds, spreadBps: config.otcSpreadBps, autoSettleMs: config.sandboxAutoSettleMs };
  otcRoutes(app, new OtcService(storage, clock, context.providers.otc, new WalletOwnership(storage), settings));
  if (config.apiEnvironment === 'sandbox') {
    const sandbox = new OtcSandbox(storage, clock, config.sandboxAutoSettleMs, config.settlementLeaseMs);
    sandboxOtcRoutes(app, sandbox);
    context.workers.push(new PollingWorker('sandbox-otc-settlement', () => sandbox.settleDueOrders(), workerPollIntervalMs, context.log));
  }
}
