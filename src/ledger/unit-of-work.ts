import { randomInt } from 'node:crypto';
import { newId } from '../ids.js';
import type { ErrorCode } from '../errors.js';
import type { EventType } from '../events/catalog.js';
import type { KeyHold } from '../storage/idempotency-answers.js';
import type { OtcOrdersTable, PaymentsTable, SandboxTimersTable, TransactionsTable, WalletTransfersTable } from '../storage/tables.js';
import { scaleOf, type Asset } from './assets.js';

/**
 * The domain half of a money movement (docs/ledger.md "The money path", docs/glossary.md): what is written with
 * the ledger entry, in the same database transaction — the guards that must hold, the domain rows, the statement
 * lines and their status updates, the outbox events and, under an Idempotency-Key, the stored answer. Values known
 * only once the balances have moved (a statement line's sequence number and balances, a balance in an event or an
 * answer) are references the executor fills in.
 */

type Scalar = string | number | bigint | null;

/** A conditional single-row update: `set` where every column of `match` equals its value; 0 rows fails the movement. */
export interface Guard {
  table: string;
  match: Record<string, Scalar>;
  set: Record<string, Scalar>;
  error: ErrorCode;
  /** A sentence for the client when the guard fails, and the error's details. */
  message: string;
  details: Record<string, unknown>;
}

/**
 * A statement line (a row of `transactions`, what GET /transactions lists) as statement-lines.ts builds it: the
 * executor numbers it and gives it the before and after of the balance `balanceOf` names.
 */
export type PlannedStatementLine = Omit<TransactionsTable, 'customer_seq' | 'balance_before_minor' | 'balance_after_minor'> & {
  balanceOf: string;
};

/** A status change of an earlier statement line (a pending payment's line completing). */
interface StatementLineUpdate {
  id: string;
  status: string;
  completed_at: string | null;
  updated_at: string;
}

/**
 * A value of a payload known only once the balance has moved: `placeholder` (as it stands in the text) is replaced by
 * the balance before or after as a JSON number of its asset, or by the moved account's status as a JSON string.
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
 * movement fails (IDEMPOTENCY_KEY_IN_USE) unless the reservation is still this attempt's, so the money is committed
 * with the key or not at all, and the stored answer is exactly what the client is sent.
 */
export interface PlannedAnswer extends KeyHold {
  status: number;
  body: string;
  numbers: PayloadValue[];
}

/**
 * What the unit of work needs to store a request's answer: the key this attempt holds, and the route's serializer
 * of its response schema (the text it sends is the text stored, so a replay is byte for byte the first answer).
 * Without one (a caller outside a route), JSON.stringify writes it.
 */
export interface KeyedAnswer extends KeyHold {
  serialize?(status: number, payload: unknown): string;
}

type DomainRow =
  | { table: 'payments'; values: PaymentsTable }
  | { table: 'wallet_transfers'; values: WalletTransfersTable }
  | { table: 'otc_orders'; values: OtcOrdersTable }
  | { table: 'sandbox_timers'; values: SandboxTimersTable };

/**
 * Rows a provider that answers on a timer of its own (the sandbox) writes with a new resource, in the unit of work that
 * creates it, so neither exists without the other; none for any other provider.
 */
export type NewResourceRows = (id: string, customerId: string, now: Date) => Promise<DomainRow[]>;

export const noRows: NewResourceRows = async () => [];

export interface UnitOfWork {
  guards: Guard[];
  /** Whole rows of the domain tables a movement may insert into. */
  rows: DomainRow[];
  statementLines: PlannedStatementLine[];
  statementLineUpdates: StatementLineUpdate[];
  events: PlannedEvent[];
  answer: PlannedAnswer | null;
}

export function newUnitOfWork(): UnitOfWork {
  return { guards: [], rows: [], statementLines: [], statementLineUpdates: [], events: [], answer: null };
}

