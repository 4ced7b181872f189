import { Webhook } from 'standardwebhooks';

/**
 * The Standard Webhooks headers of one attempt (https://www.standardwebhooks.com): `webhook-id` stays the same across
 * retries, `webhook-timestamp` is the attempt's own, and `webhook-signature` carries one `v1,<base64>` signature per
 * secret — two during the day after a rotation, so a receiver still holding the old secret keeps verifying.
 */
export function signedHeaders(deliveryId: string, sentAt: Date, body: string, secrets: readonly string[]): Record<string, string> {
  // The library truncates to whole seconds itself; the header says the same second.
  const timestamp = new Date(Math.floor(sentAt.getTime() / 1000) * 1000);
  return {
    'webhook-id': deliveryId,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': secrets.map((secret) => new Webhook(secret).sign(deliveryId, timestamp, body)).join(' '),
  };
}
