import { customerNow, customerTimeOf, type Clock, type CustomerClocks } from '../../clock.js';
import {
  pageLimitMax,
  webhookHealthWindowMs,
  webhookPreviousSecretTtlMs,
  webhookReplayEventsMax,
  webhookSubscriptionsPerCustomerMax,
} from '../../config/limits.js';
import { DomainError, notFound, validationError } from '../../errors.js';
import { canReadEvent, missingEventReadScopes, testEventType } from '../../events/catalog.js';
import { appendPublishedEvent } from '../../events/outbox.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import { newId } from '../../ids.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { lockCustomer } from '../customers/index.js';
import { type EventRecord, eventsSince } from '../events/index.js';
import { presentDelivery, presentDeliveryWithAttempts, presentSubscription } from './presenter.js';
import {
  attemptStats,
  countSubscriptions,
  deleteSubscription,
  deliveriesOfEvent,
  failedDeliveryEventIds,
  findDelivery,
  findSubscription,
  insertDeliveries,
  insertSubscription,
  listDeliveries,
  listSubscriptions,
  newDelivery,
  recentAttempts,
  restartDeliveries,
  retryDelivery,
  rotateSubscriptionSecret,
  updateSubscription,
  type DeliveryFilter,
  type SubscriptionRow,
} from './repository.js';
import type {
  CreateWebhookInput,
  DeliveryRecord,
  DeliveryWithAttemptsRecord,
  ReplayResultRecord,
  UpdateWebhookInput,
  WebhookHealthRecord,
  WebhookSubscriptionRecord,
  WebhookSubscriptionWithSecretRecord,
} from './schemas.js';
import type { SecretBox } from '../../storage/secret-box.js';
import { newSigningSecret } from './signing-secret.js';
import { receiverUrlProblems } from './url-policy.js';

const subscriptionLimitReached = () =>
  new DomainError('LIMIT_EXCEEDED', `A customer has at most ${webhookSubscriptionsPerCustomerMax} webhook subscriptions.`, { limit: webhookSubscriptionsPerCustomerMax });
const subscriptionDisabled = () =>
  new DomainError('WEBHOOK_DISABLED', 'This subscription is disabled; set isActive to true first.');

/**
 * A key subscribes only to events it may read (docs/webhooks.md "Scopes"): otherwise a key with webhooks:write alone
 * could have end users' personal data or payees' bank details sent to a URL of its choosing.
 */
function requireReadable(caller: AuthenticatedKey, types: readonly string[]): void {
  const missing = missingEventReadScopes(caller.scopes, types);
  if (missing.length === 0) return;
  const named = missing.join(' and ');
  const unreadable = collapsed(types).filter((type) => !canReadEvent(caller.scopes, type));
  throw new DomainError('INSUFFICIENT_SCOPE', `This API key lacks the scope ${named} needed to receive ${unreadable.join(', ')} events.`, {
    required_scope: named,
    event_types: unreadable,
  });
}

/** Event types in their canonical spelling (the schema already matched them regardless of case), each once, in order. */
function collapsed(types: readonly string[]): string[] {
  return [...new Set(types)];
}

/** Whether a PATCH would change the subscription: a value it does not have, or an `isActive` that does something. */
function changesAnything(current: SubscriptionRow, changes: Partial<SubscriptionRow>, isActive: boolean | undefined): boolean {
  const differs = (['url', 'description', 'event_types'] as const).some((column) => changes[column] !== undefined && changes[column] !== current[column]);
  if (differs) return true;
  const active = Number(current.is_active) === 1;
  // Turning it on also clears a run of failures; turning it off matters only to an active one.
  if (isActive === true) return !active || Number(current.consecutive_failures) !== 0 || current.failing_since !== null || current.disabled_at !== null;
  return isActive === false && active;
}

interface WebhookServiceSettings {
  allowPrivateUrls: boolean;
  /** When the delivery worker disables a failing subscription (a subscription's health says how far it is). */
  disableAfter: { failures: number; failingMs: number };
  /** How far back a replay reaches: as long as events are kept (EVENT_RETENTION_DAYS), whole days. */
  replayWindowDays: number;
}

