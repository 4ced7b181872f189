import { Webhook } from 'standardwebhooks';
import type { components } from './schema.js';

export { Webhook, WebhookVerificationError } from 'standardwebhooks';

/** A delivered event: the body of a webhook POST (docs/webhooks.md "Payload"). */
export type WebhookEvent = components['schemas']['Event'];

/**
 * Verifies a webhook delivery — its `webhook-id`, `webhook-timestamp` (within five minutes) and `webhook-signature`
 * headers over the raw body, with the subscription's signing secret (`whsec_…`, Standard Webhooks) — and answers the
 * parsed event. Throws `WebhookVerificationError` when the delivery is not genuine. Pass the body exactly as received.
 */
export function verifyWebhook(rawBody: string | Uint8Array, headers: Record<string, string | string[] | undefined>, secret: string): WebhookEvent {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return new Webhook(secret).verify(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody), flat) as WebhookEvent;
}
