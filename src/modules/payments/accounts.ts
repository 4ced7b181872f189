import type { Kysely } from 'kysely';
import { queryTemplate } from '../../storage/query-template.js';
import type { Database } from '../../storage/tables.js';

/** A caller's fiat account, or one of its virtual accounts (which lives inside a master fiat account). */
export interface CustomerAccount {
  kind: 'fiat_account' | 'virtual_account';
  id: string;
  /** The fiat account that holds the money: the account itself, or the virtual account's master. */
  fiatAccountId: string;
  currency: string;
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

export async function findCustomerAccount(
  db: Kysely<Database>,
  customerId: string,
  id: string,
  kinds: ReadonlyArray<CustomerAccount['kind']> = ['fiat_account', 'virtual_account'],
): Promise<CustomerAccount | undefined> {
  if (kinds.includes('fiat_account')) {
    const fiat = await fiatAccountOfCustomer.executeTakeFirst(db, { customerId, id });
    if (fiat) return { kind: 'fiat_account', id: fiat.id, fiatAccountId: fiat.id, currency: fiat.currency, name: fiat.account_name, iban: fiat.iban };
  }
  if (kinds.includes('virtual_account')) {
    const virtual = await virtualAccountOfCustomer.executeTakeFirst(db, { customerId, id });
    if (virtual) {
      return { kind: 'virtual_account', id: virtual.id, fiatAccountId: virtual.master_fiat_account_id, currency: virtual.currency, name: virtual.account_name, iban: virtual.iban };
    }
  }
  return undefined;
}

/** Postings that move `amountMinor` into (positive) or out of (negative) a customer account. */
export function accountPostings(account: CustomerAccount, amountMinor: bigint) {
  const fiat = { kind: 'fiat_account' as const, accountId: account.fiatAccountId, amountMinor };
  if (account.kind === 'fiat_account') return [fiat];
  return [fiat, { kind: 'virtual_account' as const, accountId: account.id, masterAccountId: account.fiatAccountId, amountMinor }];
}

/** The balance a customer sees for the account: a virtual account's own, or the fiat account's. */
export function balanceKey(account: CustomerAccount): string {
  return `${account.kind}:${account.id}`;
}
