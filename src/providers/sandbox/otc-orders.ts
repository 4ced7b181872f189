import type { TestClockTime } from '../../clock.js';
import { newId } from '../../ids.js';
import { DomainError } from '../../errors.js';
import type { OtcOrdersTable } from '../../storage/tables.js';
import type { ProviderEventInbox } from '../inbox.js';
import { sandboxProviderName } from './name.js';
import { reportOrReturn } from './returned.js';
import type { FiredTimer, SandboxTimers } from './timers.js';

const liquidityRejection = 'Rejected by the liquidity provider (sandbox)';

/** What the simulated liquidity provider needs to know of the OTC module: a caller's order as it is now (404 otherwise). */
export interface OtcOrderLookup {
  find(customerId: string, orderId: string): Promise<{ reference: string; status: OtcOrdersTable['status']; record: unknown }>;
}

/**
 * The simulated liquidity provider. It reports each step of an order as a provider event, applied at once through the
 * inbox by the OTC order lifecycle (modules/otc/lifecycle.ts); it moves no money. Steps come from its timer
 * (timers.ts: the debit SANDBOX_AUTO_SETTLE_MS after the confirmation, the credit as long after the debit) and
 * POST /sandbox/otc-orders/{id}/settle.
 */
export class SandboxOtcOrders {
  constructor(
    private readonly timers: SandboxTimers,
    private readonly inbox: ProviderEventInbox,
    private readonly orders: OtcOrderLookup,
  ) {}

  /**
   * `completed` reports whatever steps remain (a step the timer took meanwhile is not reported again); `failed`
   * reports the failure, which returns the EUR whether or not it was debited.
   */
  async settle(customerId: string, orderId: string, outcome: 'completed' | 'failed'): Promise<unknown> {
    const order = await this.orders.find(customerId, orderId);
    // The order's id is its reference, and its timer's.
    return this.timers.answered(order.reference, () => this.reportSteps(customerId, orderId, order, outcome));
  }

  private async reportSteps(customerId: string, orderId: string, order: { reference: string; status: string }, outcome: 'completed' | 'failed'): Promise<unknown> {
    const report = (type: 'otc_order.debited' | 'otc_order.settled' | 'otc_order.failed', payload: Record<string, unknown> = {}) =>
      this.inbox.report({ provider: sandboxProviderName, type, reference: order.reference, idempotencyKey: `simulation:${newId()}`, payload });
    if (outcome === 'failed') return report('otc_order.failed', { reason: liquidityRejection });
    if (order.status === 'debit_pending') {
      try {
        await report('otc_order.debited');
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'INVALID_STATUS_TRANSITION')) throw error;
        // The timer took both steps meanwhile.
        const current = await this.orders.find(customerId, orderId);
        if (current.status === 'settled') return current.record;
      }
    }
    return report('otc_order.settled');
  }

  /** The timer: reports the next step of each order whose time has come; returns how many it claimed. */
  settleDueOrders(): Promise<number> {
    return this.timers.fireDue('otc_order', (timer, firedAt) => this.nextStep(timer, firedAt));
  }

  /** The timer, for the orders of a test clock's customer (an advance): every step due by the clock's time. */
  settleDueOrdersOnClock(testClock: TestClockTime): Promise<void> {
    return this.timers.fireAllDueOnClock('otc_order', (timer, firedAt) => this.nextStep(timer, firedAt), testClock);
  }

  /** The debit, then (its timer set again) the credit; an order settled or failed meanwhile needs no answer. */
  private async nextStep(timer: FiredTimer, firedAt: Date): Promise<Date | undefined> {
    const order = await this.orders.find(timer.customer_id, timer.id);
    const event = { provider: sandboxProviderName, reference: order.reference, payload: {} };
    if (order.status === 'debited') {
      await this.inbox.report({ ...event, type: 'otc_order.settled', idempotencyKey: `timer:${timer.id}:settled` });
      return undefined;
    }
    if (order.status !== 'debit_pending') return undefined;
    // The liquidity provider takes no EUR from an account frozen or closed since the confirmation: the order fails, saying why.
    const debited = { ...event, type: 'otc_order.debited', idempotencyKey: `timer:${timer.id}:debited` } as const;
    return (await reportOrReturn(this.inbox, debited, timer.id, 'otc_order.failed')) === 'step' ? this.timers.nextStep(firedAt) : undefined;
  }
}
