import type { Clock } from '../../clock.js';
import { counterpartyNameLengthMax, paymentReferenceLengthMax } from '../../config/limits.js';
import { notFound, validationError, type FieldError } from '../../errors.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { balanceKey } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { external, statementLine } from '../../ledger/statement-lines.js';
import { BalanceNumber, plannedAnswer, type MovedRecord } from '../../ledger/unit-of-work.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { addBalanceEvents, currentCustomerAccount } from '../account-lookup.js';
import { accountPostings, balanceAccountOf, explainedBy, requireCanReceive, unchangedStatusGuards, type CustomerAccount } from '../accounts/index.js';
import { fiatAccountByReference } from '../fiat-accounts/index.js';
import { historyValuesOf, presentTransaction, type TransactionRecordType } from '../transactions/index.js';
import { virtualAccountByReference } from '../virtual-accounts/index.js';

/** What a `deposit.received` event says arrived: its payload, checked against the account credited. */
interface IncomingFunds {
  amountMinor: bigint;
  reference: string | null;
  counterpartyName: string | null;
}

const optionalText = (value: unknown, path: string, lengthMax: number, fields: FieldError[]): string | null => {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' && value.length > 0 && value.length <= lengthMax) return value;
  fields.push({ location: 'body', path, reason: `must be a string of 1 to ${lengthMax} characters` });
  return null;
};

/** The payload `{ account, amount, currency, reference?, counterpartyName? }` past its account, or a refusal naming what is wrong with it. */
function incomingFundsOf(payload: Record<string, unknown>, currency: FiatCurrency): IncomingFunds {
  const fields: FieldError[] = [];
  if (payload.currency !== currency) fields.push({ location: 'body', path: '/payload/currency', reason: `must be the account's currency, ${currency}` });
  let amountMinor = 0n;
  try {
    amountMinor = typeof payload.amount === 'string' ? parseAmount(payload.amount, currency) : 0n;
  } catch (error) {
    if (!(error instanceof AmountError)) throw error;
  }
  if (amountMinor <= 0n) fields.push({ location: 'body', path: '/payload/amount', reason: `must be a decimal string above 0 in ${currency}` });
  const reference = optionalText(payload.reference, '/payload/reference', paymentReferenceLengthMax, fields);
  const counterpartyName = optionalText(payload.counterpartyName, '/payload/counterpartyName', counterpartyNameLengthMax, fields);
  if (fields.length > 0) throw validationError(fields, 'The provider event is not valid.');
  return { amountMinor, reference, counterpartyName };
}

/**
 * Money arriving from outside into a fiat account or a virtual account (crediting the virtual account and its
 * master), whatever the bank: the provider event `deposit.received` (reference: the bank's id of the incoming
 * transfer; payload.account: the fr_account_id or fr_virtual_account_id credited) credits it from clearing as one
 * completed incoming statement line, whose fr_transaction_id is the bank's id, with its balance events, in one money
 * movement with the event's applied mark. A closed account (or a virtual account whose master is closed)
 * receives nothing: 422 ACCOUNT_NOT_ACTIVE, the event left failed; a frozen one still does (docs/payments.md "Account
 * and payee status"). The statuses are read as stored now and guarded unchanged until the movement commits.
 */
export class DepositLifecycle implements Lifecycle<'deposit'> {
  readonly resource = 'deposit';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly caches: ReadCaches,
  ) {}

  /** The answer is the deposit's statement line; under the reporter's Idempotency-Key it is stored with the money. */
  async apply(event: ProviderEvent, applied: AppliedMark): Promise<MovedRecord<TransactionRecordType>> {
    const { customerId, account } = await this.accountOf(event.payload.account);
    const funds = incomingFundsOf(event.payload, account.currency);
    requireCanReceive(account);
    const nowText = this.clock.now().toISOString();
    const credited = balanceKey(balanceAccountOf(account));
    const { balanceOf, ...line } = statementLine({
      customerId,
      account,
      direction: 'incoming',
      type: 'deposit',
      amountMinor: funds.amountMinor,
      status: 'completed',
      counterpart: external,
      // The provider that reported it: "Deposit (sandbox)" for the sandbox's simulation.
      description: `Deposit (${event.provider})`,
      reference: funds.reference,
      counterpartyName: funds.counterpartyName,
      frTransactionId: event.reference,
      at: nowText,
    });
    const movement = moneyMovement(customerId, nowText, 'deposit', line.id, [
      { account: { kind: 'system', code: 'clearing' }, asset: account.currency, amount: -funds.amountMinor },
      ...accountPostings(account, funds.amountMinor),
    ]);
    movement.work.statementLines.push({ ...line, balanceOf });
    movement.work.guards.push(...unchangedStatusGuards(account), applied.guard);
    await addBalanceEvents(this.storage, this.caches, movement, explainedBy(movement, line.id));
    const ownerBusinessId = account.record.fr_owner_business_id;
    const presented = (before: bigint, after: bigint) =>
      presentTransaction(historyValuesOf({ ...line, customer_seq: 0n, balance_before_minor: before, balance_after_minor: after }), ownerBusinessId);
    if (applied.answer) {
      // The line as the API presents it, its balances written in once they have moved.
      const balanceBefore = new BalanceNumber(credited, 'before', account.currency);
      const balanceAfter = new BalanceNumber(credited, 'after', account.currency);
      const record = { ...presented(0n, 0n), balance_before: balanceBefore, balance_after: balanceAfter };
      movement.work.answer = plannedAnswer(applied.answer, 201, record, [balanceBefore, balanceAfter]);
    }
    const result = await executeMoneyMovement(this.storage, movement);
    const balance = result.balances.get(credited)!;
    return { record: presented(balance.before, balance.after), answerStored: result.answerBody !== null };
  }

  /** The account the bank credits, by its provider id, with its statuses as stored now (NOT_FOUND for an id no account has). */
  private async accountOf(reference: unknown): Promise<{ customerId: string; account: CustomerAccount }> {
    if (typeof reference !== 'string') throw validationError([{ location: 'body', path: '/payload/account', reason: 'must be the provider id of an account' }], 'The provider event is not valid.');
    const owned = (await fiatAccountByReference(this.storage.db, reference)) ?? (await virtualAccountByReference(this.storage.db, reference));
    const account = owned && (await currentCustomerAccount(this.storage, owned.customer_id, owned.id));
    if (!owned || !account) throw notFound('account');
    return { customerId: owned.customer_id, account };
  }
}
