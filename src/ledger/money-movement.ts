import { retryTransient, type Storage } from '../storage/database.js';
import { applyPlanOnPostgres } from './apply-movement-postgres.js';
import { applyPlanOnSqlite } from './apply-movement-sqlite.js';
import type { MoneyPlan, PlanResult } from './ledger-entry.js';

/**
 * The one path every balance-changing operation takes (docs/ledger.md "The money path"): the operation builds a
 * MoneyPlan, and this executes it atomically — on PostgreSQL in one round trip (apply-plan-postgres.ts), retried on
 * serialization failures and deadlocks, a few per customer at a time (Storage.perCustomer); on SQLite as the statements
 * of one grouped transaction (Storage.transaction).
 * Either everything in the plan happens (balances, journal, history, domain rows, events, the idempotency key) or
 * nothing does.
 */
export async function executeMoneyPlan(storage: Storage, plan: MoneyPlan): Promise<PlanResult> {
  if (storage.dialect === 'sqlite') return storage.transaction((trx) => applyPlanOnSqlite(trx, plan));
  // One statement, outside Storage.transaction: it tells of its commit itself.
  const result = await storage.perCustomer(plan.customerId, () => retryTransient('postgres', () => applyPlanOnPostgres(storage, plan)));
  storage.committed.notify();
  return result;
}
