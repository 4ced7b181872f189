import { expect } from 'vitest';
import { createFiatAccount } from './fixtures.js';
import type { TestApp, TestCustomer } from './test-app.js';

/** Money-movement helpers for the payment, deposit, transaction and ledger tests (issue 4). */

export const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Every field of the docs/spec.md §2 transaction record, plus the additive `account_id` and `payment_id`. */
export const transactionFields = [
  'id', 'fr_transaction_id', 'transaction_type', 'amount', 'currency', 'status', 'from_account_id', 'to_account_id',
  'from_account_type', 'to_account_type', 'description', 'reference', 'counterparty_name', 'counterparty_account',
  'fee_amount', 'fee_currency', 'fr_owner_business_id', 'virtual_account_id', 'payee_id', 'balance_before',
  'balance_after', 'direction', 'completed_at', 'created_at', 'account_id', 'payment_id',
].sort();

/** docs/spec.md §2 payment (creation response), exactly. */
export const paymentCreatedFields = ['id', 'frPaymentId', 'status', 'amount', 'currency', 'reference', 'transactionType', 'createdAt'].sort();

export const deIban = 'DE89370400440532013000';

export async function createVirtualAccount(t: TestApp, customer: TestCustomer, masterId: string, currency = 'EUR') {
  const response = await t.request({
    method: 'POST',
    url: '/virtual-accounts',
    key: customer.key,
    csrf: true,
    body: { accountName: 'Collections', masterFiatAccountId: masterId, currency },
  });
  if (response.statusCode !== 201) throw new Error(`POST /virtual-accounts answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: { id: string; master_fiat_account_id: string; balance: number; iban: string; [field: string]: unknown } }>().data;
}

const payeeBodies = {
  EUR: { name: 'Erika Mustermann', address: { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' }, bankDetails: { iban: deIban, bic: 'COBADEFFXXX' } },
  GBP: { name: 'Arthur Dent', address: { line1: '155 Country Lane', city: 'Cottington', postalCode: 'CT1 1AA', country: 'GB' }, bankDetails: { sortCode: '601613', accountNumber: '31926819' } },
  USD: { name: 'John Doe', address: { line1: '1 Wall St', city: 'New York', postalCode: '10005', stateRegion: 'NY', country: 'US' }, bankDetails: { routingNumber: '021000021', accountNumber: '123456789' } },
} as const;

export async function createPayee(t: TestApp, customer: TestCustomer, currency: keyof typeof payeeBodies = 'EUR') {
  const response = await t.request({ method: 'POST', url: '/payees', key: customer.key, csrf: true, body: payeeBodies[currency] });
  if (response.statusCode !== 201) throw new Error(`POST /payees answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: { id: string; currency: string; payee_name: string; [field: string]: unknown } }>().data;
}

/** A record the API answered: its id, and the fields the test that asked reads. */
type JsonRecord = { id: string; [field: string]: unknown };
/** A payment record (camelCase, docs/spec.md §2). */
type PaymentRecord = JsonRecord & { status: string; createdAt: string; transactionId: string; frPaymentId: string };
/** A deposit's transaction record (docs/spec.md §2). */
type DepositRecord = JsonRecord & { account_id: string };

export function depositRequest(t: TestApp, customer: TestCustomer, accountId: string, body: unknown) {
  return t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${accountId}/deposits`, key: customer.key, csrf: true, body });
}

/**
 * What the settlement tests start from: a customer (with a CSRF token) holding 1,000 EUR in an account named
 * Treasury and 10 USDC on ETH in a wallet, enough for payments, wallet transfers and OTC orders.
 */
export async function customerWithMoney(t: TestApp): Promise<{ customer: TestCustomer; csrf: string; eur: { id: string }; wallet: string }> {
  const customer = await t.createCustomer('Alice Ltd');
  const csrf = await t.csrfToken(customer.key);
  const eur = await createFiatAccount(t, customer, { accountName: 'Treasury', currency: 'EUR' });
  await deposit(t, customer, eur.id, 1000);
  const wallet = (await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf, body: {} })).json<{ data: { local_id: string } }>().data.local_id;
  const funded = await t.request({ method: 'POST', url: `/sandbox/wallets/${wallet}/deposits`, key: customer.key, csrf, body: { asset: 'USDC', network: 'ETH', amount: '10' } });
  expect(funded.statusCode, funded.body).toBe(201);
  return { customer, csrf, eur, wallet };
}

/** Funds an account (fiat or virtual) through the sandbox deposit endpoint; returns the deposit record. */
export async function deposit(t: TestApp, customer: TestCustomer, accountId: string, amount: number, extra: Record<string, unknown> = {}) {
  const response = await depositRequest(t, customer, accountId, { amount, ...extra });
  if (response.statusCode !== 201) throw new Error(`deposit answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: DepositRecord }>().data;
}

