import type { Generated } from 'kysely';

/**
 * Table types. Conventions that hold on both dialects:
 * - ids are lowercase UUID strings; timestamps are ISO 8601 UTC strings with milliseconds (they sort as text);
 * - money is bigint minor units (returned as JS bigint on both dialects, see database.ts);
 * - booleans are integers 0/1 (SQLite has no boolean and better-sqlite3 cannot bind one);
 * - JSON values are text.
 */
type DbBoolean = number | bigint;

interface CustomersTable {
  id: string;
  name: string;
  fr_owner_business_id: string;
  transaction_count: Generated<bigint>;
  /** Bytes of the customer's stored document files, against DOCUMENT_STORAGE_QUOTA_BYTES. */
  stored_document_bytes: Generated<bigint>;
  created_at: string;
  /** How the hosted onboarding page names the customer, and the logo it shows (migration 0029); null: none set. */
  display_name: string | null;
  logo_url: string | null;
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
  /** A person's name for the key (migration 0029); null when none was given. */
  name: string | null;
}

export interface FiatAccountsTable {
  id: string;
  customer_id: string;
  fr_account_id: string;
  account_name: string;
  currency: string;
  balance_minor: bigint;
  allocated_minor: Generated<bigint>;
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
  /** Insertion order. Not commit order on PostgreSQL: delivery claims unpublished rows instead of following it. */
  sequence: Generated<bigint>;
  id: string;
  customer_id: string;
  event_type: string;
  payload: string;
  created_at: string;
  published_at: string | null;
  /** Until when the instance that claimed the event for delivery owns it (events/outbox.ts). */
  delivery_lease_until: Generated<string | null>;
}

interface ServerSecretsTable {
  name: string;
  /** The secret wrapped with the master key `key_id` (storage/server-secrets.ts), or the secret itself when key_id is null. */
  value: string;
  key_id: string | null;
  created_at: string;
}

/** Settings the running server records for the CLI (storage/deployment-settings.ts). */
interface DeploymentSettingsTable {
  name: string;
  value: string;
  updated_at: string;
}

export interface EndUsersTable {
  id: string;
  customer_id: string;
  fr_end_user_id: string;
  end_user_type: 'INDIVIDUAL' | 'BUSINESS';
  status: string;
  reference_code: string;
  first_name: string | null;
  middle_name: string | null;
  last_name: string | null;
  company_name: string | null;
  email: string;
  dob: string | null;
  phone: string | null;
  birth_country: string | null;
  nationality: string | null;
  ip_address: string | null;
  annual_salary_range: string | null;
  risk_rating: string | null;
  risk_tier: string;
  verification_method: string | null;
  signup_at: string | null;
  umbrella_link_id: string | null;
  onboarding_url_token: string | null;
  /** SHA-256 of the token of a hosted onboarding link issued before links carried a secret (0016); null since. */
  onboarding_token_hash: string | null;
  /** SHA-256 of the secret in the hosted onboarding link of a hosted_kyc end user (modules/end-users/onboarding.ts). */
  onboarding_secret_hash: string | null;
  onboarding_expires_at: string | null;
  /** When the end user finished the hosted page; the token opens nothing after. */
  onboarding_completed_at: string | null;
  registration_number: string | null;
  registration_date: string | null;
  business_type: string | null;
  incorporation_country: string | null;
  sector: string | null;
  disclosure_accepted_at: string | null;
  disclosure_version: string | null;
  reverse_solicitation_required: DbBoolean;
  reverse_solicitation_accepted: DbBoolean;
  /** The attestation as the customer sent it (JSON), or null. */
  reverse_solicitation_attestation: string | null;
  verification_completed_at: string | null;
  verification_reason: string | null;
  address: string | null;
  identification_document: string | null;
  tags: string;
  metadata: string;
  linked_crypto_wallets: string;
  business: string | null;
  business_persons: string | null;
  created_at: string;
  updated_at: string;
}

