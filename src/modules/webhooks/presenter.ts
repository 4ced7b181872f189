import type { AttemptRow, DeliveryRow, SubscriptionRow } from './repository.js';
import type { AttemptRecord, DeliveryRecord, DeliveryWithAttemptsRecord, WebhookSubscriptionRecord } from './schemas.js';

export function presentSubscription(row: SubscriptionRow): WebhookSubscriptionRecord {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: JSON.parse(row.event_types) as string[],
    is_active: Number(row.is_active) === 1,
    signing_secret_prefix: row.signing_secret_prefix,
    consecutive_failures: Number(row.consecutive_failures),
    disabled_at: row.disabled_at,
    disabled_reason: row.disabled_reason,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

function presentAttempt(row: AttemptRow): AttemptRecord {
  return {
    attempt_number: Number(row.attempt_number),
    succeeded: Number(row.succeeded) === 1,
    status_code: row.status_code === null ? null : Number(row.status_code),
    duration_ms: Number(row.duration_ms),
    error: row.error,
    request_headers: row.request_headers === null ? null : (JSON.parse(row.request_headers) as Record<string, string>),
    response_headers: row.response_headers === null ? null : (JSON.parse(row.response_headers) as Record<string, string>),
    response_body: row.response_body,
    response_body_truncated: Number(row.response_body_truncated) === 1,
    created_at: row.created_at,
  };
}

export function presentDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    subscription_id: row.subscription_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempt_count: Number(row.attempt_count),
    next_attempt_at: row.status === 'pending' ? row.next_attempt_at : null,
    last_attempt_at: row.last_attempt_at,
    last_status_code: row.last_status_code === null ? null : Number(row.last_status_code),
    last_error: row.last_error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export function presentDeliveryWithAttempts(row: DeliveryRow, attempts: readonly AttemptRow[]): DeliveryWithAttemptsRecord {
  return { ...presentDelivery(row), attempts: attempts.map(presentAttempt) };
}
