import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import { type FeePreviewOperation, FeeService } from '../fees/index.js';
import type { ModuleContext } from '../module-context.js';
import { paymentRoutes, sandboxPaymentRoutes } from './routes.js';
import { FeePreviewBody } from './schemas.js';
import { PaymentService } from './service.js';
import { PaymentSubmissions } from './submission.js';
import { PaymentLifecycle } from './lifecycle.js';
import { SandboxPayments } from '../../providers/sandbox/payments.js';
import { sandboxTimersOf } from '../../providers/sandbox/timers.js';
import { noRows } from '../../ledger/unit-of-work.js';

/** What the dashboard (web/) uses of this module; the simulations exist in the sandbox only. */
export interface PaymentServices {
  payments: PaymentService;
  /** The fee preview the fees plugin serves: a payment's body, resolved as the payment would be. */
  feePreview: FeePreviewOperation<typeof FeePreviewBody>;
  sandbox: { settlement: SandboxPayments } | undefined;
}

/**
 * The payment services, their lifecycle (applying the provider's outcomes) and, with a configured rail, its
 * submission worker; in the sandbox, the simulated bank's settlement and its worker.
 */
export function paymentServices(context: ModuleContext): PaymentServices {
  const { storage, clock, caches, config } = context;
  const rail = context.providers.payments;
  const sandboxTimers = sandboxTimersOf(config, storage, clock, context.customerClocks);
  // With a rail configured, its provider reports outcomes; the sandbox bank's timer would race it.
  const bankTimers = rail ? undefined : sandboxTimers;
  // A configured rail is handed each payment at once; the sandbox bank answers SANDBOX_AUTO_SETTLE_MS after it.
  const payments = new PaymentService(storage, new FeeService(storage, clock, caches), clock, caches, rail !== undefined, bankTimers?.rowsFor('payment') ?? noRows);
  const feePreview = { body: FeePreviewBody, preview: payments.previewFee.bind(payments) };
  const lifecycle = new PaymentLifecycle(storage, clock, caches);
  context.providerEvents.register(lifecycle);
  if (rail) {
    const submissions = new PaymentSubmissions(storage, clock, rail, context.providerEvents, config.settlementLeaseMs, context.log);
    context.workers.push(new PollingWorker('payment-submission', () => submissions.submitDue(), workerPollIntervalMs, context.log));
  }
  if (!sandboxTimers) return { payments, feePreview, sandbox: undefined };
  const settlement = new SandboxPayments(sandboxTimers, context.providerEvents, lifecycle);
  if (bankTimers) {
    context.workers.push(new PollingWorker('sandbox-payment-settlement', () => settlement.settleDuePayments(), workerPollIntervalMs, context.log));
    context.customerClocks.onAdvance((testClock) => settlement.settleDuePaymentsOnClock(testClock));
  }
  return { payments, feePreview, sandbox: { settlement } };
}

/** The payments plugin: docs/spec.md §4 /payments and, in the sandbox, their settlement. */
export async function paymentsPlugin(app: FastifyInstance, { payments, sandbox }: PaymentServices): Promise<void> {
  paymentRoutes(app, payments);
  if (sandbox) sandboxPaymentRoutes(app, sandbox.settlement);
}

export { CreatePaymentBody, type CreatePaymentInput, type PaymentRecord, SettleBody } from './schemas.js';
