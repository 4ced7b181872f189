import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { Posting } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { external, statementLine } from '../../ledger/statement-lines.js';
import { plannedEvent, type Guard } from '../../ledger/unit-of-work.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { addBalanceEvents, currentCustomerAccount } from '../account-lookup.js';
import {
  accountPostings,
  requireCanReceive,
  requireCanSend,
  unchangedStatusGuards,
  type CustomerAccount,
} from '../accounts/index.js';
import { explainedBy } from '../accounts/index.js';
import { presentPayment } from './presenter.js';
import { findPayment, findPaymentByReference, type PaymentRow } from './repository.js';
import type { PaymentRecord } from './schemas.js';

export type SettlementOutcome = 'completed' | 'failed';

/** Said of a failure whose provider gave no reason. */
const unexplainedFailure = 'Rejected by the provider';

type AccountRef = Pick<CustomerAccount, 'kind' | 'id' | 'fiatAccountId' | 'currency'>;

function sourceOf(row: PaymentRow): AccountRef {
  const currency = row.currency as FiatCurrency;
  return row.from_virtual_account_id
    ? { kind: 'virtual_account', id: row.from_virtual_account_id, fiatAccountId: row.from_account_id, currency }
    : { kind: 'fiat_account', id: row.from_account_id, fiatAccountId: row.from_account_id, currency };
}

function internalTargetOf(row: PaymentRow): AccountRef | undefined {
  if (row.to_account_id === null) return undefined;
  const currency = row.currency as FiatCurrency;
  return row.to_virtual_account_id
    ? { kind: 'virtual_account', id: row.to_virtual_account_id, fiatAccountId: row.to_account_id, currency }
    : { kind: 'fiat_account', id: row.to_account_id, fiatAccountId: row.to_account_id, currency };
}

/**
 * The payment lifecycle (docs/payments.md), whatever the provider: pending → completed | failed, both final, moved
 * by the provider events `payment.completed` and `payment.failed` (payload `{ reason? }`) that the inbox hands it
 * (providers/inbox.ts). `completed` moves the reserved amount to its destination and the fee to fee income;
 * `failed` returns amount and fee to the account it came from. Each is one money movement with its ledger entry,
 * statement lines, events and the event's applied mark, guarded by the payment still being pending: a payment
 * settles once (a second attempt → 422 INVALID_STATUS_TRANSITION, the event left failed).
 */