export function payRequest(t: TestApp, customer: TestCustomer, body: unknown, headers: Record<string, string> = {}) {
  return t.request({ method: 'POST', url: '/payments', key: customer.key, csrf: true, body, headers });
}

export async function pay(t: TestApp, customer: TestCustomer, body: Record<string, unknown>) {
  const response = await payRequest(t, customer, body);
  if (response.statusCode !== 201) throw new Error(`POST /payments answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: PaymentRecord }>().data;
}

export function settleRequest(t: TestApp, customer: TestCustomer, paymentId: string, outcome: unknown) {
  return t.request({ method: 'POST', url: `/sandbox/payments/${paymentId}/settle`, key: customer.key, csrf: true, body: { outcome } });
}

export async function settle(t: TestApp, customer: TestCustomer, paymentId: string, outcome: 'completed' | 'failed') {
  const response = await settleRequest(t, customer, paymentId, outcome);
  if (response.statusCode !== 200) throw new Error(`settle answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: PaymentRecord }>().data;
}

/** The `balance` a fiat account shows in GET /fiat-accounts. */
export async function fiatBalance(t: TestApp, customer: TestCustomer, accountId: string): Promise<number> {
  const response = await t.request({ url: '/fiat-accounts', key: customer.key });
  expect(response.statusCode).toBe(200);
  const account = response.json<{ data: { id: string; balance: number }[] }>().data.find((candidate) => candidate.id === accountId);
  if (!account) throw new Error(`fiat account ${accountId} not listed`);
  return account.balance;
}

/** The `balance` a virtual account shows in GET /virtual-accounts. */
export async function virtualBalance(t: TestApp, customer: TestCustomer, accountId: string): Promise<number> {
  const response = await t.request({ url: '/virtual-accounts', key: customer.key });
  expect(response.statusCode).toBe(200);
  const account = response.json<{ data: { id: string; balance: number }[] }>().data.find((candidate) => candidate.id === accountId);
  if (!account) throw new Error(`virtual account ${accountId} not listed`);
  return account.balance;
}

export interface OutboxEvent {
  type: string;
  data: Record<string, unknown>;
}

/** The customer's outbox events, oldest first. */
export async function outboxEvents(t: TestApp, customerId: string): Promise<OutboxEvent[]> {
  const rows = await t.storage.db.selectFrom('outbox_events').select(['payload']).where('customer_id', '=', customerId).orderBy('sequence', 'asc').execute();
  return rows.map((row) => JSON.parse(row.payload) as OutboxEvent);
}

/**
 * Everything money movement writes, for "nothing moved" assertions: every balance and allocation of the
 * customer, and the row counts of every table a payment touches.
 */
export async function moneySnapshot(t: TestApp, customerId: string) {
  const { db } = t.storage;
  const count = async (table: 'transactions' | 'payments' | 'outbox_events' | 'ledger_journal') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('customer_id', '=', customerId).executeTakeFirstOrThrow()).n);
  const fiat = await db.selectFrom('fiat_accounts').select(['id', 'balance_minor', 'allocated_minor']).where('customer_id', '=', customerId).orderBy('id').execute();
  const virtual = await db.selectFrom('virtual_accounts').select(['id', 'balance_minor']).where('customer_id', '=', customerId).orderBy('id').execute();
  const customer = await db.selectFrom('customers').select('transaction_count').where('id', '=', customerId).executeTakeFirstOrThrow();
  const postings = Number((await db.selectFrom('ledger_postings').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  return {
    fiat: fiat.map((row) => `${row.id}:${String(row.balance_minor)}:${String(row.allocated_minor)}`),
    virtual: virtual.map((row) => `${row.id}:${String(row.balance_minor)}`),
    transactionCount: String(customer.transaction_count),
    transactions: await count('transactions'),
    payments: await count('payments'),
    outbox: await count('outbox_events'),
    journals: await count('ledger_journal'),
    postings,
  };
}

/** The paths of the failing fields of a 400 VALIDATION_ERROR. */
export function failingPaths(response: { json(): unknown }): string[] {
  return (response.json() as { error: { details: { fields: { path: string }[] } } }).error.details.fields.map((field) => field.path);
}
