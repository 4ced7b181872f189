import type { Kysely } from 'kysely';
import type { Database } from '../../storage/tables.js';
import { activeFiatAccountsIn } from '../fiat-accounts/index.js';
import { activeVirtualAccountsIn } from '../virtual-accounts/index.js';

export interface EligibleAccountRow {
  id: string;
  currency: string;
  is_master: boolean;
  account_name: string;
  available_minor: bigint;
}

/**
 * The customer's fiat accounts and virtual accounts in `currency` that money may leave (active, and a virtual
 * account's master too), fiat first, each oldest first; read through their owners' modules.
 */
export async function accountsIn(db: Kysely<Database>, customerId: string, currency: string): Promise<EligibleAccountRow[]> {
  const fiat = await activeFiatAccountsIn(db, customerId, currency);
  const virtual = await activeVirtualAccountsIn(db, customerId, currency);
  return [
    // A fiat account pays from what its virtual accounts do not hold.
    ...fiat.map((row) => ({ id: row.id, currency: row.currency, is_master: Boolean(row.is_master), account_name: row.account_name, available_minor: BigInt(row.balance_minor) - BigInt(row.allocated_minor) })),
    ...virtual.map((row) => ({ id: row.id, currency: row.currency, is_master: false, account_name: row.account_name, available_minor: BigInt(row.balance_minor) })),
  ];
}
