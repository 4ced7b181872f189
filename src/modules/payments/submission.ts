import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import { DomainError } from '../../errors.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { ProviderEventInbox } from '../../providers/inbox.js';
import type { PaymentRail } from '../../providers/payments.js';
import { ProviderRefusedError } from '../../providers/provisioning.js';
import { sql } from 'kysely';
import { settlementBatchSize } from '../../config/limits.js';
import type { Storage } from '../../storage/database.js';
import { claimDue } from '../../workers/claim.js';
import type { PaymentRow } from './repository.js';

/**
 * Hands new payments to the bank that carries them out (worker `payment-submission`, when a PaymentRail is
 * configured; docs/providers.md). A payment is due for submission from its creation (`submit_at`), claimed first
 * (workers/claim.ts), so each attempt is one instance's; an attempt that did not answer leaves it to be claimed again
 * once the lease (SETTLEMENT_LEASE_SECONDS) has run out, and the rail is idempotent per payment. A refusal for good is
 * reported as the provider's `payment.failed` event, so the payment lifecycle returns the money like any failure.
 */
export class PaymentSubmissions {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly rail: PaymentRail,
    private readonly inbox: ProviderEventInbox,
    private readonly leaseMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** One pass: submits the payments due; returns how many it claimed. */
  async submitDue(): Promise<number> {
    const now = this.clock.now();
    const due = await claimDue<PaymentRow>(this.storage, {
      table: 'payments',
      due: sql`status = 'pending' and submit_at is not null`,
      leaseColumn: 'submit_at',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + this.leaseMs).toISOString(),
      orderBy: 'submit_at',
      limit: settlementBatchSize,
    });
    for (const row of due) await this.submit(row);
    return due.length;
  }

  private async submit(row: PaymentRow): Promise<void> {
    try {
      await this.rail.submitPayment({
        frPaymentId: row.fr_payment_id,
        amountMinor: BigInt(row.amount_minor),
        currency: row.currency as FiatCurrency,
        scheme: row.payment_scheme,
        reference: row.reference,
      });
    } catch (error) {
      if (!(error instanceof ProviderRefusedError)) {
        this.log.warn({ err: error, paymentId: row.id }, 'payment submission failed; it is tried again once its claim runs out');
        return;
      }
      await this.inbox
        .report({ provider: this.rail.name, type: 'payment.failed', reference: row.fr_payment_id, idempotencyKey: `submission-refused:${row.fr_payment_id}`, payload: { reason: error.message } })
        .catch((refusal: unknown) => {
          // Settled meanwhile (by an outcome that arrived first): nothing is left to fail.
          if (!(refusal instanceof DomainError)) throw refusal;
        });
      return;
    }
    // Submitted: nothing is due for it any more; the outcome arrives as a provider event.
    await this.storage.db.updateTable('payments').set({ submit_at: null }).where('id', '=', row.id).where('status', '=', 'pending').execute();
  }
}