export interface DocumentsTable {
  id: string;
  customer_id: string;
  end_user_id: string;
  document_type: string;
  /** Which identity document (passport, national_id, …); null when not given or not an identity document. */
  document_kind: string | null;
  file_name: string;
  mime_type: string;
  size_bytes: bigint;
  sha256: string;
  storage_path: string;
  fr_document_id: string;
  status: string;
  fr_sync_status: 'pending' | 'synced' | 'failed';
  sync_attempts: number | bigint;
  next_sync_at: string | null;
  last_sync_error: string | null;
  synced_at: string | null;
  created_at: string;
  updated_at: string;
  /** The test clock `next_sync_at` is read by (its customer's, docs/test-clocks.md, migration 0028); null: the server clock. */
  clock_id: string | null;
}

export interface PayeesTable {
  id: string;
  customer_id: string;
  end_user_id: string | null;
  fr_payee_id: string;
  payee_name: string;
  currency: string;
  status: string;
  iban: string | null;
  swift: string | null;
  account_number: string | null;
  sort_code: string | null;
  routing_number: string | null;
  account_holder_name: string | null;
  bank_name: string | null;
  address_line1: string | null;
  address_line2: string | null;
  city: string | null;
  state_region: string | null;
  postal_code: string | null;
  country_code: string | null;
  requires_vop: DbBoolean;
  umbrella_link_id: string | null;
  bank_details: string;
  created_at: string;
  updated_at: string;
}

export interface VirtualAccountsTable {
  id: string;
  customer_id: string;
  master_fiat_account_id: string;
  end_user_id: string | null;
  fr_virtual_account_id: string;
  account_name: string;
  currency: string;
  status: string;
  balance_minor: bigint;
  iban: string;
  bic: string;
  bank_name: string;
  account_holder_name: string;
  bank_country: string;
  account_number: string;
  sort_code: string | null;
  umbrella_link_id: string | null;
  created_at: string;
  updated_at: string;
}

interface SystemAccountsTable {
  code: string;
  currency: string;
}

interface LedgerJournalTable {
  id: string;
  customer_id: string;
  kind: string;
  reference_id: string;
  created_at: string;
}

export interface LedgerPostingsTable {
  sequence: Generated<bigint>;
  journal_id: string;
  account_kind: 'fiat_account' | 'virtual_account' | 'system' | 'wallet';
  account_id: string;
  /** An asset code of the registry (ledger/assets.ts); a journal balances per asset. */
  asset: string;
  amount_minor: bigint;
}

