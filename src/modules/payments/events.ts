import type { FiatCurrency } from '../../ledger/assets.js';
import { BalanceNumber, plannedEvent, type MoneyPlan } from '../../ledger/money-plan.js';

/**
 * `fiat_account.balance_updated` / `virtual_account.balance_updated` for every customer balance a plan moves, in
 * the order it moves them. The payload names the account, its new and previous balance (filled in by the
 * executor) and the transaction record that explains the change.
 */
export function addBalanceEvents(plan: MoneyPlan, currency: FiatCurrency, transactionIdByAccount: Map<string, string>): void {
  const seen = new Set<string>();
  for (const move of plan.moves) {
    if (seen.has(move.key)) continue;
    seen.add(move.key);
    plan.events.push(
      plannedEvent(
        plan.customerId,
        move.kind === 'fiat_account' ? 'fiat_account.balance_updated' : 'virtual_account.balance_updated',
        {
          [move.kind === 'fiat_account' ? 'fiat_account_id' : 'virtual_account_id']: move.id,
          currency,
          balance: new BalanceNumber(move.key, 'after', currency),
          previous_balance: new BalanceNumber(move.key, 'before', currency),
          transaction_id: transactionIdByAccount.get(move.key) ?? null,
        },
        plan.createdAt,
      ),
    );
  }
}
