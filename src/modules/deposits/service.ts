import type { Clock } from '../../clock.js';
import { notFound, validationError } from '../../errors.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { idempotencyKeyLost } from '../../ledger/ledger.js';
import { balanceKey } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { external, statementLine } from '../../ledger/statement-lines.js';
import { BalanceNumber, plannedAnswer, type KeyedAnswer, type MovedRecord } from '../../ledger/unit-of-work.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { narrowIdempotentReadScope } from '../../storage/idempotency-answers.js';
import { requireScope } from '../api-keys/index.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { historyValuesOf } from '../transactions/index.js';
import { presentTransaction } from '../transactions/index.js';
import type { TransactionRecordType } from '../transactions/index.js';
import { addBalanceEvents, findCustomerAccount } from '../account-lookup.js';
import { accountPostings, balanceAccountOf, explainedBy, requireCanReceive } from '../accounts/index.js';

export interface DepositInput {
  amount: number;
  reference?: string;
  counterpartyName?: string;
}

/**
 * Sandbox funding (docs/architecture.md, Sandbox simulation): money arriving from outside, into a fiat account or — by its IBAN — a virtual
 * account (crediting the virtual account and its master). One completed incoming transaction per deposit.
 */
export class DepositService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly caches: ReadCaches,
  ) {}

  /**
   * Credits the account. Under an Idempotency-Key (`key`), the answer — the deposit's statement line — is stored by
   * the same money movement that moves the money (http/idempotency.ts); what reading it takes is narrowed to the
   * account's read scope.
   */
  async deposit(caller: AuthenticatedKey, accountId: string, input: DepositInput, key?: KeyedAnswer): Promise<MovedRecord<TransactionRecordType>> {
    const account = await findCustomerAccount(this.storage, this.caches, caller.customerId, accountId.toLowerCase());
    if (!account) throw notFound('account');
    requireScope(caller.scopes, account.kind === 'virtual_account' ? 'virtual-accounts:write' : 'fiat-accounts:write');
    // From here on the answer shows this account: a reuse of the key reads it only with the account's read scope.
    const readScope = account.kind === 'virtual_account' ? 'virtual-accounts:read' : 'fiat-accounts:read';
    if (key && !(await narrowIdempotentReadScope(this.storage.db, key, readScope))) throw idempotencyKeyLost();
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
    const { balanceOf, ...line } = statementLine({
      customerId: caller.customerId,
      account,
      direction: 'incoming',
      type: 'deposit',
      amountMinor,
      status: 'completed',
      counterpart: external,
      description: 'Deposit (sandbox)',
      reference: input.reference ?? null,
      counterpartyName: input.counterpartyName ?? null,
      at: nowText,
    });
    const movement = moneyMovement(caller.customerId, nowText, 'deposit', line.id, [
      { account: { kind: 'system', code: 'clearing' }, asset: account.currency, amount: -amountMinor },
      ...accountPostings(account, amountMinor),
    ]);
    movement.work.statementLines.push({ ...line, balanceOf });
    await addBalanceEvents(this.storage, this.caches, movement, explainedBy(movement, line.id));
    const presented = (before: bigint, after: bigint) =>
      presentTransaction(historyValuesOf({ ...line, customer_seq: 0n, balance_before_minor: before, balance_after_minor: after }), caller.frOwnerBusinessId);
    if (key) {
      // The line as the API presents it, its balances written in once they have moved.
      const balanceBefore = new BalanceNumber(credited, 'before', account.currency);
      const balanceAfter = new BalanceNumber(credited, 'after', account.currency);
      const record = { ...presented(0n, 0n), balance_before: balanceBefore, balance_after: balanceAfter };
      movement.work.answer = plannedAnswer(key, 201, record, [balanceBefore, balanceAfter]);
    }
    const result = await executeMoneyMovement(this.storage, movement);
    const balance = result.balances.get(credited)!;
    return { record: presented(balance.before, balance.after), answerStored: result.answerBody !== null };
  }
}
