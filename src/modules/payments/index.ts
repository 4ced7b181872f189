import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import { FeeService } from '../fees/index.js';
import { fiatAccountStatusLifecycle, sandboxFiatAccountRoutes, type FiatAccountRecord } from '../fiat-accounts/index.js';
import { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import type { ModuleContext } from '../module-context.js';
import { transactionRoutes } from '../transactions/index.js';
import { TransactionService } from '../transactions/index.js';
import { paymentRoutes, sandboxPaymentRoutes } from './routes.js';
import { PaymentService } from './service.js';
import { PaymentSubmissions } from './submission.js';
import { PaymentLifecycle } from './lifecycle.js';
import { SandboxPayments } from '../../providers/sandbox/payments.js';

/**
 * Payments, their lifecycle (applying the provider's outcomes), transaction history and, in the sandbox, the simulated
 * bank's settlement and fiat account statuses.
 */
export function registerPayments(app: FastifyInstance, context: ModuleContext): PaymentServices {
  const { storage, clock, caches, config } = context;
  const rail = context.providers.payments;
  // A configured rail takes each payment at once; the sandbox bank answers SANDBOX_AUTO_SETTLE_MS after it.
  const payments = new PaymentService(storage, new FeeService(storage, clock, caches), clock, caches, rail ? 0 : config.sandboxAutoSettleMs);
  const transactions = new TransactionService(storage);
  paymentRoutes(app, payments);
  transactionRoutes(app, transactions);
  const lifecycle = new PaymentLifecycle(storage, clock, caches);
  context.providerEvents.register(lifecycle);
  // Fiat accounts have no module of their own (app.ts registers their routes): their status lifecycle is here.
  const fiatAccountStatuses = fiatAccountStatusLifecycle(storage, clock, caches);
  context.providerEvents.register(fiatAccountStatuses);
  if (rail) {
    const submissions = new PaymentSubmissions(storage, clock, rail, context.providerEvents, config.settlementLeaseMs, context.log);
    context.workers.push(new PollingWorker('payment-submission', () => submissions.submitDue(), workerPollIntervalMs, context.log));
  }
  if (config.apiEnvironment !== 'sandbox') return { payments, transactions, sandbox: undefined };
  const settlement = new SandboxPayments(storage, clock, context.providerEvents, lifecycle, config.settlementLeaseMs);
  sandboxPaymentRoutes(app, settlement);
  // Fiat accounts have no module of their own (app.ts registers their routes); their simulation endpoints live
  // with the payment ones.
  sandboxFiatAccountRoutes(app, new SandboxStatuses<FiatAccountRecord>(context.providerEvents, 'fiat_account.status_changed', fiatAccountStatuses));
  // With a rail configured, its provider reports outcomes; the sandbox bank's timer would race it.
  if (!rail) context.workers.push(new PollingWorker('sandbox-payment-settlement', () => settlement.settleDuePayments(), workerPollIntervalMs, context.log));
  return { payments, transactions, sandbox: { settlement } };
}

/** What the dashboard (web/) uses of this module; the simulations exist in the sandbox only. */
export interface PaymentServices {
  payments: PaymentService;
  transactions: TransactionService;
  sandbox: { settlement: SandboxPayments } | undefined;
}

export { type PaymentRecord, SettleBody } from './schemas.js';
