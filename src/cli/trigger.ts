import { randomUUID } from 'node:crypto';
import { additiveEventTypes, eventTypes, type EventType } from '../events/catalog.js';
import type { ApiClient } from './api-client.js';

/** What a recipe made: each resource's id, by name, as `trigger` prints it. */
type Made = Record<string, string>;
type Recipe = (api: ApiClient) => Promise<Made>;

/** The record a create answers: its id under the name its resource uses. */
interface Created {
  data: { id?: string; local_id?: string; quoteId?: string; orderId?: string };
}

const address = { line1: '1 Main Street', city: 'Berlin', postalCode: '10115', country: 'DE' };

async function create(api: ApiClient, path: string, body: unknown = {}, idempotencyKey?: string): Promise<string> {
  const { data } = await api.post<Created>(path, body, idempotencyKey);
  return data.id ?? data.local_id ?? data.orderId ?? data.quoteId ?? '';
}

/** A new EUR fiat account. */
async function fiatAccount(api: ApiClient, made: Made): Promise<string> {
  made.fiat_account = await create(api, 'fiat-accounts', { accountName: 'Trigger', currency: 'EUR' });
  return made.fiat_account;
}

async function fundedAccount(api: ApiClient, made: Made, amount: number): Promise<string> {
  const account = await fiatAccount(api, made);
  made.deposit = await create(api, `sandbox/fiat-accounts/${account}/deposits`, { amount, reference: 'customer-api trigger' });
  return account;
}

