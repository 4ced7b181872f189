import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { notFound, validationError } from '../../errors.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { idempotencyKeyLost } from '../../ledger/ledger.js';
import { BalanceNumber, balanceKey, newPlan, plannedResponse, withJournal } from '../../ledger/money-plan.js';
import { executeMoneyPlan } from '../../ledger/money-transaction.js';
import { providerId } from '../../providers/provider-ids.js';
import type { Storage } from '../../storage/database.js';
import type { TransactionsTable } from '../../storage/tables.js';
import { narrowIdempotentReadScope, type Answer, type Reservation } from '../../storage/idempotency-answers.js';
import { requireScope } from '../api-keys/index.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { historyValuesOf } from '../transactions/index.js';
import { presentTransaction } from '../transactions/index.js';
import { accountPostings, balanceAccountOf, findCustomerAccount, requireCanReceive, type CustomerAccount } from '../accounts/index.js';
import { addBalanceEvents } from '../accounts/index.js';

type NewHistoryRecord = Omit<TransactionsTable, 'customer_seq' | 'balance_before_minor' | 'balance_after_minor'>;

/**
 * The history record of money arriving in an account from outside (a deposit, an OTC exchange's return): completed
 * at once, no fee, the account's balances filled in by the plan that credits it.
 */
export function incomingRecord(
  customerId: string,
  account: CustomerAccount,
  amountMinor: bigint,
  now: string,
  what: { type: string; description: string; reference: string | null; counterpartyName: string | null },
): NewHistoryRecord {
  return {
    id: newId(),
    customer_id: customerId,
    fr_transaction_id: providerId('txn'),
    transaction_type: what.type,
    amount_minor: amountMinor,
    currency: account.currency,
    status: 'completed',
    direction: 'incoming',
    account_id: account.fiatAccountId,
    virtual_account_id: account.kind === 'virtual_account' ? account.id : null,
    from_account_id: null,
    from_account_type: 'external',
    to_account_id: account.id,
    to_account_type: account.kind,
    description: what.description,
    reference: what.reference,
    counterparty_name: what.counterpartyName,
    counterparty_account: null,
    fee_amount_minor: 0n,
    fee_currency: account.currency,
    payee_id: null,
    payment_id: null,
    completed_at: now,
    created_at: now,
    updated_at: now,
  };
}

export interface DepositInput {
  amount: number;
  reference?: string;
  counterpartyName?: string;
}

/**
 * Sandbox funding (DESIGN §3): money arriving from outside, into a fiat account or — by its IBAN — a virtual
 * account (crediting the virtual account and its master). One completed incoming transaction per deposit.
 */
export class DepositService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /**
   * Credits the account. Under an Idempotency-Key (`reservation`), the answer — the deposit record — is stored by the
   * same money plan that moves the money (http/idempotency.ts); what reading it takes is narrowed to the account's read scope.
   */
  async deposit(caller: AuthenticatedKey, accountId: string, input: DepositInput, reservation?: Reservation): Promise<Answer> {
    const account = await findCustomerAccount(this.storage, caller.customerId, accountId.toLowerCase());
    if (!account) throw notFound('account');
    requireScope(caller.scopes, account.kind === 'virtual_account' ? 'virtual-accounts:write' : 'fiat-accounts:write');
    // From here on the answer shows this account: a reuse of the key reads it only with the account's read scope.
    const readScope = account.kind === 'virtual_account' ? 'virtual-accounts:read' : 'fiat-accounts:read';
    if (reservation && !(await narrowIdempotentReadScope(this.storage.db, reservation, readScope))) throw idempotencyKeyLost();
    // A closed account receives nothing; a frozen one still does (docs/payments.md "Account and payee status").
    requireCanReceive(account);
    let amountMinor: bigint;
    try {
      amountMinor = parseAmount(input.amount, account.currency);
    } catch (error) {
      if (error instanceof AmountError) throw validationError([{ location: 'body', path: '/amount', reason: error.message }]);
      throw error;
    }
    const nowText = this.clock.now().toISOString();
    const credited = balanceKey(balanceAccountOf(account));
    const record = incomingRecord(caller.customerId, account, amountMinor, nowText, {
      type: 'deposit',
      description: 'Deposit (sandbox)',
      reference: input.reference ?? null,
      counterpartyName: input.counterpartyName ?? null,
    });
    const { id } = record;
    const plan = withJournal(newPlan(caller.customerId, nowText), 'deposit', id, [
      { account: { kind: 'system', code: 'clearing' }, asset: account.currency, amount: -amountMinor },
      ...accountPostings(account, amountMinor),
    ]);
    plan.history.push({ ...record, balanceOf: credited });
    await addBalanceEvents(this.storage, plan, new Map(plan.moves.map((move) => [move.key, id])));
    // The record as the API presents it, its balances written in once they have moved.
    const presented = {
      ...presentTransaction(historyValuesOf({ ...record, customer_seq: 0n, balance_before_minor: 0n, balance_after_minor: 0n }), caller.frOwnerBusinessId),
      balance_before: new BalanceNumber(credited, 'before', account.currency),
      balance_after: new BalanceNumber(credited, 'after', account.currency),
    };
    plan.response = reservation ? plannedResponse(reservation, 201, presented) : null;
    const result = await executeMoneyPlan(this.storage, plan);
    if (result.responseBody !== null) return { status: 201, body: result.responseBody, stored: true };
    const balance = result.balances.get(credited)!;
    const row = { ...record, customer_seq: result.firstSequence!, balance_before_minor: balance.before, balance_after_minor: balance.after };
    return { status: 201, body: JSON.stringify({ data: presentTransaction(historyValuesOf(row), caller.frOwnerBusinessId) }), stored: false };
  }
}
