import { sql } from 'kysely';
import { DomainError, errorStatusByCode, type ErrorCode } from '../errors.js';
import type { Storage } from '../storage/database.js';
import { accountNotActive, idempotencyKeyLost, insufficientFunds, postingAccountId, walletCeilingReached, walletFundsShort } from './ledger.js';
import type { MoneyMovement, MovementResult } from './money-movement.js';
import type { Guard } from './unit-of-work.js';

/**
 * Executes a money movement on PostgreSQL in one round trip: the ledger entry and its unit of work go together as one
 * JSON parameter to the function `apply_money_plan` (src/storage/sql/apply-money-plan.sql), which runs it inside the
 * statement. No row lock outlives the statement, so a busy account is locked for the time the database needs, not
 * for network round trips.
 */

const bigintAsText = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

/**
 * The movement as the function reads it (one flat "plan" object): bigints as decimal strings, postings with their
 * account id, the entry's journal row only when it has postings, statement lines as `history`.
 */
function movementJson({ customerId, createdAt, entry, work }: MoneyMovement): string {
  const journal =
    entry.postings.length === 0
      ? null
      : {
          id: entry.id,
          kind: entry.kind,
          referenceId: entry.referenceId,
          postings: entry.postings.map((posting) => ({ accountKind: posting.account.kind, accountId: postingAccountId(posting), asset: posting.asset, amount: posting.amount })),
        };
  const wire = {
    customerId,
    createdAt,
    guards: work.guards.map(({ table, match, set, error, message }) => ({ table, match, set, error, message })),
    holds: entry.holds,
    moves: entry.moves,
    journal,
    rows: work.rows,
    history: work.statementLines,
    historyUpdates: work.statementLineUpdates,
    events: work.events,
    response: work.answer,
  };
  return JSON.stringify(wire, bigintAsText);
}

interface FunctionResult {
  firstSequence: string | null;
  balances: Record<string, { before: string; after: string; status: string | null }>;
  responseBody: string | null;
}

/** A refusal raised by the function (SQLSTATE P0001, message the error code, detail JSON) as the DomainError it is. */
function domainErrorOf(error: unknown, guards: readonly Guard[]): DomainError | undefined {
  const raised = error as { code?: string; message?: string; detail?: string };
  if (raised?.code !== 'P0001' || raised.message === undefined || !(raised.message in errorStatusByCode)) return undefined;
  const code = raised.message as ErrorCode;
  const detail = raised.detail ? (JSON.parse(raised.detail) as Record<string, string>) : {};
  if (code === 'INSUFFICIENT_FUNDS' && detail.account_id) return insufficientFunds(detail.account_id);
  if (code === 'ACCOUNT_NOT_ACTIVE' && detail.account_id && detail.status) return accountNotActive(detail.account_id, detail.status);
  if (code === 'INSUFFICIENT_FUNDS' && detail.wallet_id && detail.asset) return walletFundsShort(detail.wallet_id, detail.asset);
  if (code === 'LIMIT_EXCEEDED' && detail.wallet_id && detail.asset) return walletCeilingReached(detail.wallet_id, detail.asset);
  if (code === 'IDEMPOTENCY_KEY_IN_USE') return idempotencyKeyLost();
  const guard = guards.find((candidate) => candidate.error === code && candidate.message === detail.message);
  return new DomainError(code, guard?.message ?? detail.message ?? 'The request was refused.', guard?.details ?? {});
}

export async function applyMovementOnPostgres(storage: Storage, movement: MoneyMovement): Promise<MovementResult> {
  let result: FunctionResult;
  try {
    const { rows } = await sql<{ result: FunctionResult }>`select apply_money_plan(${movementJson(movement)}::jsonb) as result`.execute(storage.db);
    result = rows[0]!.result;
  } catch (error) {
    throw domainErrorOf(error, movement.work.guards) ?? error;
  }
  const balances: MovementResult['balances'] = new Map();
  for (const [key, { before, after, status }] of Object.entries(result.balances)) balances.set(key, { before: BigInt(before), after: BigInt(after), status: status ?? null });
  return { balances, firstSequence: result.firstSequence === null ? null : BigInt(result.firstSequence), answerBody: result.responseBody };
}
