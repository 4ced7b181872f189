import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import { FeeService } from '../fees/index.js';
import { sandboxFiatAccountRoutes } from '../fiat-accounts/index.js';
import { FiatAccountService } from '../fiat-accounts/index.js';
import type { ModuleContext } from '../module-context.js';
import { transactionRoutes } from '../transactions/index.js';
import { TransactionService } from '../transactions/index.js';
import { paymentRoutes, sandboxPaymentRoutes } from './routes.js';
import { PaymentService } from './service.js';
import { SettlementService } from './settlement.js';

/** Payments, transaction history and, in the sandbox, settlement and fiat account statuses. */
export function registerPayments(app: FastifyInstance, context: ModuleContext): PaymentServices {
  const { storage, clock, config } = context;
  const payments = new PaymentService(storage, new FeeService(storage, clock), clock, config.sandboxAutoSettleMs);
  const transactions = new TransactionService(storage);
  paymentRoutes(app, payments);
  transactionRoutes(app, transactions);
  if (config.apiEnvironment !== 'sandbox') return { payments, transactions, sandbox: undefined };
  const settlement = new SettlementService(storage, clock, config.settlementLeaseMs);
  sandboxPaymentRoutes(app, settlement);
  // Fiat accounts have no module of their own (app.ts registers their routes); their simulation endpoints live
  // with the payment ones.
  sandboxFiatAccountRoutes(app, new FiatAccountService(storage, context.provisioning, clock, context.endUsers));
  context.workers.push(new PollingWorker('sandbox-payment-settlement', () => settlement.settleDuePayments(), workerPollIntervalMs, context.log));
  return { payments, transactions, sandbox: { settlement } };
}

/** What the dashboard (web/) uses of this module; the simulations exist in the sandbox only. */
export interface PaymentServices {
  payments: PaymentService;
  transactions: TransactionService;
  sandbox: { settlement: SettlementService } | undefined;
}

export { type PaymentRecord, SettleBody } from './schemas.js';
