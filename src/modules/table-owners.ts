import type { Database } from '../storage/tables.js';

/**
 * Who owns each table: the one part of `src` whose queries name it (docs/modules.md "Who owns which table"). Every
 * other module reaches its rows through the functions the owner's index exports. `test/architecture/table-owners.test.ts`
 * fails when a module's source names a table it neither owns nor is listed as joining. A table added to `Database`
 * without an owner here does not compile.
 */
export interface TableOwner {
  /** The folder or file under `src/` that queries the table. */
  owner: string;
  /**
   * Modules that JOIN the table in their own query, where that one query is what keeps a hot path at one round trip
   * (they never select from, insert into, update or delete from it). Each is said why in docs/modules.md.
   */
  joinedBy?: readonly string[];
}

const module = (name: string) => `src/modules/${name}/`;

export const tableOwners: Readonly<Record<keyof Database, TableOwner>> = {
  // api-keys authenticates a key with its customer in one read (every request); the account modules load a payment's
  // account with its customer's provider id in one read (every payment).
  customers: { owner: module('customers'), joinedBy: [module('api-keys'), module('fiat-accounts'), module('virtual-accounts')] },
  api_keys: { owner: module('api-keys') },
  dashboard_users: { owner: module('dashboard-users') },
  dashboard_sign_in_links: { owner: module('dashboard-users') },
  dashboard_sessions: { owner: module('dashboard-users') },
  dashboard_reveals: { owner: module('dashboard-users') },
  end_users: { owner: module('end-users') },
  documents: { owner: module('documents') },
  document_files: { owner: 'src/storage/files.ts' },
  // A virtual account lives in its master fiat account: whether money may leave it depends on the master's status too.
  fiat_accounts: { owner: module('fiat-accounts'), joinedBy: [module('virtual-accounts')] },
  virtual_accounts: { owner: module('virtual-accounts') },
  payees: { owner: module('payees') },
  fee_schedules: { owner: module('fees') },
  payments: { owner: module('payments') },
  transactions: { owner: module('transactions') },
  wallets: { owner: module('wallets') },
  wallet_addresses: { owner: module('wallets') },
  wallet_balances: { owner: module('wallets') },
  wallet_transfers: { owner: module('wallets') },
  otc_quotes: { owner: module('otc') },
  otc_orders: { owner: module('otc') },
  webhook_subscriptions: { owner: module('webhooks') },
  webhook_deliveries: { owner: module('webhooks') },
  webhook_attempts: { owner: module('webhooks') },
  // The webhook delivery worker's claim reads each delivery's event payload in the same statement (PostgreSQL).
  outbox_events: { owner: module('events'), joinedBy: [module('webhooks')] },
  ledger_journal: { owner: 'src/ledger/' },
  ledger_postings: { owner: 'src/ledger/' },
  system_accounts: { owner: 'src/ledger/' },
  idempotency_keys: { owner: 'src/http/idempotency.ts' },
  provider_operations: { owner: 'src/providers/provisioning.ts' },
  provider_events: { owner: 'src/providers/inbox.ts' },
  // A new resource's timer row is written by its module's money plan, handed to it as rows (NewResourceRows).
  sandbox_timers: { owner: 'src/providers/sandbox/timers.ts' },
  sandbox_test_clocks: { owner: module('test-clocks') },
  server_secrets: { owner: 'src/storage/server-secrets.ts' },
  deployment_settings: { owner: 'src/storage/deployment-settings.ts' },
};
