import { sql } from 'kysely';
import type { Storage } from '../storage/database.js';
import { ledgerProblemsShownMax } from '../config/limits.js';

export interface LedgerProblem {
  kind:
    | 'unbalanced_journal'
    | 'fiat_balance_mismatch'
    | 'virtual_balance_mismatch'
    | 'allocation_mismatch'
    | 'wallet_balance_mismatch'
    | 'wallet_reservation_mismatch';
  id: string;
  /** The asset the problem is in (a journal balances per asset). */
  asset?: string;
  expected: string;
  actual: string;
}

export interface LedgerReport {
  ok: boolean;
  checked: { journals: number; fiat_accounts: number; virtual_accounts: number; wallet_balances: number };
  /** Platform accounts (clearing, fee_income, suspense) per asset, in base units, from their postings. */
  system_balances_minor: Record<string, string>;
  problems: LedgerProblem[];
}

/**
 * Checks the ledger end to end: every journal entry balances in each of its assets; every fiat and virtual account
 * balance equals the sum of its postings; every master's allocation equals its virtual accounts' balances; every
 * wallet balance of an asset equals the sum of its postings in that asset, and its reservation the amounts of its
 * pending outgoing transfers. Reads only.
 */
export async function verifyLedger(storage: Storage): Promise<LedgerReport> {
  const { db } = storage;
  const problems: LedgerProblem[] = [];

  const unbalanced = await db
    .selectFrom('ledger_postings')
    .select(['journal_id', 'asset', (eb) => eb.fn.sum<bigint>('amount_minor').as('total')])
    .where('account_kind', '<>', 'virtual_account')
    .groupBy(['journal_id', 'asset'])
    .having((eb) => eb.fn.sum('amount_minor'), '<>', 0)
    .execute();
  for (const row of unbalanced) problems.push({ kind: 'unbalanced_journal', id: row.journal_id, asset: row.asset, expected: '0', actual: String(row.total) });

  const fiat = await db
    .selectFrom('fiat_accounts as account')
    .select([
      'account.id',
      'account.balance_minor',
      'account.allocated_minor',
      (eb) =>
        eb
          .selectFrom('ledger_postings')
          .select(sql<bigint>`coalesce(sum(amount_minor), 0)`.as('sum'))
          .where('account_kind', '=', 'fiat_account')
          .whereRef('account_id', '=', 'account.id')
          .as('posted'),
      (eb) =>
        eb
          .selectFrom('virtual_accounts')
          .select(sql<bigint>`coalesce(sum(balance_minor), 0)`.as('sum'))
          .whereRef('master_fiat_account_id', '=', 'account.id')
          .as('allocated'),
    ])
    .execute();
  for (const row of fiat) {
    if (BigInt(row.posted ?? 0) !== BigInt(row.balance_minor)) {
      problems.push({ kind: 'fiat_balance_mismatch', id: row.id, expected: String(row.posted ?? 0), actual: String(row.balance_minor) });
    }
    if (BigInt(row.allocated ?? 0) !== BigInt(row.allocated_minor)) {
      problems.push({ kind: 'allocation_mismatch', id: row.id, expected: String(row.allocated ?? 0), actual: String(row.allocated_minor) });
    }
  }

  const virtual = await db
    .selectFrom('virtual_accounts as account')
    .select([
      'account.id',
      'account.balance_minor',
      (eb) =>
        eb
          .selectFrom('ledger_postings')
          .select(sql<bigint>`coalesce(sum(amount_minor), 0)`.as('sum'))
          .where('account_kind', '=', 'virtual_account')
          .whereRef('account_id', '=', 'account.id')
          .as('posted'),
    ])
    .execute();
  for (const row of virtual) {
    if (BigInt(row.posted ?? 0) !== BigInt(row.balance_minor)) {
      problems.push({ kind: 'virtual_balance_mismatch', id: row.id, expected: String(row.posted ?? 0), actual: String(row.balance_minor) });
    }
  }

  const wallets = await db
    .selectFrom('wallet_balances as balance')
    .select([
      'balance.wallet_id',
      'balance.asset',
      'balance.balance_minor',
      'balance.reserved_minor',
      (eb) =>
        eb
          .selectFrom('ledger_postings')
          .select(sql<bigint>`coalesce(sum(amount_minor), 0)`.as('sum'))
          .where('account_kind', '=', 'wallet')
          .whereRef('account_id', '=', 'balance.wallet_id')
          .whereRef('ledger_postings.asset', '=', 'balance.asset')
          .as('posted'),
      (eb) =>
        eb
          .selectFrom('wallet_transfers')
          .select(sql<bigint>`coalesce(sum(amount_minor), 0)`.as('sum'))
          .where('direction', '=', 'outgoing')
          .where('status', '=', 'pending')
          .whereRef('wallet_transfers.wallet_id', '=', 'balance.wallet_id')
          .whereRef('wallet_transfers.asset', '=', 'balance.asset')
          .as('pending'),
    ])
    .execute();
  for (const row of wallets) {
    if (BigInt(row.posted ?? 0) !== BigInt(row.balance_minor)) {
      problems.push({ kind: 'wallet_balance_mismatch', id: row.wallet_id, asset: row.asset, expected: String(row.posted ?? 0), actual: String(row.balance_minor) });
    }
    if (BigInt(row.pending ?? 0) !== BigInt(row.reserved_minor)) {
      problems.push({ kind: 'wallet_reservation_mismatch', id: row.wallet_id, asset: row.asset, expected: String(row.pending ?? 0), actual: String(row.reserved_minor) });
    }
  }

  const system = await systemBalances(storage);
  const journals = await db.selectFrom('ledger_journal').select((eb) => eb.fn.countAll<bigint>().as('count')).executeTakeFirstOrThrow();

  return {
    ok: problems.length === 0,
    checked: { journals: Number(journals.count), fiat_accounts: fiat.length, virtual_accounts: virtual.length, wallet_balances: wallets.length },
    system_balances_minor: Object.fromEntries([...system].sort(([left], [right]) => left.localeCompare(right)).map(([account, total]) => [account, String(total)])),
    problems: problems.slice(0, ledgerProblemsShownMax),
  };
}

/** Postings summed per SQL group at most: each posting moves at most 10^15 base units, so 1,000 of them fit in 64 bits. */
const postingsPerPartialSum = 1000;

/**
 * The platform accounts' balances, exactly. Their totals are not bounded like a customer's balance (clearing carries
 * every wallet's deposits at once), and SQLite's sum() fails on a 64-bit overflow: postings are summed in groups of
 * a thousand by the database and the groups added here as bigint.
 */
async function systemBalances(storage: Storage): Promise<Map<string, bigint>> {
  const rows = await storage.db
    .selectFrom('ledger_postings')
    .select(['account_id', (eb) => eb.fn.sum<bigint | string>('amount_minor').as('total')])
    .where('account_kind', '=', 'system')
    .groupBy(['account_id', sql`sequence / ${postingsPerPartialSum}`])
    .execute();
  const totals = new Map<string, bigint>();
  for (const row of rows) totals.set(row.account_id, (totals.get(row.account_id) ?? 0n) + BigInt(row.total));
  return totals;
}
