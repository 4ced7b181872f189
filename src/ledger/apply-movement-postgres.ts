import { sql } from 'kysely';
import { DomainError, errorStatusByCode, type ErrorCode } from '../errors.js';
import type { Storage } from '../storage/database.js';
import { accountNotActive, idempotencyKeyLost, insufficientFunds, postingAccountId, walletCeilingReached, walletFundsShort } from './ledger.js';
import type { MoneyPlan, PlanResult } from './ledger-entry.js';

/**
 * Executes a money plan on PostgreSQL in one round trip: the whole plan goes as one JSON parameter to the function
 * `apply_money_plan` (migration 0006, last replaced by 0014), which runs it inside the statement. No row lock outlives the statement, so a
 * busy account is locked for the time the database needs, not for network round trips.
 */

/** The plan as the function reads it: bigints as decimal strings, postings with their account id. */
function planJson(plan: MoneyPlan): string {
  const wire = {
    ...plan,
    journal: plan.journal && {
      ...plan.journal,
      postings: plan.journal.postings.map((posting) => ({
        accountKind: posting.account.kind,
        accountId: postingAccountId(posting),
        asset: posting.asset,
        amount: posting.amount,
      })),
    },
    guards: plan.guards.map(({ table, match, set, error, message }) => ({ table, match, set, error, message })),
  };
  return JSON.stringify(wire, (_key, value: unknown) => (typeof value === 'bigint' ? value.toString() : value));
}

interface FunctionResult {
  firstSequence: string | null;
  balances: Record<string, { before: string; after: string; status: string | null }>;
  responseBody: string | null;
}

/** A refusal raised by the function (SQLSTATE P0001, message the error code, detail JSON) as the DomainError it is. */
function domainErrorOf(error: unknown, plan: MoneyPlan): DomainError | undefined {
  const raised = error as { code?: string; message?: string; detail?: string };
  if (raised?.code !== 'P0001' || raised.message === undefined || !(raised.message in errorStatusByCode)) return undefined;
  const code = raised.message as ErrorCode;
  const detail = raised.detail ? (JSON.parse(raised.detail) as Record<string, string>) : {};
  if (code === 'INSUFFICIENT_FUNDS' && detail.account_id) return insufficientFunds(detail.account_id);
  if (code === 'ACCOUNT_NOT_ACTIVE' && detail.account_id && detail.status) return accountNotActive(detail.account_id, detail.status);
  if (code === 'INSUFFICIENT_FUNDS' && detail.wallet_id && detail.asset) return walletFundsShort(detail.wallet_id, detail.asset);
  if (code === 'LIMIT_EXCEEDED' && detail.wallet_id && detail.asset) return walletCeilingReached(detail.wallet_id, detail.asset);
  if (code === 'IDEMPOTENCY_KEY_IN_USE') return idempotencyKeyLost();
  const guard = plan.guards.find((candidate) => candidate.error === code && candidate.message === detail.message);
  return new DomainError(code, guard?.message ?? detail.message ?? 'The request was refused.', guard?.details ?? {});
}

export async function applyPlanOnPostgres(storage: Storage, plan: MoneyPlan): Promise<PlanResult> {
  let result: FunctionResult;
  try {
    const { rows } = await sql<{ result: FunctionResult }>`select apply_money_plan(${planJson(plan)}::jsonb) as result`.execute(storage.db);
    result = rows[0]!.result;
  } catch (error) {
    throw domainErrorOf(error, plan) ?? error;
  }
  const balances: PlanResult['balances'] = new Map();
  for (const [key, { before, after, status }] of Object.entries(result.balances)) balances.set(key, { before: BigInt(before), after: BigInt(after), status: status ?? null });
  return { balances, firstSequence: result.firstSequence === null ? null : BigInt(result.firstSequence), responseBody: result.responseBody };
}
