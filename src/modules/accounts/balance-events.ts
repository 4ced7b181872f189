import type { MoneyMovement } from '../../ledger/money-movement.js';
import { BalanceNumber, MovedAccountStatus, plannedEvent } from '../../ledger/unit-of-work.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { FindCustomerAccount } from './customer-accounts.js';

/**
 * `fiat_account.balance_updated` / `virtual_account.balance_updated` for every customer account a movement moves, in
 * the order it moves them. Like every event, `data` is the account's record as GET answers it after the change (its
 * balance, status and updated_at written by the executor), with two additive fields: `previous_balance` and the
 * `transaction_id` of the statement line that explains the change (docs/webhooks.md "Events"). The
 * records come from `findCustomerAccount`, cached, which the lookup hands in (customer-accounts.ts).
 */
export function balanceEventsAdder(findCustomerAccount: FindCustomerAccount) {
  return async function addBalanceEvents(storage: Storage, caches: ReadCaches, movement: MoneyMovement, statementLineIdByAccount: Map<string, string>): Promise<void> {
    const { customerId, createdAt } = movement;
    const seen = new Set<string>();
    for (const move of movement.entry.moves) {
      if (move.kind === 'wallet' || seen.has(move.key)) continue;
      seen.add(move.key);
      const account = await findCustomerAccount(storage, caches, customerId, move.id, [move.kind]);
      if (!account) throw new Error(`a movement of customer ${customerId} moves ${move.key}, which is not theirs`);
      const balance = new BalanceNumber(move.key, 'after', move.asset);
      const status = new MovedAccountStatus(move.key);
      const previousBalance = new BalanceNumber(move.key, 'before', move.asset);
      movement.work.events.push(
        plannedEvent(
          customerId,
          move.kind === 'fiat_account' ? 'fiat_account.balance_updated' : 'virtual_account.balance_updated',
          {
            ...account.record,
            balance,
            status,
            updated_at: createdAt,
            previous_balance: previousBalance,
            transaction_id: statementLineIdByAccount.get(move.key) ?? null,
          },
          createdAt,
          [balance, status, previousBalance],
        ),
      );
    }
  };
}

/** Every customer balance the movement moves, explained by the one statement line `lineId`. */
export function explainedBy(movement: MoneyMovement, lineId: string): Map<string, string> {
  return new Map(movement.entry.moves.map((move) => [move.key, lineId]));
}
