import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import { appendEvents } from '../../events/outbox.js';
import { postJournal, type Posting } from '../../ledger/ledger.js';
import { providerId } from '../../providers/provider-ids.js';
import type { Storage } from '../../storage/database.js';
import { allocateSequences, insertTransaction, updateTransactionStatus } from '../transactions/repository.js';
import { accountPostings, balanceKey, type CustomerAccount } from './accounts.js';
import { balanceEvents } from './events.js';
import { presentPayment } from './presenter.js';
import { duePayments, findPayment, settlePaymentRow, type PaymentRow } from './repository.js';

export type SettlementOutcome = 'completed' | 'failed';

/** Sandbox magic (docs/payments.md): a reference starting with "sandbox-fail" makes automatic settlement fail. */
const failingReferencePrefix = 'sandbox-fail';
const settlementBatchSize = 100;

function sourceOf(row: PaymentRow): CustomerAccount {
  return row.from_virtual_account_id
    ? { kind: 'virtual_account', id: row.from_virtual_account_id, fiatAccountId: row.from_account_id, currency: row.currency, name: '', iban: '' }
    : { kind: 'fiat_account', id: row.from_account_id, fiatAccountId: row.from_account_id, currency: row.currency, name: '', iban: '' };
}

function internalTargetOf(row: PaymentRow): CustomerAccount | undefined {
  if (row.to_account_id === null) return undefined;
  return row.to_virtual_account_id
    ? { kind: 'virtual_account', id: row.to_virtual_account_id, fiatAccountId: row.to_account_id, currency: row.currency, name: '', iban: '' }
    : { kind: 'fiat_account', id: row.to_account_id, fiatAccountId: row.to_account_id, currency: row.currency, name: '', iban: '' };
}

/**
 * Settlement by the (sandbox) provider: `completed` moves the reserved amount to its destination and the fee to
 * fee income; `failed` returns amount and fee to the account it came from. Each is one database transaction with
 * its ledger entry, transaction records and events; a payment settles once (a second attempt → 422).
 */
export class SettlementService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async settle(customerId: string, paymentId: string, outcome: SettlementOutcome, failureReason = 'Rejected by the receiving bank (sandbox)') {
    const row = await findPayment(this.storage.db, customerId, paymentId.toLowerCase());
    if (!row) throw notFound('payment');
    return presentPayment(await this.apply(row, outcome, failureReason));
  }

  /** Sandbox: settles the payments whose automatic settlement time has come. */
  async settleDuePayments(): Promise<number> {
    const due = await duePayments(this.storage.db, this.clock.now().toISOString(), settlementBatchSize);
    for (const row of due) {
      const outcome = row.reference.toLowerCase().startsWith(failingReferencePrefix) ? 'failed' : 'completed';
      await this.apply(row, outcome, 'Rejected by the receiving bank (sandbox reference)').catch((error: unknown) => {
        // Settled by hand (or by another instance) meanwhile.
        if (!(error instanceof DomainError)) throw error;
      });
    }
    return due.length;
  }

  private async apply(row: PaymentRow, outcome: SettlementOutcome, failureReason: string): Promise<PaymentRow> {
    if (row.status !== 'pending') {
      throw new DomainError('INVALID_STATUS_TRANSITION', `A ${row.status} payment cannot become ${outcome}.`, { from: row.status, to: outcome });
    }
    const now = this.clock.now();
    const nowText = now.toISOString();
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
      settle_at: null,
    };

    await this.storage.db.transaction().execute(async (trx) => {
      // A record is written for the account credited (a return, or the receiving side of an internal transfer).
      const sequence = credited ? await allocateSequences(trx, row.customer_id, 1) : undefined;
      const won = await settlePaymentRow(trx, row.id, settled);
      if (!won) throw new DomainError('INVALID_STATUS_TRANSITION', 'The payment was settled meanwhile.', { to: outcome });

      const postings: Posting[] = [{ kind: 'system', code: 'suspense', amountMinor: -(amount + fee) }];
      if (outcome === 'failed') postings.push(...accountPostings(source, amount + fee));
      else {
        postings.push({ kind: 'system', code: 'fee_income', amountMinor: fee });
        postings.push(...(target ? accountPostings(target, amount) : [{ kind: 'system' as const, code: 'clearing' as const, amountMinor: amount }]));
      }
      const changes = await postJournal(trx, {
        customerId: row.customer_id,
        kind: outcome === 'failed' ? 'payment_failed' : 'payment_completed',
        referenceId: row.id,
        currency: row.currency,
        createdAt: nowText,
        postings,
      });
      await updateTransactionStatus(trx, row.transaction_id, { status: outcome, updated_at: nowText, completed_at: outcome === 'completed' ? nowText : null });

      const recordIds = new Map<string, string>();
      if (credited && sequence !== undefined) {
        const change = changes.get(balanceKey(credited));
        if (!change) throw new Error('the credited account has no balance change');
        const recordId = randomUUID();
        const credit = outcome === 'failed' ? amount + fee : amount;
        await insertTransaction(trx, {
          id: recordId,
          customer_id: row.customer_id,
          customer_seq: sequence,
          fr_transaction_id: providerId('txn'),
          transaction_type: outcome === 'failed' ? 'payment_return' : 'payment',
          amount_minor: credit,
          currency: row.currency,
          status: 'completed',
          direction: 'incoming',
          account_id: credited.fiatAccountId,
          virtual_account_id: credited.kind === 'virtual_account' ? credited.id : null,
          from_account_id: outcome === 'failed' ? null : source.id,
          from_account_type: outcome === 'failed' ? 'external' : source.kind,
          to_account_id: credited.id,
          to_account_type: credited.kind,
          description: outcome === 'failed' ? `Return of payment ${row.reference}: ${failureReason}` : `Transfer ${row.reference}`,
          reference: row.reference,
          counterparty_name: null,
          counterparty_account: null,
          fee_amount_minor: 0n,
          fee_currency: row.currency,
          payee_id: row.payee_id,
          payment_id: row.id,
          balance_before_minor: change.beforeMinor,
          balance_after_minor: change.afterMinor,
          completed_at: nowText,
          created_at: nowText,
          updated_at: nowText,
        });
        for (const key of changes.keys()) recordIds.set(key, recordId);
      }
      const payment = presentPayment(settled);
      await appendEvents(trx, [
        { customerId: row.customer_id, type: 'payment.status_updated', data: payment, createdAt: now },
        { customerId: row.customer_id, type: outcome === 'failed' ? 'payment.failed' : 'payment.completed', data: payment, createdAt: now },
        ...balanceEvents(row.customer_id, row.currency, changes, recordIds, now),
      ]);
    });
    return settled;
  }
}
