import type { FastifyInstance } from 'fastify';
import { otcQuoteKeptAfterExpiryMs, workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import type { ModuleContext } from '../module-context.js';
import { WalletOwnership } from '../wallets/index.js';
import { otcRoutes, sandboxOtcRoutes } from './routes.js';
import { SandboxOtcOrders } from '../../providers/sandbox/otc-orders.js';
import { sandboxTimersOf } from '../../providers/sandbox/timers.js';
import { noRows } from '../../ledger/unit-of-work.js';
import { OtcOrderLifecycle } from './lifecycle.js';
import { deleteUnconfirmedQuotes } from './repository.js';
import { OtcService } from './service.js';

export interface OtcServices {
  otc: OtcService;
  sandbox: SandboxOtcOrders | undefined;
}

/**
 * The OTC exchange, the order lifecycle applying the liquidity provider's outcomes, the reaping of quotes never
 * confirmed and, in the sandbox, the simulated liquidity provider with its worker.
 */
export function otcServices(context: ModuleContext): OtcServices {
  const { storage, clock, caches, config } = context;
  const settings = { quoteTtlSeconds: config.otcQuoteTtlSeconds, spreadBps: config.otcSpreadBps };
  const timers = sandboxTimersOf(config, storage, clock, context.customerClocks);
  const otc = new OtcService(storage, clock, context.customerClocks, caches, context.providers.otc, new WalletOwnership(storage, caches), settings, timers?.rowsFor('otc_order') ?? noRows);
  const lifecycle = new OtcOrderLifecycle(storage, clock, caches);
  context.providerEvents.register(lifecycle);
  // A late confirmation of an expired quote is told so for a day; then the quote goes, unless an order was made of it.
  context.reaper.add(async (now, limit) => deleteUnconfirmedQuotes(storage, new Date(now.getTime() - otcQuoteKeptAfterExpiryMs).toISOString(), limit));
  if (!timers) return { otc, sandbox: undefined };
  const sandbox = new SandboxOtcOrders(timers, context.providerEvents, lifecycle);
  context.workers.push(new PollingWorker('sandbox-otc-settlement', () => sandbox.settleDueOrders(), workerPollIntervalMs, context.log));
  context.customerClocks.onAdvance((testClock) => sandbox.settleDueOrdersOnClock(testClock));
  return { otc, sandbox };
}

/** The OTC plugin (docs/spec.md §4 /otc-exchanges…; the order reads are additive) and, in the sandbox, the simulated liquidity provider. */
export async function otcPlugin(app: FastifyInstance, { otc, sandbox }: OtcServices): Promise<void> {
  otcRoutes(app, otc);
  if (sandbox) sandboxOtcRoutes(app, sandbox);
}

export { OrdersQuery, QuoteBody, type QuoteInput, SettleOrderBody } from './schemas.js';