/**
 * A number of a payload that is a balance, before or after the movement, as a JSON number of its asset. It stands in
 * a presented record where the number goes; whatever writes the record (JSON.stringify, a route's serializer) reads
 * it as a number through toJSON or valueOf, which a template sets to a sentinel the executor replaces.
 */
export class BalanceNumber {
  sentinel = Number.NaN;
  constructor(
    readonly account: string,
    readonly which: 'before' | 'after',
    readonly asset: Asset,
  ) {}
  toJSON(): number {
    return written(this.sentinel);
  }
  valueOf(): number {
    return written(this.sentinel);
  }
}

/** The status of an account the movement moves, as the moving statement left it: written into a payload as a JSON string. */
export class MovedAccountStatus {
  sentinel = Number.NaN;
  constructor(readonly account: string) {}
  toJSON(): number {
    return written(this.sentinel);
  }
}

/** A fillable written outside the template that knows it would come out as `null`: refused loudly instead. */
function written(sentinel: number): number {
  if (Number.isNaN(sentinel)) throw new Error('a balance or status to fill in was written outside its template: list it in the fillables');
  return sentinel;
}

type Fillable = BalanceNumber | MovedAccountStatus;

/**
 * Sentinels are negative integers of 15 digits from a random start: no balance, amount or fee is negative, and a
 * sentinel is checked to occur exactly once in the text written, so a client's string cannot be mistaken for one.
 */
const sentinelBase = () => -(100_000_000_000_000 + randomInt(0, 2 ** 47));

/**
 * The text `write` makes of a value holding BalanceNumbers and MovedAccountStatuses (`fillables`, in any order):
 * each written as a sentinel number, whose text becomes the placeholder the executor replaces.
 */
function template(fillables: readonly Fillable[], write: () => string): { text: string; numbers: PayloadValue[] } {
  if (fillables.length === 0) return { text: write(), numbers: [] };
  const base = sentinelBase();
  fillables.forEach((fillable, index) => (fillable.sentinel = base - index));
  const text = write();
  const numbers = fillables.map((fillable): PayloadValue => {
    const placeholder = String(fillable.sentinel);
    const at = text.indexOf(placeholder);
    if (at < 0 || text.indexOf(placeholder, at + 1) >= 0) throw new Error(`a payload value is not written exactly once (${placeholder})`);
    return fillable instanceof BalanceNumber
      ? { placeholder, account: fillable.account, which: fillable.which, asset: fillable.asset, scale: scaleOf(fillable.asset) }
      : { placeholder, account: fillable.account, which: 'status', asset: null, scale: null };
  });
  for (const fillable of fillables) fillable.sentinel = Number.NaN;
  return { text, numbers };
}

/**
 * An outbox event: `data` is the resource as the API presents it, with `fillables` (the BalanceNumbers and
 * MovedAccountStatuses it holds) where values known only after the move go.
 */
export function plannedEvent(customerId: string, type: EventType, data: unknown, createdAt: string, fillables: readonly Fillable[] = []): PlannedEvent {
  const id = newId();
  const { text, numbers } = template(fillables, () => JSON.stringify({ id, type, created_at: createdAt, data }));
  return { id, customerId, type, createdAt, payload: text, numbers };
}

/** The stored answer `{ data }` of an idempotent operation, written by the route's serializer; `fillables` as for an event. */
export function plannedAnswer(key: KeyedAnswer, status: number, data: unknown, fillables: readonly Fillable[] = []): PlannedAnswer {
  const { text, numbers } = template(fillables, () => (key.serialize ? key.serialize(status, { data }) : JSON.stringify({ data })));
  return { customerId: key.customerId, key: key.key, attemptId: key.attemptId, status, body: text, numbers };
}

/**
 * What a money operation that may run under an Idempotency-Key returns: its record as the API presents it, which the
 * route serialises, and whether its answer was stored with the money (the route stores nothing more then).
 */
export interface MovedRecord<T> {
  record: T;
  answerStored: boolean;
}
