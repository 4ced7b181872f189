import { randomUUID } from 'node:crypto';
import { sql, type Transaction } from 'kysely';
import { DomainError } from '../errors.js';
import type { Database } from '../storage/tables.js';

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
  await trx
    .insertInto('ledger_journal')
    .values({ id: journalId, customer_id: entry.customerId, kind: entry.kind, reference_id: entry.referenceId, created_at: entry.createdAt })
    .execute();

  const changes: BalanceChanges = new Map();
  const rows: Array<{ journal_id: string; account_kind: Posting['kind']; account_id: string; currency: string; amount_minor: bigint }> = [];
  const ordered = [...entry.postings].sort((left, right) => applicationOrder(left) - applicationOrder(right));
  for (const posting of ordered) {
    if (posting.amountMinor === 0n) continue;
    const delta = posting.amountMinor;
    if (posting.kind === 'fiat_account') {
      // Only the unallocated part of a master pays its own debits: its virtual accounts' money stays theirs.
      const row = await trx
        .updateTable('fiat_accounts')
        .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: entry.createdAt })
        .where('id', '=', posting.accountId)
        .where(sql<boolean>`balance_minor - allocated_minor + ${delta} >= 0`)
        .returning('balance_minor')
        .executeTakeFirst();
      if (!row) throw insufficientFunds(posting.accountId);
      changes.set(`fiat_account:${posting.accountId}`, { beforeMinor: BigInt(row.balance_minor) - delta, afterMinor: BigInt(row.balance_minor) });
    } else if (posting.kind === 'virtual_account') {
      const row = await trx
        .updateTable('virtual_accounts')
        .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: entry.createdAt })
        .where('id', '=', posting.accountId)
        .where(sql<boolean>`balance_minor + ${delta} >= 0`)
        .returning('balance_minor')
        .executeTakeFirst();
      if (!row) throw insufficientFunds(posting.accountId);
      await trx
        .updateTable('fiat_accounts')
        .set({ allocated_minor: sql`allocated_minor + ${delta}` })
        .where('id', '=', posting.masterAccountId)
        .execute();
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
  if (rows.length > 0) await trx.insertInto('ledger_postings').values(rows).execute();
  return changes;
}
