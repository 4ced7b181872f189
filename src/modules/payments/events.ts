import type { NewEvent } from '../../events/outbox.js';
import { toJsonNumber, type Currency } from '../../ledger/money.js';
import type { BalanceChanges } from '../../ledger/ledger.js';

/**
 * `fiat_account.balance_updated` / `virtual_account.balance_updated` for every customer balance a journal entry
 * changed, to append in the same transaction. The payload names the account, its new and previous balance and
 * the transaction record that explains the change.
 */
export function balanceEvents(
  customerId: string,
  currency: string,
  changes: BalanceChanges,
  transactionIdByAccount: Map<string, string>,
  createdAt: Date,
): NewEvent[] {
  return [...changes].map(([key, change]) => {
    const [kind, accountId] = key.split(':') as ['fiat_account' | 'virtual_account', string];
    return {
      customerId,
      type: kind === 'fiat_account' ? 'fiat_account.balance_updated' : 'virtual_account.balance_updated',
      data: {
        [kind === 'fiat_account' ? 'fiat_account_id' : 'virtual_account_id']: accountId,
        currency,
        balance: toJsonNumber(change.afterMinor, currency as Currency),
        previous_balance: toJsonNumber(change.beforeMinor, currency as Currency),
        transaction_id: transactionIdByAccount.get(key) ?? null,
      },
      createdAt,
    };
  });
}
