import { DomainError } from '../errors.js';
import type { Posting } from './ledger-entry.js';

/**
 * The rules of the books (DESIGN §4 rule 3; docs/ledger.md). Only a money movement changes a balance: its postings sum
 * to zero per asset over fiat and system accounts, every debit of a customer account is a conditional update, and
 * CHECK constraints refuse an overdraft even if the code were wrong.
 */

export const insufficientFunds = (accountId: string) =>
  new DomainError('INSUFFICIENT_FUNDS', 'The balance of the account does not cover the amount plus the fee.', { account_id: accountId });

/**
 * An account whose status refuses the movement (docs/payments.md "Account and payee status"): money leaves a fiat or
 * virtual account only while it is active, and arrives in one only while it is not closed; a virtual account's
 * master counts too, and `account_id` names whichever refused. The one builder of this error: the checks made when
 * an operation loads its accounts, and the statement that debits (which names no `subject`), use it alike.
 */
export const accountNotActive = (accountId: string, status: string, subject = 'The account', action: 'send' | 'receive' = 'send') =>
  new DomainError('ACCOUNT_NOT_ACTIVE', `${subject} is ${status}: it cannot ${action} money.`, { account_id: accountId, status });

/** A wallet's available balance of an asset (its balance less what pending transfers hold) is short of the amount. */
export const walletFundsShort = (walletId: string, asset: string) =>
  new DomainError('INSUFFICIENT_FUNDS', `The available ${asset} balance of the wallet does not cover the amount.`, { wallet_id: walletId, asset });

/** A credit would take a wallet's balance beyond its ceiling (config/limits.ts walletBalanceCeilingMinor). */
export const walletCeilingReached = (walletId: string, asset: string) =>
  new DomainError('LIMIT_EXCEEDED', `The ${asset} balance of the wallet would exceed the largest balance a wallet holds.`, { wallet_id: walletId, asset });

/** The reservation of the Idempotency-Key was taken over by a later attempt (its lease ran out): this one commits nothing. */
export const idempotencyKeyLost = () =>
  new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A later request with this Idempotency-Key took it over; this one changed nothing. Retry with the same key to get its answer.');

/** The account a posting row names: a customer account's id, or a system account per asset (`suspense:EUR`). */
export function postingAccountId(posting: Posting): string {
  return posting.account.kind === 'system' ? `${posting.account.code}:${posting.asset}` : posting.account.id;
}