export class PaymentLifecycle implements Lifecycle<'payment'> {
  readonly resource = 'payment';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly caches: ReadCaches,
  ) {}

  /** The caller's payment as its bank knows it (404 for anyone else's): how a simulation names it in its event. */
  async find(customerId: string, paymentId: string): Promise<Pick<PaymentRow, 'id' | 'fr_payment_id' | 'reference' | 'status'>> {
    const row = await findPayment(this.storage.db, customerId, paymentId.toLowerCase());
    if (!row) throw notFound('payment');
    return row;
  }

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<PaymentRecord> {
    const row = await findPaymentByReference(this.storage.db, event.reference);
    if (!row) throw notFound('payment');
    const outcome: SettlementOutcome = event.type === 'payment.completed' ? 'completed' : 'failed';
    const reason = typeof event.payload.reason === 'string' ? event.payload.reason : unexplainedFailure;
    return presentPayment(await this.settle(row, outcome, reason, applied));
  }

  private async settle(row: PaymentRow, outcome: SettlementOutcome, failureReason: string, applied: AppliedMark): Promise<PaymentRow> {
    if (row.status !== 'pending') {
      throw new DomainError('INVALID_STATUS_TRANSITION', `A ${row.status} payment cannot become ${outcome}.`, { from: row.status, to: outcome });
    }
    const statusGuards = outcome === 'completed' ? await this.completionGuards(row) : [];
    const nowText = this.clock.now().toISOString();
    const currency = row.currency as FiatCurrency;
    const amount = BigInt(row.amount_minor);
    const fee = BigInt(row.fee_minor);
    const source = sourceOf(row);
    const target = internalTargetOf(row);
    const credited = outcome === 'failed' ? source : target;
    const settled: PaymentRow = {
      ...row,
      status: outcome,
      updated_at: nowText,
      completed_at: outcome === 'completed' ? nowText : null,
      failure_reason: outcome === 'failed' ? failureReason : null,
    };

    const postings: Posting[] = [{ account: { kind: 'system', code: 'suspense' }, asset: currency, amount: -(amount + fee) }];
    if (outcome === 'failed') postings.push(...accountPostings(source, amount + fee));
    else {
      postings.push({ account: { kind: 'system', code: 'fee_income' }, asset: currency, amount: fee });
      postings.push(...(target ? accountPostings(target, amount) : [{ account: { kind: 'system' as const, code: 'clearing' as const }, asset: currency, amount }]));
    }
    const movement = moneyMovement(row.customer_id, nowText, outcome === 'failed' ? 'payment_failed' : 'payment_completed', row.id, postings);
    const { work } = movement;
    work.guards.push({
      table: 'payments',
      match: { id: row.id, status: 'pending' },
      set: { status: settled.status, updated_at: settled.updated_at, completed_at: settled.completed_at, failure_reason: settled.failure_reason },
      error: 'INVALID_STATUS_TRANSITION',
      message: 'The payment was settled meanwhile.',
      details: { to: outcome },
    });
    work.guards.push(...statusGuards, applied.guard);
    work.statementLineUpdates.push({ id: row.transaction_id, status: outcome, updated_at: nowText, completed_at: outcome === 'completed' ? nowText : null });

    // A line is written for the account credited (a return, or the receiving side of an internal transfer).
    let explained = new Map<string, string>();
    if (credited) {
      const line = statementLine({
        customerId: row.customer_id,
        account: credited,
        direction: 'incoming',
        type: outcome === 'failed' ? 'payment_return' : 'payment',
        amountMinor: outcome === 'failed' ? amount + fee : amount,
        status: 'completed',
        counterpart: outcome === 'failed' ? external : { id: source.id, type: source.kind },
        description: outcome === 'failed' ? `Return of payment ${row.reference}: ${failureReason}` : `Transfer ${row.reference}`,
        reference: row.reference,
        payeeId: row.payee_id,
        paymentId: row.id,
        at: nowText,
      });
      work.statementLines.push(line);
      explained = explainedBy(movement, line.id);
    }
    const payment = presentPayment(settled);
    work.events.push(
      plannedEvent(row.customer_id, 'payment.status_updated', payment, nowText),
      plannedEvent(row.customer_id, outcome === 'failed' ? 'payment.failed' : 'payment.completed', payment, nowText),
    );
    await addBalanceEvents(this.storage, this.caches, movement, explained);
    await executeMoneyMovement(this.storage, movement);
    return settled;
  }

  /**
   * A payment completes only while money may still leave the account it came from, and arrive in its internal
   * target (ACCOUNT_NOT_ACTIVE otherwise, naming the account): decided on the statuses as stored now, and guarded to
   * be the same when the settlement commits.
   */
  private async completionGuards(row: PaymentRow): Promise<Guard[]> {
    const source = await this.currentAccount(row, sourceOf(row).id);
    requireCanSend(source);
    const target = internalTargetOf(row);
    if (!target) return unchangedStatusGuards(source);
    const receiving = await this.currentAccount(row, target.id);
    requireCanReceive(receiving);
    return [...unchangedStatusGuards(source), ...unchangedStatusGuards(receiving)];
  }

  private async currentAccount(row: PaymentRow, id: string): Promise<CustomerAccount> {
    const account = await currentCustomerAccount(this.storage, row.customer_id, id);
    if (!account) throw new Error(`payment ${row.id} names no account ${id} of its customer`);
    return account;
  }
}
