import { BalanceNumber, MovedAccountStatus, plannedEvent, type MoneyPlan } from '../../ledger/money-plan.js';
import type { Storage } from '../../storage/database.js';
import { findCustomerAccount } from './customer-accounts.js';

/**
 * `fiat_account.balance_updated` / `virtual_account.balance_updated` for every customer account a plan moves, in the
 * order it moves them. Like every event, `data` is the account's record as GET answers it after the change (its
 * balance, status and updated_at written by the executor), with two additive fields: `previous_balance` and the
 * `transaction_id` of the history record that explains the change (docs/webhooks.md "Events").
 */
export async function addBalanceEvents(storage: Storage, plan: MoneyPlan, transactionIdByAccount: Map<string, string>): Promise<void> {
  const seen = new Set<string>();
  for (const move of plan.moves) {
    if (move.kind === 'wallet' || seen.has(move.key)) continue;
    seen.add(move.key);
    const account = await findCustomerAccount(storage, plan.customerId, move.id, [move.kind]);
    if (!account) throw new Error(`a plan of customer ${plan.customerId} moves ${move.key}, which is not theirs`);
    plan.events.push(
      plannedEvent(
        plan.customerId,
        move.kind === 'fiat_account' ? 'fiat_account.balance_updated' : 'virtual_account.balance_updated',
        {
          ...account.record,
          balance: new BalanceNumber(move.key, 'after', move.asset),
          status: new MovedAccountStatus(move.key),
          updated_at: plan.createdAt,
          previous_balance: new BalanceNumber(move.key, 'before', move.asset),
          transaction_id: transactionIdByAccount.get(move.key) ?? null,
        },
        plan.createdAt,
      ),
    );
  }
}
