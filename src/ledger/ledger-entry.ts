import { randomUUID } from 'node:crypto';
import { newId } from '../ids.js';
import type { ErrorCode } from '../errors.js';
import type { EventType } from '../events/catalog.js';
import { walletBalanceCeilingMinor } from '../config/limits.js';
import type { OtcOrdersTable, PaymentsTable, TransactionsTable, WalletTransfersTable } from '../storage/tables.js';
import { scaleOf, type Asset, type CryptoAsset } from './assets.js';

/**
 * A money movement as data (docs/ledger.md "The money path"). Every balance-changing operation — payments,
 * deposits, settlements, and later wallet transfers and OTC orders — describes what it does as one MoneyPlan, and
 * ledger/money-transaction.ts executes it atomically: in one round trip on PostgreSQL (the function
 * `apply_money_plan`, created by migration 0006) and as statements of one transaction on SQLite. Values known only
 * while the plan runs (a history sequence number, a balance before and after) are written as references that the
 * executor fills in.
 *
 * Execution order, the same on both databases:
 * 1. the customer's history sequence (its row lock first, so a customer's operations never deadlock);
 * 2. the guards: conditional updates that must change exactly one row, else the plan fails with their error;
 * 3. the holds (a wallet's reservations taken from what is available, or released), then the balance moves, each
 *    conditional on the (available) balance staying non-negative (else INSUFFICIENT_FUNDS);
 * 4. the journal and its postings; 5. the domain rows; 6. the history records and their status updates;
 * 7. the outbox events.
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

/** A balance change the executor applies, in this order. */
export interface PlannedMove {
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
export interface PlannedHold {
  walletId: string;
  asset: CryptoAsset;
  delta: bigint;
}

export type Scalar = string | number | bigint | null;

/** A conditional single-row update: `set` where every column of `match` equals its value; 0 rows fails the plan. */
export interface Guard {
  table: string;
  match: Record<string, Scalar>;
  set: Record<string, Scalar>;
  error: ErrorCode;
  /** A sentence for the client when the guard fails, and the error's details. */
  message: string;
  details: Record<string, unknown>;
}

/** A history record (GET /transactions), numbered and given the before/after of one moved balance by the executor. */
export type PlannedHistoryRecord = Omit<TransactionsTable, 'customer_seq' | 'balance_before_minor' | 'balance_after_minor'> & {
  /** The key of the balance whose before and after the record shows. */
  balanceOf: string;
};

export interface PlannedHistoryUpdate {
  id: string;
  status: string;
  completed_at: string | null;
  updated_at: string;
}

/**
 * A value of a payload known only once the balance has moved: `placeholder` (with its quotes) is replaced by the
 * balance before or after as a JSON number of its asset, or by the moved account's status as a JSON string.
 */
export interface PayloadValue {
  placeholder: string;
  account: string;
  which: 'before' | 'after' | 'status';
  asset: Asset | null;
  scale: number | null;
}

export interface PlannedEvent {
  id: string;
  customerId: string;
  type: EventType;
  createdAt: string;
  payload: string;
  numbers: PayloadValue[];
}

/**
 * The answer of an operation run under an Idempotency-Key (http/idempotency.ts), stored with the money it moved: the
 * plan fails (IDEMPOTENCY_KEY_IN_USE) unless the reservation is still this attempt's, so the money is committed with
 * the key or not at all, and the stored answer is exactly what the client is sent.
 */
export interface PlannedResponse {
  customerId: string;
  key: string;
  attemptId: string;
  status: number;
  body: string;
  numbers: PayloadValue[];
}

export type PlannedRow =
  | { table: 'payments'; values: PaymentsTable }
  | { table: 'wallet_transfers'; values: WalletTransfersTable }
  | { table: 'otc_orders'; values: OtcOrdersTable };

export interface MoneyPlan {
  customerId: string;
  createdAt: string;
  guards: Guard[];
  holds: PlannedHold[];
  moves: PlannedMove[];
  journal: { id: string; kind: string; referenceId: string; postings: Posting[] } | null;
  /** Whole rows of the domain tables a plan may insert into (payments and wallet transfers by statements compiled once, others built per call). */
  rows: PlannedRow[];
  history: PlannedHistoryRecord[];
  historyUpdates: PlannedHistoryUpdate[];
  events: PlannedEvent[];
  response: PlannedResponse | null;
}

/** One balance the plan moved: before and after, and the status of the account moved (null for a wallet). */
export interface MovedBalance {
  before: bigint;
  after: bigint;
  status: string | null;
}

/** What the executor learned: each moved balance, the first history sequence number, the answer. */
export interface PlanResult {
  balances: Map<string, MovedBalance>;
  firstSequence: bigint | null;
  /** The stored answer's body, numbers filled in, when the plan had a response. */
  responseBody: string | null;
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
export function movesOf(postings: readonly Posting[]): PlannedMove[] {
  const totals = new Map<Asset, bigint>();
  for (const posting of postings) {
    if (posting.account.kind !== 'virtual_account') totals.set(posting.asset, (totals.get(posting.asset) ?? 0n) + posting.amount);
  }
  for (const [asset, total] of totals) if (total !== 0n) throw new Error(`postings in ${asset} do not balance (${total})`);
  for (const posting of postings) {
    if (posting.account.kind !== 'virtual_account') continue;
    const virtual = posting.account;
    const paired = postings.some((other) => other.account.kind === 'fiat_account' && other.account.id === virtual.masterId && other.amount === posting.amount && other.asset === posting.asset);
    if (!paired) throw new Error(`a posting moves virtual account ${virtual.id} without its master`);
  }
  for (const posting of postings) {
    if (posting.account.kind === 'wallet' && posting.account.asset !== posting.asset) throw new Error(`a ${posting.asset} posting names the ${posting.account.asset} balance of wallet ${posting.account.id}`);
  }
  return [...postings]
    .filter((posting) => posting.amount !== 0n && posting.account.kind !== 'system')
    .sort((left, right) => applicationOrder(left) - applicationOrder(right))
    .map((posting) => {
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

/** A number of an event payload that is a balance, before or after the movement, as a JSON number of its asset. */
export class BalanceNumber {
  constructor(
    readonly account: string,
    readonly which: 'before' | 'after',
    readonly asset: Asset,
  ) {}
}

/** The status of an account the plan moves, as the moving statement left it: written into a payload as a JSON string. */
export class MovedAccountStatus {
  constructor(readonly account: string) {}
}

/**
 * JSON text of `value` in which every BalanceNumber and MovedAccountStatus is a placeholder that cannot occur in real
 * data (a fresh nonce each time); the executor replaces each with its value once the balance has moved.
 */
function template(value: unknown): { text: string; numbers: PayloadValue[] } {
  const nonce = randomUUID();
  const numbers: PayloadValue[] = [];
  const text = JSON.stringify(value, (_key, item: unknown) => {
    if (!(item instanceof BalanceNumber) && !(item instanceof MovedAccountStatus)) return item;
    const placeholder = `@moved:${nonce}:${numbers.length}@`;
    numbers.push(
      item instanceof BalanceNumber
        ? { placeholder: JSON.stringify(placeholder), account: item.account, which: item.which, asset: item.asset, scale: scaleOf(item.asset) }
        : { placeholder: JSON.stringify(placeholder), account: item.account, which: 'status', asset: null, scale: null },
    );
    return placeholder;
  });
  return { text, numbers };
}

/** An outbox event of the plan: `data` is the resource as the API presents it, BalanceNumber where a balance goes. */
export function plannedEvent(customerId: string, type: EventType, data: unknown, createdAt: string): PlannedEvent {
  const id = newId();
  const { text, numbers } = template({ id, type, created_at: createdAt, data });
  return { id, customerId, type, createdAt, payload: text, numbers };
}

/** The stored answer `{ data }` of an idempotent operation; BalanceNumber where a balance goes. */
export function plannedResponse(reservation: { customerId: string; key: string; attemptId: string }, status: number, data: unknown): PlannedResponse {
  const { text, numbers } = template({ data });
  return { ...reservation, status, body: text, numbers };
}

/** An empty plan to fill in. */
export function newPlan(customerId: string, createdAt: string): MoneyPlan {
  return { customerId, createdAt, guards: [], holds: [], moves: [], journal: null, rows: [], history: [], historyUpdates: [], events: [], response: null };
}

/** Adds the ledger entry (and the moves its postings imply) to the plan; postings of zero (a fee of 0) are left out. */
export function withJournal(plan: MoneyPlan, kind: string, referenceId: string, postings: Posting[]): MoneyPlan {
  plan.moves.push(...movesOf(postings));
  plan.journal = { id: newId(), kind, referenceId, postings: postings.filter((posting) => posting.amount !== 0n) };
  return plan;
}
