import type { Transaction } from 'kysely';
import type { Guard, KeyedAnswer } from '../ledger/unit-of-work.js';
import type { Database } from '../storage/tables.js';

/**
 * How a provider reports an outcome (docs/providers.md "Reporting outcomes"): it never changes a balance or a status
 * itself. It writes a provider event into the inbox (providers/inbox.ts) — from a provider webhook route, a poller,
 * or, for the sandbox, its timer, magic values and simulation routes — and the resource's lifecycle applies it.
 *
 * An event names its resource and outcome in its type, the resource by the provider's own id of it (`reference`),
 * and carries a key unique per provider: the same outcome reported twice is written once.
 */
export const providerEventTypes = [
  // payments (modules/payments/lifecycle.ts); reference: the payment's fr_payment_id; payload { reason? }
  'payment.completed',
  'payment.failed',
  // wallet transfers (modules/wallets/lifecycle.ts); reference: the transfer's fr_transfer_id;
  // payload { txHash } when completed, { reason? } when failed
  'wallet_transfer.completed',
  'wallet_transfer.failed',
  // OTC orders (modules/otc/lifecycle.ts); reference: the order's id; payload { reason? } when failed
  'otc_order.debited',
  'otc_order.settled',
  'otc_order.failed',
  // end-user verification (modules/end-users/lifecycle.ts); reference: the end user's fr_end_user_id
  'end_user.verified',
  'end_user.rejected',
  'end_user.review_required',
  // document sync (modules/documents/lifecycle.ts); reference: the document's fr_document_id; payload { reason? }
  'document.synced',
  'document.rejected',
  // account and payee statuses (modules/status-change.ts, used by each module's lifecycle.ts); reference: the
  // fr_account_id, fr_virtual_account_id or fr_payee_id; payload { status }
  'fiat_account.status_changed',
  'virtual_account.status_changed',
  'payee.status_changed',
  // money arriving from outside into a fiat or virtual account (modules/deposits/lifecycle.ts); reference: the bank's
  // id of the incoming transfer (the statement line's fr_transaction_id); payload { account (its fr_account_id or
  // fr_virtual_account_id), amount (decimal string), currency, reference? (the sender's), counterpartyName? }
  'deposit.received',
  // crypto arriving at a wallet's address (modules/wallets/deposits.ts); reference: the custodian's id of the incoming
  // transfer (its fr_transfer_id); payload { address, asset, network, amount (decimal string), txHash }
  'wallet_deposit.received',
] as const;

export type ProviderEventType = (typeof providerEventTypes)[number];

/** The resource an event type is about: the part before the dot. */
export type ProviderEventResource<T extends string = ProviderEventType> = T extends `${infer Resource}.${string}` ? Resource : never;

export function resourceOf(type: ProviderEventType): ProviderEventResource {
  return type.slice(0, type.indexOf('.')) as ProviderEventResource;
}

/** An event as a provider reports it. */
export interface ReportedProviderEvent {
  /** The adapter's name (`sandbox`, `http`). */
  provider: string;
  type: ProviderEventType;
  reference: string;
  /** Unique per provider: the provider's own event id, or one derived from what makes the outcome unique. */
  idempotencyKey: string;
  /** What the outcome says beyond its type (a failure's reason); a JSON object. */
  payload: Record<string, unknown>;
}

/** An event as the inbox holds it. */
export interface ProviderEvent extends ReportedProviderEvent {
  id: bigint;
}

/**
 * How a lifecycle marks the event applied in the same unit of work as its effect, so an event is applied exactly
 * once: a money movement takes `guard` into its unit of work (`work.guards`: the movement fails unless the event is
 * still received), any other change calls `inTransaction` in its database transaction.
 */
export interface AppliedMark {
  guard: Guard;
  inTransaction(trx: Transaction<Database>): Promise<void>;
  /**
   * The Idempotency-Key of the request that reported the event and applies it at once (a sandbox simulation route
   * run under one): a lifecycle that moves money stores the request's answer in the same unit of work.
   */
  answer?: KeyedAnswer;
}

/**
 * One resource's lifecycle as the inbox sees it: it applies the events of its resource, or refuses them with a
 * DomainError (an unknown reference, a transition its state machine does not allow), which leaves the event failed
 * with that reason. Its answer is the resource's record after the change (the simulation routes answer it).
 */
export interface Lifecycle<Resource extends ProviderEventResource = ProviderEventResource> {
  readonly resource: Resource;
  apply(event: ProviderEvent, applied: AppliedMark): Promise<unknown>;
}
