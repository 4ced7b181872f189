import type { TestClockTime } from '../../clock.js';
import { newId } from '../../ids.js';
import type { PaymentsTable } from '../../storage/tables.js';
import type { ProviderEventInbox } from '../inbox.js';
import { sandboxProviderName } from './name.js';
import { reportOrReturn } from './returned.js';
import type { FiredTimer, SandboxTimers } from './timers.js';

/** Sandbox magic (docs/payments.md): a reference starting with "sandbox-fail" makes automatic settlement fail. */
const failingReferencePrefix = 'sandbox-fail';
const bankRejection = 'Rejected by the receiving bank (sandbox)';
const referenceRejection = 'Rejected by the receiving bank (sandbox reference)';

/** What the simulated bank needs to know of the payments module: a caller's payment (404 for anyone else's). */
export interface PaymentLookup {
  find(customerId: string, paymentId: string): Promise<Pick<PaymentsTable, 'id' | 'fr_payment_id' | 'reference' | 'status'>>;
}

/**
 * The simulated bank's side of payments. It decides outcomes and reports them as provider events, applied at once
 * through the inbox by the payment lifecycle (modules/payments/lifecycle.ts); it moves no money and keeps no state
 * machine. Outcomes come from:
 * - its timer (timers.ts): SANDBOX_AUTO_SETTLE_MS after a payment's creation, the bank answers;
 * - its magic: a reference starting with "sandbox-fail" fails;
 * - POST /sandbox/payments/{id}/settle.
 */
export class SandboxPayments {
  constructor(
    private readonly timers: SandboxTimers,
    private readonly inbox: ProviderEventInbox,
    private readonly payments: PaymentLookup,
  ) {}

  /** The simulation route: the outcome asked for, reported now; the answer is the payment as the lifecycle left it. */
  async settle(customerId: string, paymentId: string, outcome: 'completed' | 'failed'): Promise<unknown> {
    const payment = await this.payments.find(customerId, paymentId);
    return this.timers.answered(payment.id, () =>
      this.inbox.report({
        provider: sandboxProviderName,
        type: outcome === 'completed' ? 'payment.completed' : 'payment.failed',
        reference: payment.fr_payment_id,
        // Every call is an outcome of its own: a second one is refused by the lifecycle, as a real second report would be.
        idempotencyKey: `simulation:${newId()}`,
        payload: outcome === 'failed' ? { reason: bankRejection } : {},
      }),
    );
  }

  /** The timer: reports the outcome of each payment whose time has come; returns how many it claimed. */
  settleDuePayments(): Promise<number> {
    return this.timers.fireDue('payment', (timer) => this.answer(timer));
  }

  /** The timer, for the payments of a test clock's customer (an advance): every one due by the clock's time, a batch at a time. */
  settleDuePaymentsOnClock(testClock: TestClockTime): Promise<void> {
    return this.timers.fireAllDueOnClock('payment', (timer) => this.answer(timer), testClock);
  }

  /** A payment settled meanwhile (by the simulation route) needs no answer. */
  private async answer(timer: FiredTimer): Promise<undefined> {
    const payment = await this.payments.find(timer.customer_id, timer.id);
    if (payment.status === 'pending') await this.reportOutcome(payment);
    return undefined;
  }

  /**
   * The bank does not complete a payment from an account frozen or closed meanwhile, nor into one closed meanwhile:
   * it returns the money, saying why (reportOrReturn). The keys are the payment's own, so a pass taken over after a
   * crash reports the same events, not new ones.
   */
  private async reportOutcome(row: Pick<PaymentsTable, 'id' | 'fr_payment_id' | 'reference'>): Promise<unknown> {
    const event = { provider: sandboxProviderName, reference: row.fr_payment_id };
    if (row.reference.toLowerCase().startsWith(failingReferencePrefix)) {
      return this.inbox.report({ ...event, type: 'payment.failed', idempotencyKey: `timer:${row.id}`, payload: { reason: referenceRejection } });
    }
    return reportOrReturn(this.inbox, { ...event, type: 'payment.completed', idempotencyKey: `timer:${row.id}`, payload: {} }, row.id, 'payment.failed');
  }
}