export interface PaymentsTable {
  id: string;
  customer_id: string;
  fr_payment_id: string;
  status: 'pending' | 'completed' | 'failed';
  transaction_type: string;
  payment_scheme: string;
  amount_minor: bigint;
  fee_minor: bigint;
  fee_schedule_id: string | null;
  currency: string;
  reference: string;
  from_account_id: string;
  from_virtual_account_id: string | null;
  to_account_id: string | null;
  to_virtual_account_id: string | null;
  payee_id: string | null;
  payee_verification_id: string | null;
  umbrella_link_id: string | null;
  transaction_id: string;
  /** With a payment rail: when the payment is next due to be handed to it; null once handed over, or without a rail. */
  submit_at: string | null;
  failure_reason: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface TransactionsTable {
  id: string;
  customer_id: string;
  customer_seq: bigint;
  fr_transaction_id: string;
  transaction_type: string;
  amount_minor: bigint;
  currency: string;
  status: string;
  direction: 'incoming' | 'outgoing';
  account_id: string;
  virtual_account_id: string | null;
  from_account_id: string | null;
  from_account_type: string | null;
  to_account_id: string | null;
  to_account_type: string | null;
  description: string | null;
  reference: string | null;
  counterparty_name: string | null;
  counterparty_account: string | null;
  fee_amount_minor: bigint;
  fee_currency: string;
  payee_id: string | null;
  payment_id: string | null;
  balance_before_minor: bigint;
  balance_after_minor: bigint;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface FeeSchedulesTable {
  id: string;
  /** 'default' for the default schedule, else the customer id (uniqueness without NULLs, see 0004-fees.ts). */
  scope: string;
  /** Null for the default schedule. */
  customer_id: string | null;
  name: string;
  transaction_type: string;
  payment_scheme: string;
  currency: string;
  flat_fee_minor: bigint;
  /** Millionths of the amount: 0.25 % = 2500n. */
  percentage_millionths: bigint;
  min_fee_minor: bigint | null;
  max_fee_minor: bigint | null;
  umbrella_link_id: string | null;
  created_at: string;
  updated_at: string;
}

/** A call that creates an object at the provider, recorded before it is made (providers/provisioning.ts). */
export interface ProviderOperationsTable {
  id: string;
  customer_id: string;
  kind: string;
  request: string;
  status: 'calling' | 'done' | 'undoing' | 'undone' | 'failed';
  provider_object_id: string | null;
  lease_until: string | null;
  undo_attempts: Generated<number | bigint>;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

/** The sandbox adapter's schedule (providers/sandbox/timers.ts, migration 0022): when it next answers for a resource. */
export interface SandboxTimersTable {
  /** The resource's id. */
  id: string;
  resource: 'payment' | 'wallet_transfer' | 'otc_order' | 'end_user';
  customer_id: string;
  /** When the sandbox next answers; also the lease of the instance that claimed it. */
  due_at: string;
  /** What it answers when that is decided in advance: an end user's verification outcome (a magic name's). */
  answer: string | null;
  /** The test clock `due_at` is read by (its customer's, docs/test-clocks.md); null: the server clock. */
  clock_id: string | null;
}

/** A sandbox test clock (migration 0027, docs/test-clocks.md): attached to its customer from creation until deleted. */
export interface SandboxTestClocksTable {
  id: string;
  customer_id: string;
  name: string | null;
  /** The customer's time while the clock is attached: only an advance moves it. */
  frozen_time: string;
  created_at: string;
  /** While an advance's work runs (migration 0028): until when it holds the clock, server time; null otherwise. */
  advancing_until: string | null;
}

/** The provider events inbox (providers/inbox.ts, migration 0021). */
export interface ProviderEventsTable {
  id: Generated<bigint>;
  /** The adapter that reported it (`sandbox`, `http`). */
  provider: string;
  /** `<resource>.<outcome>`, e.g. `payment.completed` (providers/events.ts). */
  event_type: string;
  /** The provider's id of the resource (a payment's fr_payment_id, an end user's fr_end_user_id …). */
  reference: string;
  idempotency_key: string;
  /** JSON object, at most providerEventPayloadBytesMax. */
  payload: string;
  state: 'received' | 'applied' | 'failed';
  attempts: Generated<number | bigint>;
  error_code: string | null;
  last_error: string | null;
  lease_until: string | null;
  received_at: string;
  updated_at: string;
}

/** Idempotency-Key reservations and their stored answers (http/idempotency.ts). */
export interface IdempotencyKeysTable {
  customer_id: string;
  key: string;
  operation: string;
  status: 'in_progress' | 'completed';
  attempt_id: string;
  lease_until: string;
  response_status: number | bigint | null;
  response_body: string | null;
  /** Any one of these scopes (space-separated) reads the stored answer: a reuse elsewhere must not read more. */
  read_scope: string;
  /** 1: response_body is encrypted, the answer holding a secret (the signing secret of POST /webhooks). */
  response_sealed: Generated<number | bigint>;
  created_at: string;
  expires_at: string;
  /** The test clock `expires_at` is read by (its customer's, docs/test-clocks.md, migration 0028); null: the server clock. */
  clock_id: string | null;
}

/** PostgreSQL: stored document files, readable by every instance (storage/files.ts). */
interface DocumentFilesTable {
  storage_path: string;
  customer_id: string;
  content: Buffer;
  created_at: string;
}

export interface WalletsTable {
  id: string;
  customer_id: string;
  fr_wallet_id: string;
  /** The custodian holding the wallet's keys (the record's `provider`). */
  provider: string;
  display_name: string;
  status: 'active';
  end_user_id: string | null;
  umbrella_link_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface WalletAddressesTable {
  id: string;
  customer_id: string;
  wallet_id: string;
  asset: string;
  network: string;
  address: string;
  is_default: DbBoolean;
  created_at: string;
}

/** What a wallet holds of one asset: `balance_minor` per the ledger, `reserved_minor` held by pending transfers out. */
export interface WalletBalancesTable {
  wallet_id: string;
  asset: string;
  customer_id: string;
  balance_minor: bigint;
  reserved_minor: bigint;
  updated_at: string;
}

/** A transfer out of a wallet, or a deposit into it (`direction` incoming). */
export interface WalletTransfersTable {
  id: string;
  customer_id: string;
  wallet_id: string;
  fr_transfer_id: string;
  direction: 'incoming' | 'outgoing';
  status: 'pending' | 'completed' | 'failed';
  asset: string;
  network: string;
  amount_minor: bigint;
  /** The address the asset goes to: the recipient's, or for a deposit the wallet's own. */
  destination: string;
  note: string | null;
  tx_hash: string | null;
  failure_reason: string | null;
  completed_at: string | null;
  created_at: string;
  updated_at: string;
}

/** An indicative OTC quote (docs/otc.md); `order_id` once confirmed. Rates in 10^-8 units of the asset per EUR. */
export interface OtcQuotesTable {
  id: string;
  customer_id: string;
  source_account_id: string;
  wallet_id: string;
  destination_currency: string;
  source_amount_minor: bigint;
  mid_rate: bigint;
  rate: bigint;
  destination_amount_minor: bigint;
  spread_minor: bigint;
  source_amount_usdc_minor: bigint;
  ttl_seconds: number;
  expires_at: string;
  order_id: string | null;
  created_at: string;
}

export interface OtcOrdersTable {
  id: string;
  customer_id: string;
  quote_id: string;
  status: 'debit_pending' | 'debited' | 'settled' | 'failed';
  source_account_id: string;
  wallet_id: string;
  destination_currency: string;
  source_amount_minor: bigint;
  rate: bigint;
  destination_amount_minor: bigint;
  spread_minor: bigint;
  source_amount_usdc_minor: bigint;
  /** The EUR debit's record in GET /transactions. */
  transaction_id: string;
  travel_rule_payload: string | null;
  failure_reason: string | null;
  debited_at: string | null;
  settled_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookSubscriptionsTable {
  id: string;
  customer_id: string;
  url: string;
  description: string;
  /** JSON array of event types. */
  event_types: string;
  is_active: DbBoolean;
  /** The `whsec_` secret, encrypted (storage/secret-box.ts); never returned after creation. */
  secret_encrypted: string;
  signing_secret_prefix: string;
  /** After a rotation, the replaced secret: deliveries carry both signatures until it expires. */
  previous_secret_encrypted: string | null;
  previous_secret_expires_at: string | null;
  consecutive_failures: number | bigint;
  /** When the current run of failed attempts began; null after a success. */
  failing_since: string | null;
  disabled_at: string | null;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookDeliveriesTable {
  /** The `webhook-id` header: the same on every attempt of this event to this subscription. */
  id: string;
  subscription_id: string;
  customer_id: string;
  event_id: string;
  event_type: string;
  status: 'pending' | 'succeeded' | 'failed';
  /** Attempts since the delivery was created or last replayed; indexes the retry schedule. */
  attempt_count: Generated<number | bigint>;
  /** When the next attempt is due (null once succeeded or failed). */
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | bigint | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  /** The test clock `next_attempt_at` (and the attempts' times) are read by (docs/test-clocks.md); null: the server clock. */
  clock_id: string | null;
  /**
   * Until when the instance that claimed it for an attempt owns it (migration 0030), in the time of the clock it was
   * claimed on; null once the attempt is recorded or the claim released. It also fences the attempt's record.
   */
  leased_until: string | null;
}

export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  attempt_number: number | bigint;
  succeeded: DbBoolean;
  status_code: number | bigint | null;
  duration_ms: number | bigint;
  error: string | null;
  created_at: string;
  /**
   * The delivery's subscription (filled in for attempts recorded before it was kept): its health is read by it. Always
   * written; nullable in the schema only because a column added to an existing table is (SQLite).
   */
  subscription_id: string | null;
  /** JSON object of the headers sent; null for an attempt that sent nothing or was recorded before they were kept. */
  request_headers: string | null;
  /** JSON object of the receiver's headers, bounded; null when no answer came. */
  response_headers: string | null;
  /** At most webhookResponseBodyStoredBytesMax bytes of the answer, as text; null when no answer came. */
  response_body: string | null;
  /** 1 when the answer was longer than what response_body keeps. */
  response_body_truncated: Generated<DbBoolean>;
}

export interface DashboardUsersTable {
  id: string;
  customer_id: string;
  email: string;
  /** scrypt (modules/dashboard-users/passwords.ts); null until the user follows their first sign-in link. */
  password_hash: string | null;
  created_at: string;
  updated_at: string;
}

export interface DashboardSignInLinksTable {
  token_hash: string;
  user_id: string;
  expires_at: string;
  used_at: string | null;
  created_at: string;
}

export interface DashboardSessionsTable {
  /** SHA-256 of the cookie's session id. */
  id_hash: string;
  user_id: string;
  customer_id: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
}

/** A secret to show once on the dashboard (migration 0029, docs/dashboard.md "Forms"). */
export interface DashboardRevealsTable {
  /** SHA-256 of the one-time id in the reveal page's address. */
  id_hash: string;
  /** The session it was made in: another session's reveal is unknown. */
  session_id_hash: string;
  kind: 'api_key' | 'webhook_secret' | 'webhook_rotated_secret';
  /** The key's or the subscription's id, for the page's links and words. */
  subject_id: string;
  sealed_secret: string;
  created_at: string;
  expires_at: string;
}

export interface Database {
  customers: CustomersTable;
  api_keys: ApiKeysTable;
  fiat_accounts: FiatAccountsTable;
  outbox_events: OutboxEventsTable;
  server_secrets: ServerSecretsTable;
  deployment_settings: DeploymentSettingsTable;
  end_users: EndUsersTable;
  documents: DocumentsTable;
  payees: PayeesTable;
  virtual_accounts: VirtualAccountsTable;
  fee_schedules: FeeSchedulesTable;
  system_accounts: SystemAccountsTable;
  ledger_journal: LedgerJournalTable;
  ledger_postings: LedgerPostingsTable;
  payments: PaymentsTable;
  transactions: TransactionsTable;
  provider_operations: ProviderOperationsTable;
  provider_events: ProviderEventsTable;
  sandbox_timers: SandboxTimersTable;
  sandbox_test_clocks: SandboxTestClocksTable;
  idempotency_keys: IdempotencyKeysTable;
  document_files: DocumentFilesTable;
  wallets: WalletsTable;
  wallet_addresses: WalletAddressesTable;
  wallet_balances: WalletBalancesTable;
  wallet_transfers: WalletTransfersTable;
  otc_quotes: OtcQuotesTable;
  otc_orders: OtcOrdersTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  dashboard_users: DashboardUsersTable;
  dashboard_sign_in_links: DashboardSignInLinksTable;
  dashboard_sessions: DashboardSessionsTable;
  dashboard_reveals: DashboardRevealsTable;
}
