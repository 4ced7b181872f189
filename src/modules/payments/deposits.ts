import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { notFound, validationError } from '../../errors.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { postJournal } from '../../ledger/ledger.js';
import type { Currency } from '../../ledger/money.js';
import { providerId } from '../../providers/provider-ids.js';
import type { Storage } from '../../storage/database.js';
import { requireScope } from '../api-keys/scopes.js';
import type { AuthenticatedKey } from '../api-keys/service.js';
import { historyValuesOf } from '../transactions/history.js';
import { presentTransaction } from '../transactions/presenter.js';
import { allocateSequences, insertTransaction, type TransactionRow } from '../transactions/repository.js';
import type { TransactionRecordType } from '../transactions/schemas.js';
import { accountPostings, balanceKey, findCustomerAccount } from './accounts.js';
import { balanceEvents } from './events.js';
import { appendEvents } from '../../events/outbox.js';

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

  async deposit(caller: AuthenticatedKey, accountId: string, input: DepositInput): Promise<TransactionRecordType> {
    const account = await findCustomerAccount(this.storage.db, caller.customerId, accountId.toLowerCase());
    if (!account) throw notFound('account');
    requireScope(caller.scopes, account.kind === 'virtual_account' ? 'virtual-accounts:write' : 'fiat-accounts:write');
    let amountMinor: bigint;
    try {
      amountMinor = parseAmount(input.amount, account.currency as Currency);
    } catch (error) {
      if (error instanceof AmountError) throw validationError([{ location: 'body', path: '/amount', reason: error.message }]);
      throw error;
    }
    const now = this.clock.now();
    const nowText = now.toISOString();
    const id = randomUUID();
    let record: TransactionRow | undefined;
    await this.storage.db.transaction().execute(async (trx) => {
      const sequence = await allocateSequences(trx, caller.customerId, 1);
      const changes = await postJournal(trx, {
        customerId: caller.customerId,
        kind: 'deposit',
        referenceId: id,
        currency: account.currency,
        createdAt: nowText,
        postings: [{ kind: 'system', code: 'clearing', amountMinor: -amountMinor }, ...accountPostings(account, amountMinor)],
      });
      const change = changes.get(balanceKey(account));
      if (!change) throw new Error('the credited account has no balance change');
      record = {
        id,
        customer_id: caller.customerId,
        customer_seq: sequence,
        fr_transaction_id: providerId('txn'),
        transaction_type: 'deposit',
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
        description: 'Deposit (sandbox)',
        reference: input.reference ?? null,
        counterparty_name: input.counterpartyName ?? null,
        counterparty_account: null,
        fee_amount_minor: 0n,
        fee_currency: account.currency,
        payee_id: null,
        payment_id: null,
        balance_before_minor: change.beforeMinor,
        balance_after_minor: change.afterMinor,
        completed_at: nowText,
        created_at: nowText,
        updated_at: nowText,
      };
      await insertTransaction(trx, record);
      await appendEvents(trx, balanceEvents(caller.customerId, account.currency, changes, new Map([...changes.keys()].map((key) => [key, id])), now));
    });
    if (!record) throw new Error('deposit not recorded');
    return presentTransaction(historyValuesOf(record), caller.frOwnerBusinessId);
  }
}
