import type { Kysely } from 'kysely';
import { accountStatusCacheTtlMs, descriptorCacheEntriesMax } from '../../config/limits.js';
import { accountNotActive } from '../../ledger/ledger.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { BalanceAccount, Posting } from '../../ledger/ledger-entry.js';
import type { Guard } from '../../ledger/unit-of-work.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { Database } from '../../storage/tables.js';
import { balanceEventsAdder } from './balance-events.js';
import { presentFiatAccount } from './fiat-account-presenter.js';
import type { FiatAccountRecord, FiatAccountRow, FiatAccountWithOwner } from '../fiat-accounts/index.js';
import { presentVirtualAccount } from './virtual-account-presenter.js';
import type { VirtualAccountRecord, VirtualAccountRow, VirtualAccountWithOwner } from '../virtual-accounts/index.js';

/**
 * The statuses of fiat and virtual accounts (docs/spec.md §3 shows only `active`; docs/payments.md "Account and payee
 * status"). The provider sets them; in the sandbox, POST /sandbox/fiat-accounts/{id}/status and
 * /sandbox/virtual-accounts/{id}/status simulate it. `closed` is final.
 */
export const accountStatuses = ['active', 'frozen', 'closed'] as const;
type AccountStatus = (typeof accountStatuses)[number];
export const finalAccountStatuses: readonly AccountStatus[] = ['closed'];

/** A caller's fiat account, or one of its virtual accounts (which lives inside a master fiat account). */
export interface CustomerAccount {
  kind: 'fiat_account' | 'virtual_account';
  id: string;
  /** The fiat account that holds the money: the account itself, or the virtual account's master. */
  fiatAccountId: string;
  currency: FiatCurrency;
  name: string;
  iban: string;
  status: string;
  /** The status of the fiat account that holds the money (the account's own for a fiat account). */
  fiatAccountStatus: string;
  /**
   * The account's record as GET answers it, as read when loaded: its balance, status and updated_at are stale by
   * then, the rest never changes. A `*.balance_updated` event is this record with those three written by the plan.
   */
  record: FiatAccountRecord | VirtualAccountRecord;
}

/**
 * How the lookup reads one of a caller's accounts past the cache: each from the module that owns its table, in one
 * read with what its record needs. Those modules depend on accounts (the statuses, the presenters, forgetting the
 * cache), so accounts cannot import them: src/modules/account-lookup.ts hands their reads in.
 */
export interface CustomerAccountReads {
  fiatAccount(db: Kysely<Database>, customerId: string, id: string): Promise<FiatAccountWithOwner | undefined>;
  virtualAccount(db: Kysely<Database>, customerId: string, id: string): Promise<VirtualAccountWithOwner | undefined>;
}

/** The account as money moves it; `holder` is the fiat account that holds its money (itself, or a virtual account's master). */
function customerAccount(
  kind: CustomerAccount['kind'],
  row: FiatAccountRow | VirtualAccountRow,
  holder: { id: string; status: string },
  record: CustomerAccount['record'],
): CustomerAccount {
  return {
    kind,
    id: row.id,
    fiatAccountId: holder.id,
    currency: row.currency as FiatCurrency,
    name: row.account_name,
    iban: row.iban,
    status: row.status,
    fiatAccountStatus: holder.status,
    record,
  };
}

async function readCustomerAccount(reads: CustomerAccountReads, db: Kysely<Database>, customerId: string, id: string): Promise<CustomerAccount | undefined> {
  const fiat = await reads.fiatAccount(db, customerId, id);
  if (fiat) return customerAccount('fiat_account', fiat, fiat, presentFiatAccount(fiat, fiat.fr_owner_business_id));
  const virtual = await reads.virtualAccount(db, customerId, id);
  if (!virtual) return undefined;
  const master = { id: virtual.master_fiat_account_id, status: virtual.master_status };
  return customerAccount('virtual_account', virtual, master, presentVirtualAccount(virtual, virtual.fr_owner_business_id));
}

const customerAccounts = (caches: ReadCaches) => caches.named<string, CustomerAccount>('customer-accounts', accountStatusCacheTtlMs, descriptorCacheEntriesMax);

/** Looks up one of the caller's accounts, as `findCustomerAccount` below. */
export type FindCustomerAccount = (
  storage: Storage,
  caches: ReadCaches,
  customerId: string,
  id: string,
  kinds?: ReadonlyArray<CustomerAccount['kind']>,
) => Promise<CustomerAccount | undefined>;

