import { grants, type Scope } from '../modules/api-keys/index.js';

/** Spec §6: the event types a webhook subscription may list. */
export const eventTypes = [
  'payment.created',
  'payment.status_updated',
  'payment.completed',
  'payment.failed',
  'fiat_account.created',
  'fiat_account.status_updated',
  'fiat_account.balance_updated',
  'virtual_account.created',
  'virtual_account.status_updated',
  'virtual_account.balance_updated',
  'end_user.created',
  'end_user.status_updated',
  'end_user.review_required',
  'payee.created',
  'payee.status_updated',
] as const;

/**
 * Beyond spec §6, in the same shape (`data` the resource's record): wallet transfers and deposits (docs/wallets.md
 * "Events"), OTC orders (docs/otc.md). The spec's list above stays exactly as it is.
 */
export const additiveEventTypes = [
  'wallet_transfer.created',
  'wallet_transfer.status_updated',
  'wallet_transfer.completed',
  'wallet_transfer.failed',
  'otc_order.created',
  'otc_order.status_updated',
] as const;

export type EventType = (typeof eventTypes)[number] | (typeof additiveEventTypes)[number];

/** The type of the event POST /webhooks/{id}/test sends; it goes to that subscription only, whatever it lists. */
export const testEventType = 'webhook.test';

/**
 * The one scope a key needs to read an event of each type, in GET /events, in the types a subscription it creates
 * or redirects lists, and in what it replays (docs/webhooks.md "Scopes"): the read scope of the resource in `data`,
 * so the feed never shows a key what the resource's own GET would refuse it. A type added above without an entry
 * here does not compile.
 */
export const eventReadScopes: Readonly<Record<EventType | typeof testEventType, Scope>> = {
  'payment.created': 'payments:read',
  'payment.status_updated': 'payments:read',
  'payment.completed': 'payments:read',
  'payment.failed': 'payments:read',
  'fiat_account.created': 'fiat-accounts:read',
  'fiat_account.status_updated': 'fiat-accounts:read',
  'fiat_account.balance_updated': 'fiat-accounts:read',
  'virtual_account.created': 'virtual-accounts:read',
  'virtual_account.status_updated': 'virtual-accounts:read',
  'virtual_account.balance_updated': 'virtual-accounts:read',
  'end_user.created': 'end-users:read',
  'end_user.status_updated': 'end-users:read',
  'end_user.review_required': 'end-users:read',
  'payee.created': 'payees:read',
  'payee.status_updated': 'payees:read',
  'wallet_transfer.created': 'wallets:read',
  'wallet_transfer.status_updated': 'wallets:read',
  'wallet_transfer.completed': 'wallets:read',
  'wallet_transfer.failed': 'wallets:read',
  'otc_order.created': 'otc-exchanges:read',
  'otc_order.status_updated': 'otc-exchanges:read',
  [testEventType]: 'webhooks:read',
};

/** Whether a key with these scopes may read events of this type; a type outside the catalogue, never. */
export function canReadEvent(scopes: readonly Scope[], type: string): boolean {
  const required = (eventReadScopes as Record<string, Scope | undefined>)[type];
  return required !== undefined && grants(scopes, required);
}

/** The types a key may read, or undefined when it may read them all (nothing to filter). */
export function readableEventTypes(scopes: readonly Scope[]): string[] | undefined {
  const types = Object.keys(eventReadScopes);
  const readable = types.filter((type) => canReadEvent(scopes, type));
  return readable.length === types.length ? undefined : readable;
}

/** The scopes a key lacks to read events of these types, each once. */
export function missingEventReadScopes(scopes: readonly Scope[], types: readonly string[]): Scope[] {
  return [...new Set(types.filter((type) => !canReadEvent(scopes, type)).map((type) => eventReadScopes[type as EventType]))];
}
