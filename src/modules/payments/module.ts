import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import { FeeService } from '../fees/service.js';
import { sandboxFiatAccountRoutes } from '../fiat-accounts/routes.js';
import { FiatAccountService } from '../fiat-accounts/service.js';
import type { ModuleContext } from '../module-context.js';
import { transactionRoutes } from '../transactions/routes.js';
import { TransactionService } from '../transactions/service.js';
import { DepositService } from './deposits.js';
import { paymentRoutes, sandboxPaymentRoutes } from './routes.js';
import { PaymentService } from './service.js';
import { SettlementService } from './settlement.js';

/** Payments, transaction history and, in the sandbox, funding, settlement and fiat account statuses. */
export function registerPayments(app: FastifyInstance, context: ModuleContext): PaymentServices {
  const { storage, clock, caches, config } = context;
  const payments = new PaymentService(storage, new FeeService(storage, clock, caches), clock, caches, config.sandboxAutoSettleMs);
  const transactions = new TransactionService(storage);
  paymentRoutes(app, payments);
  transactionRoutes(app, transactions);
  if (config.apiEnvironment !== 'sandbox') return { payments, transactions, sandbox: undefined };
  const settlement = new SettlementService(storage, clock, caches, config.settlementLeaseMs);
  const deposits = new DepositService(storage, clock, caches);
  sandboxPaymentRoutes(app, deposits, settlement, context.idempotency);
  // Fiat accounts have no module of their own (app.ts registers their routes); their simulation endpoints live
  // with the deposit one.
  sandboxFiatAccountRoutes(app, new FiatAccountService(storage, context.provisioning, clock, caches, context.endUsers));
  context.workers.push(new PollingWorker('sandbox-payment-settlement', () => settlement.settleDuePayments(), workerPollIntervalMs, context.log));
  return { payments, transactions, sandbox: { deposits, settlement } };
}

/** What the dashboard (web/) uses of this module; the simulations exist in the sandbox only. */
export interface PaymentServices {
  payments: PaymentService;
  transactions: TransactionService;
  sandbox: { deposits: DepositService; settlement: SettlementService } | undefined;
}