/** The lookups of a caller's accounts, reading through the owners' `reads`. */
export function customerAccountLookup(reads: CustomerAccountReads) {
  /**
   * The caller's account of these kinds, or undefined (another customer's answers like an unknown one). Cached for
   * the process so that a payment reads no account row before its one write: the owner, kind, master, currency, name
   * and IBAN never change (accounts are never deleted), and the statuses, which do, are read again after
   * `accountStatusCacheTtlMs` (at once after a change through this process: forgetCustomerAccounts).
   */
  const findCustomerAccount: FindCustomerAccount = async (storage, caches, customerId, id, kinds = ['fiat_account', 'virtual_account']) => {
    const account = await customerAccounts(caches).getOrLoad(`${customerId}|${id}`, () => readCustomerAccount(reads, storage.db, customerId, id));
    return account && kinds.includes(account.kind) ? account : undefined;
  };
  /**
   * The caller's account as stored now, past the cache, or undefined: for a step that commits long after the account
   * was loaded (a settlement), whose decision must rest on the statuses as they are.
   */
  const currentCustomerAccount = (storage: Storage, customerId: string, id: string): Promise<CustomerAccount | undefined> =>
    readCustomerAccount(reads, storage.db, customerId, id);
  return { findCustomerAccount, currentCustomerAccount, addBalanceEvents: balanceEventsAdder(findCustomerAccount) };
}

/**
 * Forgets the customer's cached accounts after one of their statuses changed: all of them, since a virtual account's
 * entry carries its master's status too.
 */
export function forgetCustomerAccounts(caches: ReadCaches, customerId: string): void {
  customerAccounts(caches).deleteWhere((key) => key.startsWith(`${customerId}|`));
}

const subjectOf = (account: CustomerAccount, statusOf: 'account' | 'master') =>
  statusOf === 'master' ? "The virtual account's master fiat account" : `The ${account.kind.replace('_', ' ')}`;

const refusal = (account: CustomerAccount, statusOf: 'account' | 'master', action: 'send' | 'receive') =>
  statusOf === 'account'
    ? accountNotActive(account.id, account.status, subjectOf(account, statusOf), action)
    : accountNotActive(account.fiatAccountId, account.fiatAccountStatus, subjectOf(account, statusOf), action);

/**
 * Money may leave only an `active` account, and a virtual account only while its master is active too (the master
 * holds the money). Checked when the account is loaded, for a clear refusal before anything is planned; the money
 * plan's debit checks again in its own statement (ledger.ts accountNotActive), so a status change racing the
 * operation is never overtaken (docs/payments.md "Account and payee status").
 */
export function requireCanSend(account: CustomerAccount): void {
  if (account.status !== 'active') throw refusal(account, 'account', 'send');
  if (account.fiatAccountStatus !== 'active') throw refusal(account, 'master', 'send');
}

/** Money may arrive in a frozen account, not in a closed one (nor in a virtual account whose master is closed). */
export function requireCanReceive(account: CustomerAccount): void {
  if (account.status === 'closed') throw refusal(account, 'account', 'receive');
  if (account.fiatAccountStatus === 'closed') throw refusal(account, 'master', 'receive');
}

/**
 * Guards that the statuses an account was decided on (`currentCustomerAccount`) are still its statuses when the
 * plan commits: a status change meanwhile fails the plan with INVALID_STATUS_TRANSITION (the step is tried again
 * with the new statuses). The guard's update changes nothing; it locks the row until the plan commits, so a status
 * change waits for it or is seen by it. Each guard names its account, so both databases report the same one.
 */
export function unchangedStatusGuards(account: CustomerAccount): Guard[] {
  const guard = (table: 'fiat_accounts' | 'virtual_accounts', id: string, status: string): Guard => ({
    table,
    match: { id, status },
    set: { status },
    error: 'INVALID_STATUS_TRANSITION',
    message: `The status of account ${id} changed meanwhile: try again.`,
    details: { account_id: id },
  });
  const own = guard(account.kind === 'fiat_account' ? 'fiat_accounts' : 'virtual_accounts', account.id, account.status);
  return account.kind === 'fiat_account' ? [own] : [own, guard('fiat_accounts', account.fiatAccountId, account.fiatAccountStatus)];
}

/** The balance of a customer account the ledger moves: a virtual account's own (inside its master), or the fiat account's. */
export function balanceAccountOf(account: Pick<CustomerAccount, 'kind' | 'id' | 'fiatAccountId'>): BalanceAccount {
  return account.kind === 'fiat_account' ? { kind: 'fiat_account', id: account.id } : { kind: 'virtual_account', id: account.id, masterId: account.fiatAccountId };
}

/** Postings that move `amount` into (positive) or out of (negative) a customer account; a virtual account's move is its master's too. */
export function accountPostings(account: Pick<CustomerAccount, 'kind' | 'id' | 'fiatAccountId' | 'currency'>, amount: bigint): Posting[] {
  const fiat: Posting = { account: { kind: 'fiat_account', id: account.fiatAccountId }, asset: account.currency, amount };
  if (account.kind === 'fiat_account') return [fiat];
  return [fiat, { account: balanceAccountOf(account), asset: account.currency, amount }];
}
