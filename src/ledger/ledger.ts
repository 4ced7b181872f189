import { DomainError } from '../errors.js';
import type { Posting } from './money-plan.js';

/**
 * The rules of the books (DESIGN §4 rule 3; docs/ledger.md). Only a money plan changes a balance: its postings sum
 * to zero per asset over fiat and system accounts, every debit of a customer account is a conditional update, and
 * CHECK constraints refuse an overdraft even if the code were wrong.
 */

export const insufficientFunds = (accountId: string) =>
  new DomainError('INSUFFICIENT_FUNDS', 'The balance of the account does not cover the amount plus the fee.', { account_id: accountId });

/** The reservation of the Idempotency-Key was taken over by a later attempt (its lease ran out): this one commits nothing. */
export const idempotencyKeyLost = () =>
  new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A later request with this Idempotency-Key took it over; this one changed nothing. Retry with the same key to get its answer.');

/** The account a posting row names: a customer account's id, or a system account per asset (`suspense:EUR`). */
export function postingAccountId(posting: Posting): string {
  return posting.account.kind === 'system' ? `${posting.account.code}:${posting.asset}` : posting.account.id;
}
