import { retryTransient, type Storage } from '../storage/database.js';
import { applyMovementOnPostgres } from './apply-movement-postgres.js';
import { applyMovementOnSqlite } from './apply-movement-sqlite.js';
import { ledgerEntry, type Hold, type LedgerEntry, type Posting } from './ledger-entry.js';
import { newUnitOfWork, type UnitOfWork } from './unit-of-work.js';

/**
 * The one path every balance-changing operation takes (docs/ledger.md "The money path"): a money movement is a ledger
 * entry (ledger-entry.ts) and the unit of work written with it (unit-of-work.ts), executed atomically — on PostgreSQL
 * in one round trip (apply-movement-postgres.ts), retried on serialization failures and deadlocks, a few per customer
 * at a time (Storage.perCustomer); on SQLite as the statements of one member of the group commit (Storage.transaction).
 * Either everything happens (balances, journal, statement lines, domain rows, events, the idempotency key) or
 * nothing does.
 */
export interface MoneyMovement {
  customerId: string;
  /** When it happens: the time every row it writes carries. */
  createdAt: string;
  entry: LedgerEntry;
  work: UnitOfWork;
}

/** One balance the movement moved: before and after, and the status of the account moved (null for a wallet). */
export interface MovedBalance {
  before: bigint;
  after: bigint;
  status: string | null;
}

/** What the executor learned: each moved balance, the first statement line's sequence number, the stored answer. */
export interface MovementResult {
  balances: Map<string, MovedBalance>;
  firstSequence: bigint | null;
  /** The stored answer's body, its values filled in, when the unit of work had one. */
  answerBody: string | null;
}

/**
 * A movement of `customerId` at `createdAt`: the entry's postings (checked: they balance per asset) and holds, and an
 * empty unit of work to fill in. A lifecycle that applies a provider's outcome builds one the same way.
 */
export function moneyMovement(customerId: string, createdAt: string, kind: string, referenceId: string, postings: Posting[], holds: Hold[] = []): MoneyMovement {
  return { customerId, createdAt, entry: ledgerEntry(kind, referenceId, postings, holds), work: newUnitOfWork() };
}

export async function executeMoneyMovement(storage: Storage, movement: MoneyMovement): Promise<MovementResult> {
  if (storage.dialect === 'sqlite') return storage.transaction((trx) => applyMovementOnSqlite(trx, movement));
  // One statement, outside Storage.transaction: it tells of its commit itself.
  const result = await storage.perCustomer(movement.customerId, () => retryTransient('postgres', () => applyMovementOnPostgres(storage, movement)));
  storage.committed.notify();
  return result;
}
