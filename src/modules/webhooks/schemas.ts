import { Type, type Static } from 'typebox';
import {
  pageLimitDefault,
  pageLimitMax,
  pageMax,
  webhookAttemptsListedMax,
  webhookDescriptionLengthMax,
  webhookEventTypesMax,
  webhookEventTypesMin,
  webhookResponseBodyStoredBytesMax,
  webhookResponseHeaderValueLengthMax,
  webhookResponseHeadersStoredMax,
  webhookUrlLengthMax,
} from '../../config/limits.js';
import { additiveEventTypes, eventTypes } from '../../events/catalog.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { Event } from '../events/index.js';

/** The types a subscription may list: docs/spec.md §6, then the additive ones (docs/decisions/0008-webhooks.md). */
export const subscribableEventTypes = [...eventTypes, ...additiveEventTypes] as const;
const EventTypeName = StringEnum(subscribableEventTypes, { description: 'An event type of spec §6, or an additive one (docs/webhooks.md)' });

const Url = Type.String({ minLength: 1, maxLength: webhookUrlLengthMax, description: 'An absolute https URL (http and private addresses only with WEBHOOK_ALLOW_PRIVATE_URLS=true)' });
const Description = Type.String({ maxLength: webhookDescriptionLengthMax });
const EventTypeList = Type.Array(EventTypeName, {
  minItems: webhookEventTypesMin,
  maxItems: webhookEventTypesMax,
  description: 'Any case; duplicates are collapsed',
});

/** Not shown in docs/spec.md §4 (additive: docs/architecture.md, Additive endpoints): the fields of PATCH, url and eventTypes required. */
export const CreateWebhookBody = Type.Object(
  { url: Url, eventTypes: EventTypeList, description: Type.Optional(Description), isActive: Type.Optional(Type.Boolean({ default: true })) },
  {
    title: 'CreateWebhookRequest',
    additionalProperties: false,
    examples: [{ url: 'https://example.com/webhooks', eventTypes: ['payment.created', 'payment.completed'], description: 'Payments into our ledger' }],
  },
);
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

/** docs/spec.md §4 PATCH /webhooks/{webhookId}. */
export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(Url), description: Type.Optional(Description), eventTypes: Type.Optional(EventTypeList), isActive: Type.Optional(Type.Boolean()) },
  { title: 'UpdateWebhookRequest', additionalProperties: false },
);
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

const subscriptionProperties = {
  id: Uuid,
  url: Type.String(),
  description: Type.String(),
  event_types: Type.Array(Type.String()),
  is_active: Type.Boolean(),
  signing_secret_prefix: Type.String({ description: 'The first characters of the signing secret' }),
  consecutive_failures: Type.Integer(),
  disabled_at: Nullable(Timestamp),
  disabled_reason: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/** docs/spec.md §2 webhook subscription record, exactly. */
export const WebhookSubscription = Type.Object(subscriptionProperties, { title: 'WebhookSubscription', additionalProperties: false });
export type WebhookSubscriptionRecord = Static<typeof WebhookSubscription>;

/** The record with the whole secret: answered once, by POST /webhooks and by rotate-secret. */
export const WebhookSubscriptionWithSecret = Type.Object(
  { ...subscriptionProperties, signing_secret: Type.String({ description: 'whsec_… — shown only in this answer' }) },
  { title: 'WebhookSubscriptionWithSecret', additionalProperties: false },
);
export type WebhookSubscriptionWithSecretRecord = Static<typeof WebhookSubscriptionWithSecret>;

export const WebhookParams = Type.Object({ webhookId: Uuid }, { additionalProperties: false });

const PageQueryProperties = {
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: pageMax, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, default: pageLimitDefault, description: `Clamped to ${pageLimitMax}` })),
};

export const DeliveriesQuery = Type.Object(
  {
    ...PageQueryProperties,
    status: Type.Optional(
      StringEnum(['pending', 'succeeded', 'failed', 'failing'] as const, {
        description: 'failing: failed, or pending after a failed attempt (being retried)',
      }),
    ),
  },
  { additionalProperties: false },
);

export type DeliveriesQueryInput = Static<typeof DeliveriesQuery>;

export const DeliveryParams = Type.Object({ webhookId: Uuid, deliveryId: Uuid }, { additionalProperties: false });

const Headers = (description: string) => Type.Record(Type.String(), Type.String(), { description });