export class WebhookService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    /** A customer with a test clock attached has its deliveries and their health in the clock's time (docs/test-clocks.md). */
    private readonly customerClocks: CustomerClocks,
    private readonly secrets: SecretBox,
    private readonly settings: WebhookServiceSettings,
    /** Wakes the delivery worker after deliveries were queued by a request (test, replay). */
    private readonly onDeliveriesQueued: () => void,
  ) {}

  /** How far back a replay's `since` may be, in days: EVENT_RETENTION_DAYS, since older events are deleted. */
  get replayWindowDays(): number {
    return this.settings.replayWindowDays;
  }

  /** `onCreated` runs in the transaction that writes the subscription (an Idempotency-Key's answer is stored there). */
  async create(
    caller: AuthenticatedKey,
    input: CreateWebhookInput,
    onCreated?: OnCreated<WebhookSubscriptionWithSecretRecord>,
  ): Promise<WebhookSubscriptionWithSecretRecord> {
    this.checkUrl(input.url);
    requireReadable(caller, input.eventTypes);
    const { secret, prefix } = newSigningSecret();
    const now = this.clock.now().toISOString();
    const active = input.isActive ?? true;
    const row: SubscriptionRow = {
      id: newId(),
      customer_id: caller.customerId,
      url: input.url,
      description: input.description ?? '',
      event_types: JSON.stringify(collapsed(input.eventTypes)),
      is_active: active ? 1 : 0,
      secret_encrypted: this.secrets.seal(secret),
      signing_secret_prefix: prefix,
      previous_secret_encrypted: null,
      previous_secret_expires_at: null,
      consecutive_failures: 0,
      failing_since: null,
      disabled_at: active ? null : now,
      disabled_reason: active ? null : 'disabled by request',
      created_at: now,
      updated_at: now,
    };
    const record = { ...presentSubscription(row), signing_secret: secret };
    await this.storage.transaction(async (trx) => {
      await lockCustomer(trx, this.storage, caller.customerId);
      if ((await countSubscriptions(trx, caller.customerId)) >= webhookSubscriptionsPerCustomerMax) throw subscriptionLimitReached();
      await insertSubscription(trx, row);
      await onCreated?.(trx, record);
    });
    return record;
  }

  async list(caller: AuthenticatedKey): Promise<WebhookSubscriptionRecord[]> {
    return (await listSubscriptions(this.storage.db, caller.customerId)).map(presentSubscription);
  }

  async get(caller: AuthenticatedKey, id: string): Promise<WebhookSubscriptionRecord> {
    return presentSubscription(await this.require(caller, id));
  }

  /**
   * docs/spec.md §4 PATCH. Turning a subscription on clears its run of failures and the reason it was disabled; turning it
   * off records when and that it was by request. New event types must be readable by the key, and so must the
   * types it lists when the key sends it to another URL: a key cannot redirect events it may not read.
   */
  async update(caller: AuthenticatedKey, id: string, input: UpdateWebhookInput): Promise<WebhookSubscriptionRecord> {
    if (input.url !== undefined) this.checkUrl(input.url);
    if (input.eventTypes !== undefined) requireReadable(caller, input.eventTypes);
    const now = this.clock.now().toISOString();
    const changes: Partial<SubscriptionRow> = { updated_at: now };
    if (input.url !== undefined) changes.url = input.url;
    if (input.description !== undefined) changes.description = input.description;
    if (input.eventTypes !== undefined) changes.event_types = JSON.stringify(collapsed(input.eventTypes));
    const updated = await this.storage.transaction(async (trx) => {
      // Locked until the change commits: the types checked are the types redirected, and what is compared is what
      // would be written over (the delivery worker may disable it meanwhile).
      const current = await findSubscription(trx, caller.customerId, id, this.storage.dialect === 'postgres');
      if (!current) throw notFound('webhook subscription');
      if (input.url !== undefined && input.eventTypes === undefined && current.url !== input.url) {
        requireReadable(caller, JSON.parse(current.event_types) as string[]);
      }
      // A PATCH that changes nothing ({}, or the values it has) writes nothing: updated_at keeps its value.
      if (!changesAnything(current, changes, input.isActive)) return current;
      return updateSubscription(trx, caller.customerId, id, changes, input.isActive, now);
    });
    if (!updated) throw notFound('webhook subscription');
    // Enabled again: its pending deliveries are due to the delivery worker once more.
    if (input.isActive === true) this.onDeliveriesQueued();
    return presentSubscription(updated);
  }

  /** Deletes the subscription with its deliveries and their attempts; the events stay (GET /events). */
  async delete(caller: AuthenticatedKey, id: string): Promise<void> {
    if (!(await this.storage.transaction((trx) => deleteSubscription(trx, caller.customerId, id)))) throw notFound('webhook subscription');
  }

  /** A new secret from now on; the old one keeps signing alongside it for a day (docs/webhooks.md "Rotation"). */
  async rotateSecret(caller: AuthenticatedKey, id: string): Promise<WebhookSubscriptionWithSecretRecord> {
    const { secret, prefix } = newSigningSecret();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + webhookPreviousSecretTtlMs).toISOString();
    const updated = await rotateSubscriptionSecret(this.storage.db, caller.customerId, id, this.secrets.seal(secret), prefix, expiresAt, now.toISOString());
    if (!updated) throw notFound('webhook subscription');
    return { ...presentSubscription(updated), signing_secret: secret };
  }

  /** Queues a signed `webhook.test` event to this subscription alone; the delivery shows in its deliveries. */
  async sendTest(caller: AuthenticatedKey, id: string): Promise<{ delivery_id: string; event: EventRecord }> {
    const subscription = await this.require(caller, id);
    if (Number(subscription.is_active) !== 1) throw subscriptionDisabled();
    const now = this.clock.now().toISOString();
    const event: EventRecord = { id: newId(), type: testEventType, created_at: now, data: { webhook_id: subscription.id, message: 'A test event sent on request.' } };
    const delivery = newDelivery(subscription.id, caller.customerId, { id: event.id, event_type: testEventType }, now, await customerTimeOf(this.customerClocks, this.clock, caller.customerId));
    await this.storage.transaction(async (trx) => {
      await appendPublishedEvent(trx, caller.customerId, event);
      await insertDeliveries(trx, this.storage.dialect, [delivery]);
    });
    this.onDeliveriesQueued();
    return { delivery_id: delivery.id, event };
  }

  /**
   * Sends the customer's events from `since` on again to this subscription (those of the types it lists), at most
   * webhookReplayEventsMax per call; `next_since` says where the next call starts when there were more. An event
   * already delivered keeps its webhook-id, so a receiver that saw it can tell.
   */
  async replay(caller: AuthenticatedKey, id: string, since: string, onlyFailed = false): Promise<ReplayResultRecord> {
    const now = this.clock.now();
    const days = this.settings.replayWindowDays;
    const oldest = new Date(now.getTime() - days * 86_400_000);
    if (Date.parse(since) < oldest.getTime() || Date.parse(since) > now.getTime()) {
      throw validationError([{ location: 'body', path: '/since', reason: `must be within the last ${days} days` }]);
    }
    const subscription = await this.require(caller, id);
    if (Number(subscription.is_active) !== 1) throw subscriptionDisabled();
    // Only what the replaying key may read: a key cannot have events sent that it could not list itself.
    const types = (JSON.parse(subscription.event_types) as string[]).filter((type) => canReadEvent(caller.scopes, type));
    const events = types.length === 0 ? [] : await eventsSince(this.storage.db, caller.customerId, types, since, now.toISOString(), webhookReplayEventsMax);
    // When there are more, the batch ends before the first event of the next one's millisecond, so the next call
    // (from that millisecond on) queues each event once.
    const boundary = events.length > webhookReplayEventsMax ? events[webhookReplayEventsMax]!.created_at : null;
    const beforeBoundary = boundary === null ? events : events.filter((event) => event.created_at < boundary);
    const batch = beforeBoundary.length > 0 ? beforeBoundary : events.slice(0, webhookReplayEventsMax);
    const nowText = now.toISOString();
    const due = await customerTimeOf(this.customerClocks, this.clock, caller.customerId);
    const queued = await this.storage.transaction(async (trx) => {
      // onlyFailed: of the batch, the events whose delivery here failed; read in the transaction that restarts them.
      const failed = onlyFailed ? await failedDeliveryEventIds(trx, subscription.id, batch.map((event) => event.id)) : undefined;
      const chosen = failed ? batch.filter((event) => failed.has(event.id)) : batch;
      const deliveries = chosen.map((event) => newDelivery(subscription.id, caller.customerId, event, nowText, due));
      await restartDeliveries(trx, this.storage.dialect, deliveries);
      return deliveries;
    });
    if (queued.length > 0) this.onDeliveriesQueued();
    return { queued: queued.length, next_since: boundary === null ? null : beforeBoundary.length > 0 ? boundary : new Date(Date.parse(boundary) + 1).toISOString() };
  }

  /**
   * Sends one delivery again now (docs/webhooks.md "Retrying one delivery"): the next attempt of it, under the same
   * webhook-id. One being attempted is answered as it is (`retried` false).
   */
  async retry(caller: AuthenticatedKey, id: string, deliveryId: string): Promise<{ delivery: DeliveryRecord; retried: boolean }> {
    const subscription = await this.require(caller, id);
    if (Number(subscription.is_active) !== 1) throw subscriptionDisabled();
    // Due now in the customer's time (a test clock's, or the server's).
    const due = await customerTimeOf(this.customerClocks, this.clock, caller.customerId);
    const retried = await retryDelivery(this.storage.db, caller.customerId, id, deliveryId, due, this.clock.now().toISOString());
    const row = retried ?? (await findDelivery(this.storage.db, caller.customerId, id, deliveryId));
    if (!row) throw notFound('webhook delivery');
    if (retried) this.onDeliveriesQueued();
    return { delivery: presentDelivery(row), retried: retried !== undefined };
  }

  /** How the subscription's receiver is doing: its last success, its run of failures, the last 24 hours, and how close it is to being disabled. */
  async health(caller: AuthenticatedKey, id: string): Promise<WebhookHealthRecord> {
    const subscription = await this.require(caller, id);
    // The attempts, the run of failures and the rule that disables are in the customer's time (a test clock's).
    const now = await customerNow(this.customerClocks, this.clock, caller.customerId);
    const stats = await attemptStats(this.storage.db, id, new Date(now.getTime() - webhookHealthWindowMs).toISOString());
    const attempts = stats.succeeded + stats.failed;
    const active = Number(subscription.is_active) === 1;
    const failures = Number(subscription.consecutive_failures);
    const failingSince = subscription.failing_since;
    let autoDisable: WebhookHealthRecord['auto_disable'] = null;
    if (active && failingSince !== null) {
      const notBefore = Date.parse(failingSince) + this.settings.disableAfter.failingMs;
      autoDisable = {
        failures_left: Math.max(this.settings.disableAfter.failures - failures, 0),
        not_before: new Date(notBefore).toISOString(),
        seconds_left: Math.max(Math.ceil((notBefore - now.getTime()) / 1000), 0),
      };
    }
    return {
      status: !active ? 'disabled' : failures > 0 ? 'failing' : 'healthy',
      last_success_at: stats.lastSuccessAt,
      failing_since: failingSince,
      consecutive_failures: failures,
      attempts_24h: attempts,
      failed_attempts_24h: stats.failed,
      error_rate_24h: attempts === 0 ? null : stats.failed / attempts,
      auto_disable: autoDisable,
    };
  }

  /** The deliveries of one of the customer's events, as the deliveries list shows them (GET /events/{eventId}). */
  async deliveriesOfEvent(caller: AuthenticatedKey, eventId: string): Promise<DeliveryRecord[]> {
    return (await deliveriesOfEvent(this.storage.db, caller.customerId, eventId)).map(presentDelivery);
  }

  /** A page of the subscription's deliveries, newest first: their state and last outcome, not their attempts. */
  async deliveries(caller: AuthenticatedKey, id: string, status: DeliveryFilter | undefined, page: number, limit: number) {
    await this.require(caller, id);
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await listDeliveries(this.storage.db, caller.customerId, id, status, (page - 1) * size, size);
    return { data: rows.map(presentDelivery), meta: { pagination: { page, limit: size, total: Number(total) } } };
  }

  /** One delivery of the subscription with its most recent attempts and what each exchanged. */
  async delivery(caller: AuthenticatedKey, id: string, deliveryId: string): Promise<DeliveryWithAttemptsRecord> {
    await this.require(caller, id);
    const row = await findDelivery(this.storage.db, caller.customerId, id, deliveryId);
    if (!row) throw notFound('webhook delivery');
    return presentDeliveryWithAttempts(row, await recentAttempts(this.storage.db, [row.id]));
  }

  private async require(caller: AuthenticatedKey, id: string): Promise<SubscriptionRow> {
    const row = await findSubscription(this.storage.db, caller.customerId, id);
    if (!row) throw notFound('webhook subscription');
    return row;
  }

  private checkUrl(url: string): void {
    const problems = receiverUrlProblems(url, this.settings.allowPrivateUrls);
    if (problems.length > 0) throw validationError(problems);
  }
}