function payment(outcome: 'completed' | 'failed'): Recipe {
  return async (api) => {
    const made: Made = {};
    const account = await fundedAccount(api, made, 100);
    made.payee = await create(api, 'payees', { name: 'Trigger Payee GmbH', address, bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' } });
    made.payment = await create(api, 'payments', { fromAccountId: account, payeeId: made.payee, amount: 10, currency: 'EUR', reference: `customer-api trigger ${randomUUID().slice(0, 8)}` });
    await api.post(`sandbox/payments/${made.payment}/settle`, { outcome });
    return made;
  };
}

function endUser(outcome?: 'verified' | 'review_required'): Recipe {
  return async (api) => {
    const made: Made = {};
    made.end_user = await create(api, 'end-users', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', dob: '1990-12-10', address });
    if (outcome !== undefined) await api.post(`sandbox/end-users/${made.end_user}/verification`, { outcome });
    return made;
  };
}

const fiatAccountFrozen: Recipe = async (api) => {
  const made: Made = {};
  await api.post(`sandbox/fiat-accounts/${await fiatAccount(api, made)}/status`, { status: 'frozen' });
  return made;
};

const payee = (deactivate: boolean): Recipe => async (api) => {
  const made: Made = { payee: await create(api, 'payees', { name: 'Trigger Payee GmbH', address, bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' } }) };
  if (deactivate) await api.post(`sandbox/payees/${made.payee}/status`, { status: 'inactive' });
  return made;
};

/** A virtual account under the customer's master EUR account (made first when the customer has none). */
function virtualAccount(then?: 'frozen' | 'deposit'): Recipe {
  return async (api) => {
    const made: Made = {};
    const accounts = await api.get<{ data: Array<{ id: string; currency: string; is_master: boolean; status: string }> }>('fiat-accounts?limit=100');
    const master = accounts.data.find((account) => account.is_master && account.currency === 'EUR' && account.status === 'active');
    made.master_fiat_account = master?.id ?? (await fiatAccount(api, made));
    made.virtual_account = await create(api, 'virtual-accounts', { accountName: 'Trigger', masterFiatAccountId: made.master_fiat_account, currency: 'EUR' });
    if (then === 'frozen') await api.post(`sandbox/virtual-accounts/${made.virtual_account}/status`, { status: 'frozen' });
    if (then === 'deposit') made.deposit = await create(api, `sandbox/fiat-accounts/${made.virtual_account}/deposits`, { amount: 25, reference: 'customer-api trigger' });
    return made;
  };
}

function walletTransfer(outcome: 'completed' | 'failed'): Recipe {
  return async (api) => {
    const made: Made = {};
    made.wallet = await create(api, 'wallets', { displayName: 'Trigger' });
    made.deposit = await create(api, `sandbox/wallets/${made.wallet}/deposits`, { asset: 'USDC', network: 'ETH', amount: '50' });
    made.wallet_transfer = await create(api, `wallets/${made.wallet}/transfers`, { asset: 'USDC', network: 'ETH', amount: '10', destination: '0x52908400098527886e0f7030069857d2e4169ee7', note: 'customer-api trigger' });
    await api.post(`sandbox/wallet-transfers/${made.wallet_transfer}/settle`, { outcome });
    return made;
  };
}

const walletDeposit: Recipe = async (api) => {
  const made: Made = {};
  made.wallet = await create(api, 'wallets', { displayName: 'Trigger' });
  made.wallet_transfer = await create(api, `sandbox/wallets/${made.wallet}/deposits`, { asset: 'USDC', network: 'ETH', amount: '50' });
  return made;
};

const otcOrder: Recipe = async (api) => {
  const made: Made = {};
  const account = await fundedAccount(api, made, 1000);
  made.wallet = await create(api, 'wallets', { displayName: 'Trigger' });
  made.otc_quote = await create(api, 'otc-exchanges/quote', { sourceFrAccountId: account, destinationProviderWalletId: made.wallet, sourceAmountEur: '100.00' });
  made.otc_order = await create(api, 'otc-exchanges', { quoteId: made.otc_quote }, randomUUID());
  await api.post(`sandbox/otc-orders/${made.otc_order}/settle`, { outcome: 'completed' });
  return made;
};

/**
 * How the sandbox is driven so each event type fires (docs/cli.md "trigger"; the emitters: docs/webhooks.md "Events"):
 * every type of the catalogue has a recipe (a type added without one does not compile). Each makes its own
 * resources, so a recipe fires the other events of its path too (a payment also fires payment.created, a deposit
 * fiat_account.balance_updated).
 */
const recipes: Readonly<Record<EventType, Recipe>> = {
  'payment.created': payment('completed'),
  'payment.status_updated': payment('completed'),
  'payment.completed': payment('completed'),
  'payment.failed': payment('failed'),
  'fiat_account.created': async (api) => {
    const made: Made = {};
    await fiatAccount(api, made);
    return made;
  },
  'fiat_account.status_updated': fiatAccountFrozen,
  'fiat_account.balance_updated': async (api) => {
    const made: Made = {};
    await fundedAccount(api, made, 100);
    return made;
  },
  'virtual_account.created': virtualAccount(),
  'virtual_account.status_updated': virtualAccount('frozen'),
  'virtual_account.balance_updated': virtualAccount('deposit'),
  'end_user.created': endUser(),
  'end_user.status_updated': endUser('verified'),
  'end_user.review_required': endUser('review_required'),
  'payee.created': payee(false),
  'payee.status_updated': payee(true),
  'wallet_transfer.created': walletDeposit,
  'wallet_transfer.status_updated': walletTransfer('completed'),
  'wallet_transfer.completed': walletDeposit,
  'wallet_transfer.failed': walletTransfer('failed'),
  'otc_order.created': otcOrder,
  'otc_order.status_updated': otcOrder,
};

export const triggerableEventTypes: readonly string[] = [...eventTypes, ...additiveEventTypes];

/** `customer-api trigger EVENT_TYPE`: makes what the event needs, so it fires; the ids made, by name. */
export async function trigger(api: ApiClient, eventType: string): Promise<{ event_type: string; created: Made }> {
  const recipe = (recipes as Record<string, Recipe | undefined>)[eventType];
  if (recipe === undefined) throw new Error(`unknown event type "${eventType}"; known types: ${triggerableEventTypes.join(', ')}`);
  return { event_type: eventType, created: await recipe(api) };
}
