import { newId } from '../ids.js';
import { walletBalanceCeilingMinor } from '../config/limits.js';
import type { Asset, CryptoAsset } from './assets.js';

/**
 * The ledger half of a money movement (docs/ledger.md "The money path", docs/glossary.md): what happens to balances.
 * An entry is written as one journal row (`ledger_journal`) with its postings, per asset summing to zero; the
 * holds it takes or releases on wallets; and the balance moves its postings imply, each a conditional update that
 * refuses to overdraw (the balance conditions). The rows, events and answer that go with it are the unit of work
 * (unit-of-work.ts); money-movement.ts runs both at once.
 */

/** A balance that can move: the `key` names it in references. */
export type BalanceAccount =
  | { kind: 'fiat_account'; id: string }
  | { kind: 'virtual_account'; id: string; masterId: string }
  /** A wallet holds one balance per asset. */
  | { kind: 'wallet'; id: string; asset: CryptoAsset };

export type SystemAccountName = 'clearing' | 'fee_income' | 'suspense';

export type PostingAccount = BalanceAccount | { kind: 'system'; code: SystemAccountName };

export interface Posting {
  account: PostingAccount;
  asset: Asset;
  /** Signed base units: positive credits the account. */
  amount: bigint;
}

export function balanceKey(account: BalanceAccount): string {
  return account.kind === 'wallet' ? `wallet:${account.id}:${account.asset}` : `${account.kind}:${account.id}`;
}

/** A balance change the executor applies, in this order: conditional on the (available) balance staying non-negative. */
export interface BalanceMove {
  key: string;
  kind: BalanceAccount['kind'];
  id: string;
  masterId: string | null;
  asset: Asset;
  delta: bigint;
  /** Wallets: the balance may not grow beyond this (a credit beyond it fails with LIMIT_EXCEEDED). */
  ceiling: bigint | null;
}

/**
 * A change of what a wallet's pending transfers hold of one asset: positive reserves (only from what is available,
 * else INSUFFICIENT_FUNDS), negative releases. The balance itself does not change until the transfer settles.
 */
export interface Hold {
  walletId: string;
  asset: CryptoAsset;
  delta: bigint;
}

export interface LedgerEntry {
  /** The journal row's id, kind and the business object it is about (a payment, an order, a transfer). */
  id: string;
  kind: string;
  referenceId: string;
  /** Non-zero postings only. An entry without postings (a hold alone) writes no journal row. */
  postings: Posting[];
  holds: Hold[];
  /** The balance moves the postings imply, in application order. */
  moves: BalanceMove[];
}

/** Virtual-account debits release the master's allocation before the master is debited; credits go the other way. */
function applicationOrder(posting: Posting): number {
  if (posting.account.kind === 'virtual_account') return posting.amount < 0n ? 0 : 2;
  return 1;
}

/**
 * The moves a set of postings implies, checked: postings of each asset sum to zero over fiat and system accounts
 * (a virtual account's share moves inside its master, so it must be paired with an equal master posting).
 */
export function movesOf(postings: readonly Posting[]): BalanceMove[] {
  const totals = new Map<Asset, bigint>();
  for (const posting of postings) {
    if (posting.account.kind !== 'virtual_account') totals.set(posting.asset, (totals.get(posting.asset) ?? 0n) + posting.amount);
  }
  for (const [asset, total] of totals) if (total !== 0n) throw new Error(`postings in ${asset} do not balance (${total})`);
  const moves: Posting[] = [];
  for (const posting of postings) {
    const account = posting.account;
    if (account.kind === 'virtual_account') {
      const paired = postings.some((other) => other.account.kind === 'fiat_account' && other.account.id === account.masterId && other.amount === posting.amount && other.asset === posting.asset);
      if (!paired) throw new Error(`a posting moves virtual account ${account.id} without its master`);
    }
    if (account.kind === 'wallet' && account.asset !== posting.asset) throw new Error(`a ${posting.asset} posting names the ${account.asset} balance of wallet ${account.id}`);
    if (posting.amount !== 0n && account.kind !== 'system') moves.push(posting);
  }
  if (moves.length > 1) moves.sort((left, right) => applicationOrder(left) - applicationOrder(right));
  return moves.map((posting) => {
    const account = posting.account as BalanceAccount;
    return {
      key: balanceKey(account),
      kind: account.kind,
      id: account.id,
      masterId: account.kind === 'virtual_account' ? account.masterId : null,
      asset: posting.asset,
      delta: posting.amount,
      ceiling: account.kind === 'wallet' ? walletBalanceCeilingMinor : null,
    };
  });
}

/** A ledger entry of `kind` about `referenceId`: its postings checked, zero postings (a fee of 0) left out. */
export function ledgerEntry(kind: string, referenceId: string, postings: Posting[], holds: Hold[] = []): LedgerEntry {
  return { id: newId(), kind, referenceId, postings: postings.filter((posting) => posting.amount !== 0n), holds, moves: movesOf(postings) };
}

/** An entry that only takes or releases holds: no posting, so no journal row. */
export function holdsOnly(kind: string, referenceId: string, holds: Hold[]): LedgerEntry {
  return ledgerEntry(kind, referenceId, [], holds);
}
