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

export type EventType = (typeof eventTypes)[number];
