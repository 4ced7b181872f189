import { randomUUID } from 'node:crypto';
import type { Storage } from '../../src/storage/database.js';

/** Rows written straight into the database, for tests that must bypass the services (constraints, ledger). */

const unique = () => randomUUID().replaceAll('-', '');

export async function insertCustomerRow(storage: Storage, name = 'Storage test'): Promise<string> {
  const id = randomUUID();
  await storage.db
    .insertInto('customers')
    .values({ id, name, fr_owner_business_id: `busi_${unique()}`, created_at: new Date().toISOString() })
    .execute();
  return id;
}

export async function insertFiatAccountRow(storage: Storage, customerId: string, balanceMinor = 0n): Promise<string> {
  const id = randomUUID();
  const now = new Date().toISOString();
  await storage.db
    .insertInto('fiat_accounts')
    .values({
      id,
      customer_id: customerId,
      fr_account_id: `facc_${unique()}`,
      account_name: 'Storage test',
      currency: 'EUR',
      balance_minor: balanceMinor,
      allocated_minor: 0n,
      status: 'active',
      is_master: 1,
      linked_business_id: null,
      umbrella_link_id: null,
      iban: `DE${unique()}`,
      bic: 'TESTDEFFXXX',
      account_number: '1234567890',
      sort_code: null,
      routing_number: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  return id;
}
