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
