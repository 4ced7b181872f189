import type { Kysely } from 'kysely';
import { systemClock } from '../../clock.js';
import { descriptorCacheEntriesMax } from '../../config/limits.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { BalanceAccount, Posting } from '../../ledger/money-plan.js';
import { ExpiringCache, sharedCache } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { queryTemplate } from '../../storage/query-template.js';
import type { Database } from '../../storage/tables.js';

/** A caller's fiat account, or one of its virtual accounts (which lives inside a master fiat account). */
export interface CustomerAccount {
  kind: 'fiat_account' | 'virtual_account';
  id: string;
  /** The fiat account that holds the money: the account itself, or the virtual account's master. */
  fiatAccountId: string;
  currency: FiatCurrency;
  name: string;
  iban: string;
}

/** Every payment looks up its accounts: these lookups are compiled once. */
const fiatAccountOfCustomer = queryTemplate<{ customerId: string; id: string }>()(['customerId', 'id'], (db, { customerId, id }) =>
  db.selectFrom('fiat_accounts').select(['id', 'currency', 'account_name', 'iban']).where('customer_id', '=', customerId).where('id', '=', id),
);

const virtualAccountOfCustomer = queryTemplate<{ customerId: string; id: string }>()(['customerId', 'id'], (db, { customerId, id }) =>
  db
    .selectFrom('virtual_accounts')
    .select(['id', 'currency', 'account_name', 'iban', 'master_fiat_account_id'])
    .where('customer_id', '=', customerId)
    .where('id', '=', id),
);

async function readCustomerAccount(db: Kysely<Database>, customerId: string, id: string): Promise<CustomerAccount | undefined> {
  const fiat = await fiatAccountOfCustomer.executeTakeFirst(db, { customerId, id });
  if (fiat) return { kind: 'fiat_account', id: fiat.id, fiatAccountId: fiat.id, currency: fiat.currency as FiatCurrency, name: fiat.account_name, iban: fiat.iban };
  const virtual = await virtualAccountOfCustomer.executeTakeFirst(db, { customerId, id });
  if (!virtual) return undefined;
  return {
    kind: 'virtual_account',
    id: virtual.id,
    fiatAccountId: virtual.master_fiat_account_id,
    currency: virtual.currency as FiatCurrency,
    name: virtual.account_name,
    iban: virtual.iban,
  };
}

/**
 * The caller's account of these kinds, or undefined (another customer's answers like an unknown one). What is read
 * here never changes once the account exists (owner, kind, master, currency, name, IBAN; accounts are never
 * deleted), so it is cached for the process: a payment reads no account row before its one write.
 */
export async function findCustomerAccount(
  storage: Storage,
  customerId: string,
  id: string,
  kinds: ReadonlyArray<CustomerAccount['kind']> = ['fiat_account', 'virtual_account'],
): Promise<CustomerAccount | undefined> {
  const accounts = sharedCache(storage, 'customer-accounts', () => new ExpiringCache<string, CustomerAccount>(systemClock, undefined, descriptorCacheEntriesMax));
  const account = await accounts.getOrLoad(`${customerId}|${id}`, () => readCustomerAccount(storage.db, customerId, id));
  return account && kinds.includes(account.kind) ? account : undefined;
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
