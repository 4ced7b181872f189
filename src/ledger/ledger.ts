import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { DomainError } from '../errors.js';
import { insertRowsTemplate, queryTemplate } from '../storage/query-template.js';
import type { Database, LedgerJournalTable, LedgerPostingsTable } from '../storage/tables.js';

/**
 * The only code that changes a balance (DESIGN §4 rule 3). A journal entry is a set of signed postings (credit
 * positive) that sum to zero over fiat and system accounts; virtual-account postings mirror the share of a master
 * account that belongs to one of its virtual accounts. Every debit of a customer account is a conditional update,
 * so two concurrent debits can never overdraw it, and CHECK constraints refuse it even if this code were wrong.
 */

export type Posting =
  | { kind: 'fiat_account'; accountId: string; amountMinor: bigint }
  | { kind: 'virtual_account'; accountId: string; masterAccountId: string; amountMinor: bigint }
  | { kind: 'system'; code: SystemAccountName; amountMinor: bigint };

export type SystemAccountName = 'clearing' | 'fee_income' | 'suspense';

export interface JournalEntry {
  customerId: string;
  kind: string;
  referenceId: string;
  currency: string;
  postings: Posting[];
  createdAt: string;
}

export interface BalanceChange {
  beforeMinor: bigint;
  afterMinor: bigint;
}

/** Balances after the entry, by `fiat_account:<id>` / `virtual_account:<id>`. */
export type BalanceChanges = Map<string, BalanceChange>;

export const insufficientFunds = (accountId: string) =>
  new DomainError('INSUFFICIENT_FUNDS', 'The balance of the account does not cover the amount plus the fee.', { account_id: accountId });

/** Virtual-account debits release the master's allocation before the master is debited; credits go the other way. */
function applicationOrder(posting: Posting): number {
  if (posting.kind === 'virtual_account') return posting.amountMinor < 0n ? 0 : 2;
  return 1;
}

// Every money movement runs these statements, so they are compiled once (storage/query-template.ts).

const insertJournal = queryTemplate<LedgerJournalTable>()(['id', 'customer_id', 'kind', 'reference_id', 'created_at'], (db, row) =>
  db.insertInto('ledger_journal').values(row),
);

interface BalanceUpdate {
  accountId: string;
  delta: bigint;
  updatedAt: string;
}

/** Only the unallocated part of a master pays its own debits: its virtual accounts' money stays theirs. */
const moveFiatBalance = queryTemplate<BalanceUpdate>()(['accountId', 'delta', 'updatedAt'], (db, { accountId, delta, updatedAt }) =>
  db
    .updateTable('fiat_accounts')
    .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: updatedAt })
    .where('id', '=', accountId)
    .where(sql<boolean>`balance_minor - allocated_minor + ${delta} >= 0`)
    .returning('balance_minor'),
);

const moveVirtualBalance = queryTemplate<BalanceUpdate>()(['accountId', 'delta', 'updatedAt'], (db, { accountId, delta, updatedAt }) =>
  db
    .updateTable('virtual_accounts')
    .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: updatedAt })
    .where('id', '=', accountId)
    .where(sql<boolean>`balance_minor + ${delta} >= 0`)
    .returning('balance_minor'),
);

const moveMasterAllocation = queryTemplate<{ masterAccountId: string; delta: bigint }>()(['masterAccountId', 'delta'], (db, { masterAccountId, delta }) =>
  db
    .updateTable('fiat_accounts')
    .set({ allocated_minor: sql`allocated_minor + ${delta}` })
    .where('id', '=', masterAccountId),
);

const insertPostings = insertRowsTemplate<Omit<LedgerPostingsTable, 'sequence'>>()(
  ['journal_id', 'account_kind', 'account_id', 'currency', 'amount_minor'],
  (db, rows) => db.insertInto('ledger_postings').values(rows),
);

export async function postJournal(trx: Transaction<Database>, entry: JournalEntry): Promise<BalanceChanges> {
  const total = entry.postings.filter((posting) => posting.kind !== 'virtual_account').reduce((sum, posting) => sum + posting.amountMinor, 0n);
  if (total !== 0n) throw new Error(`journal ${entry.kind} does not balance (${total})`);
  // A virtual account's movement is its master's too; an unpaired one would shift money between them unseen.
  for (const posting of entry.postings) {
    if (posting.kind !== 'virtual_account') continue;
    const paired = entry.postings.some((other) => other.kind === 'fiat_account' && other.accountId === posting.masterAccountId && other.amountMinor === posting.amountMinor);
    if (!paired) throw new Error(`journal ${entry.kind} moves virtual account ${posting.accountId} without its master`);
  }

  const journalId = randomUUID();
  await insertJournal.execute(trx, { id: journalId, customer_id: entry.customerId, kind: entry.kind, reference_id: entry.referenceId, created_at: entry.createdAt });

  const changes: BalanceChanges = new Map();
  const rows: Array<Omit<LedgerPostingsTable, 'sequence'>> = [];
  const ordered = [...entry.postings].sort((left, right) => applicationOrder(left) - applicationOrder(right));
  for (const posting of ordered) {
    if (posting.amountMinor === 0n) continue;
    const delta = posting.amountMinor;
    if (posting.kind === 'fiat_account') {
      const row = await moveFiatBalance.executeTakeFirst(trx, { accountId: posting.accountId, delta, updatedAt: entry.createdAt });
      if (!row) throw insufficientFunds(posting.accountId);
      changes.set(`fiat_account:${posting.accountId}`, { beforeMinor: BigInt(row.balance_minor) - delta, afterMinor: BigInt(row.balance_minor) });
    } else if (posting.kind === 'virtual_account') {
      const row = await moveVirtualBalance.executeTakeFirst(trx, { accountId: posting.accountId, delta, updatedAt: entry.createdAt });
      if (!row) throw insufficientFunds(posting.accountId);
      await moveMasterAllocation.execute(trx, { masterAccountId: posting.masterAccountId, delta });
      changes.set(`virtual_account:${posting.accountId}`, { beforeMinor: BigInt(row.balance_minor) - delta, afterMinor: BigInt(row.balance_minor) });
    }
    rows.push({
      journal_id: journalId,
      account_kind: posting.kind,
      account_id: posting.kind === 'system' ? `${posting.code}:${entry.currency}` : posting.accountId,
      currency: entry.currency,
      amount_minor: delta,
    });
  }
  if (rows.length > 0) await insertPostings.execute(trx, rows);
  return changes;
}
