import type { Generated } from 'kysely';

/**
 * Table types. Conventions that hold on both dialects:
 * - ids are lowercase UUID strings; timestamps are ISO 8601 UTC strings with milliseconds (they sort as text);
 * - money is bigint minor units (returned as JS bigint on both dialects, see database.ts);
 * - booleans are integers 0/1 (SQLite has no boolean and better-sqlite3 cannot bind one);
 * - JSON values are text.
 */
export type DbBoolean = number | bigint;

export interface CustomersTable {
  id: string;
  name: string;
  fr_owner_business_id: string;
  created_at: string;
}

export interface ApiKeysTable {
  id: string;
  customer_id: string;
  key_hash: string;
  prefix: string;
  environment: string;
  scopes: string;
  allowed_ips: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface FiatAccountsTable {
  id: string;
  customer_id: string;
  fr_account_id: string;
  account_name: string;
  currency: string;
  balance_minor: bigint;
  status: string;
  is_master: DbBoolean;
  linked_business_id: string | null;
  umbrella_link_id: string | null;
  iban: string;
  bic: string;
  account_number: string;
  sort_code: string | null;
  routing_number: string | null;
  created_at: string;
  updated_at: string;
}

export interface OutboxEventsTable {
  /** Insertion order; delivery reads the outbox in this order. */
  sequence: Generated<bigint>;
  id: string;
  customer_id: string;
  event_type: string;
  payload: string;
  created_at: string;
  published_at: string | null;
}

export interface ServerSecretsTable {
  name: string;
  value: string;
  created_at: string;
}

export interface Database {
  customers: CustomersTable;
  api_keys: ApiKeysTable;
  fiat_accounts: FiatAccountsTable;
  outbox_events: OutboxEventsTable;
  server_secrets: ServerSecretsTable;
}
