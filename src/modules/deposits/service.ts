import { notFound, validationError } from '../../errors.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { idempotencyKeyLost } from '../../ledger/ledger.js';
import { formatDecimal } from '../../ledger/money.js';
import type { KeyedAnswer, MovedRecord } from '../../ledger/unit-of-work.js';
import type { SandboxDeposits } from '../../providers/sandbox/deposits.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { narrowIdempotentReadScope } from '../../storage/idempotency-answers.js';
import { requireScope } from '../api-keys/index.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import type { TransactionRecordType } from '../transactions/index.js';
import { findCustomerAccount } from '../account-lookup.js';
import { requireCanReceive } from '../accounts/index.js';

export interface DepositInput {
  amount: number;
  reference?: string;
  counterpartyName?: string;
}

/**
 * Sandbox funding (docs/architecture.md, Sandbox simulation): money arriving from outside, into a fiat account or — by its IBAN — a virtual
 * account (crediting the virtual account and its master). The caller's request is checked here; the simulated bank
 * then reports the arrival (providers/sandbox/deposits.ts), which the deposit lifecycle applies at once
 * (lifecycle.ts): one completed incoming transaction per deposit.
 */
export class DepositService {
  constructor(
    private readonly storage: Storage,
    private readonly caches: ReadCaches,
    private readonly bank: SandboxDeposits,
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
    // A closed account receives nothing; a frozen one still does (docs/payments.md "Account and payee status"). The
    // lifecycle decides it again on the statuses as stored; refused here, the bank is not asked at all.
    requireCanReceive(account);
    let amountMinor: bigint;
    try {
      amountMinor = parseAmount(input.amount, account.currency);
    } catch (error) {
      if (error instanceof AmountError) throw validationError([{ location: 'body', path: '/amount', reason: error.message }]);
      throw error;
    }
    // The bank names the account by its own id of it.
    const frAccountId = 'fr_account_id' in account.record ? account.record.fr_account_id : account.record.fr_virtual_account_id;
    const amount = formatDecimal(amountMinor, account.currency);
    const moved = await this.bank.bankTransfer({ account: frAccountId, amount, currency: account.currency, reference: input.reference, counterpartyName: input.counterpartyName }, key);
    return moved as MovedRecord<TransactionRecordType>;
  }
}
