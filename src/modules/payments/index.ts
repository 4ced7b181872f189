import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import { type FeePreviewOperation, FeeService } from '../fees/index.js';
import type { ModuleContext } from '../module-context.js';
import { paymentRoutes, sandboxPaymentRoutes } from './routes.js';
import { FeePreviewBody } from './schemas.js';
import { PaymentService } from './service.js';
import { SettlementService } from './settlement.js';

/** What the dashboard (web/) uses of this module; the simulations exist in the sandbox only. */
export interface PaymentServices {
  payments: PaymentService;
  /** The fee preview the fees plugin serves: a payment's body, resolved as the payment would be. */
  feePreview: FeePreviewOperation<typeof FeePreviewBody>;
  sandbox: { settlement: SettlementService } | undefined;
}

/** The payment services and, in the sandbox, the settlement and its worker. */
export function paymentServices(context: ModuleContext): PaymentServices {
  const { storage, clock, caches, config } = context;
  const payments = new PaymentService(storage, new FeeService(storage, clock, caches), clock, caches, config.sandboxAutoSettleMs);
  const feePreview = { body: FeePreviewBody, preview: payments.previewFee.bind(payments) };
  if (config.apiEnvironment !== 'sandbox') return { payments, feePreview, sandbox: undefined };
  const settlement = new SettlementService(storage, clock, caches, config.settlementLeaseMs);
  context.workers.push(new PollingWorker('sandbox-payment-settlement', () => settlement.settleDuePayments(), workerPollIntervalMs, context.log));
  return { payments, feePreview, sandbox: { settlement } };
}

/** The payments plugin: docs/spec.md §4 /payments and, in the sandbox, their settlement. */
export async function paymentsPlugin(app: FastifyInstance, { payments, sandbox }: PaymentServices): Promise<void> {
  paymentRoutes(app, payments);
  if (sandbox) sandboxPaymentRoutes(app, sandbox.settlement);
}

export { type PaymentRecord, SettleBody } from './schemas.js';