const Attempt = Type.Object(
  {
    attempt_number: Type.Integer({ description: 'Counted from 1 since the delivery was created or replayed' }),
    succeeded: Type.Boolean(),
    status_code: Nullable(Type.Integer({ description: 'The receiver’s HTTP status; null when none came (timeout, refused address…)' })),
    duration_ms: Type.Integer(),
    error: Nullable(Type.String()),
    request_headers: Nullable(Headers('The headers sent; null for attempts recorded before they were kept')),
    response_headers: Nullable(
      Headers(`The receiver’s headers (at most ${webhookResponseHeadersStoredMax}, each value cut to ${webhookResponseHeaderValueLengthMax} characters; a set-cookie value is not kept); null when no answer came`),
    ),
    response_body: Nullable(Type.String({ description: `The first ${webhookResponseBodyStoredBytesMax} bytes of the receiver’s answer, as text; null when no answer came` })),
    response_body_truncated: Type.Boolean({ description: 'Whether the answer was longer than response_body' }),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

const deliveryProperties = {
  id: Type.String({ description: 'The webhook-id header of every attempt' }),
  subscription_id: Uuid,
  event_id: Uuid,
  event_type: Type.String(),
  status: Type.String({ description: 'pending, succeeded or failed (the retry schedule exhausted)' }),
  attempt_count: Type.Integer(),
  next_attempt_at: Nullable(Timestamp),
  last_attempt_at: Nullable(Timestamp),
  last_status_code: Nullable(Type.Integer()),
  last_error: Nullable(Type.String()),
  created_at: Timestamp,
  updated_at: Timestamp,
};

/**
 * One event to one subscription, as lists show it: its state and last outcome, without its attempts, whose exchanges
 * (headers, up to 4 KiB of answer each) would make a page of them megabytes; one delivery's read has them.
 */
export const Delivery = Type.Object(deliveryProperties, { title: 'WebhookDelivery', additionalProperties: false });
export type DeliveryRecord = Static<typeof Delivery>;

/** GET /webhooks/{id}/deliveries/{deliveryId}: the delivery and its most recent attempts, newest first, with what each exchanged. */
export const DeliveryWithAttempts = Type.Object(
  { ...deliveryProperties, attempts: Type.Array(Attempt, { description: `Its ${webhookAttemptsListedMax} most recent attempts, newest first` }) },
  { title: 'WebhookDeliveryWithAttempts', additionalProperties: false },
);
export type DeliveryWithAttemptsRecord = Static<typeof DeliveryWithAttempts>;
export type AttemptRecord = Static<typeof Attempt>;

export const ReplayBody = Type.Object(
  {
    since: Type.String({ format: 'date-time', description: 'Events created at or after this moment, at most EVENT_RETENTION_DAYS ago (the retention of events, 30 days by default)' }),
    onlyFailed: Type.Optional(Type.Boolean({ default: false, description: 'Only the events whose delivery to this subscription has failed' })),
  },
  { title: 'ReplayWebhookEventsRequest', additionalProperties: false },
);

/** GET /webhooks/{id}/health: how the subscription's receiver is doing (docs/webhooks.md "Health"). */
export const WebhookHealth = Type.Object(
  {
    status: StringEnum(['healthy', 'failing', 'disabled'] as const, { description: 'failing: active, and its last attempt failed' }),
    last_success_at: Nullable(Timestamp),
    failing_since: Nullable(Type.String({ format: 'date-time', description: 'When the current run of failed attempts began' })),
    consecutive_failures: Type.Integer(),
    attempts_24h: Type.Integer({ description: 'Attempts over the last 24 hours' }),
    failed_attempts_24h: Type.Integer(),
    error_rate_24h: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'failed_attempts_24h / attempts_24h; null without attempts' })),
    auto_disable: Nullable(
      Type.Object(
        {
          failures_left: Type.Integer({ description: 'Further consecutive failed attempts before it can be disabled' }),
          not_before: Type.String({ format: 'date-time', description: 'It can be disabled no earlier than this' }),
          seconds_left: Type.Integer({ description: 'Until not_before, from now; 0 once passed' }),
        },
        { additionalProperties: false, description: 'While failing: the first failed attempt with no failures left after not_before disables it. Null otherwise.' },
      ),
    ),
  },
  { title: 'WebhookHealth', additionalProperties: false },
);
export type WebhookHealthRecord = Static<typeof WebhookHealth>;

export const ReplayResult = Type.Object(
  {
    queued: Type.Integer({ description: 'Events queued for delivery to this subscription' }),
    next_since: Nullable(Timestamp),
  },
  { title: 'WebhookReplayResult', additionalProperties: false },
);
export type ReplayResultRecord = Static<typeof ReplayResult>;

export const TestDelivery = Type.Object(
  { delivery_id: Type.String(), event: Event },
  { title: 'WebhookTestDelivery', additionalProperties: false },
);
