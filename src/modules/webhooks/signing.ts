import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';

/** Standard Webhooks secrets are `whsec_` and the base64 of the key. */
const secretPrefix = 'whsec_';

/** A Standard Webhooks secret as the key it signs with (made once per secret: making it costs more than a signature). */
export function signingKey(secret: string): KeyObject {
  return createSecretKey(Buffer.from(secret.startsWith(secretPrefix) ? secret.slice(secretPrefix.length) : secret, 'base64'));
}

/**
 * The Standard Webhooks headers of one attempt (https://www.standardwebhooks.com): `webhook-id` stays the same across
 * retries, `webhook-timestamp` is the attempt's own, and `webhook-signature` carries one `v1,<base64>` signature per
 * key — two during the day after a rotation, so a receiver still holding the old secret keeps verifying. The
 * signature is the scheme's HMAC-SHA256 of `<id>.<timestamp>.<body>`, computed with node:crypto rather than the
 * `standardwebhooks` package's pure-JavaScript SHA-256 (several times the CPU per attempt); the tests and the bench
 * verify every signature with that package.
 */
export function signedHeaders(deliveryId: string, sentAt: Date, body: string, keys: readonly KeyObject[]): Record<string, string> {
  const timestamp = String(Math.floor(sentAt.getTime() / 1000));
  const signed = `${deliveryId}.${timestamp}.${body}`;
  const signature = (key: KeyObject) => `v1,${createHmac('sha256', key).update(signed).digest('base64')}`;
  return { 'webhook-id': deliveryId, 'webhook-timestamp': timestamp, 'webhook-signature': keys.map(signature).join(' ') };
}
