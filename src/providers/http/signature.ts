import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { httpProviderTimestampToleranceSeconds } from '../../config/limits.js';

/**
 * Both directions of the HTTP adapter's contract are signed as Standard Webhooks are (https://www.standardwebhooks.com),
 * with the secret the operator shares with the provider (PAYMENT_PROVIDER_SECRET, `whsec_…`): `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature` `v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">`.
 * The library signs; the timestamp is checked here against the injected clock, not the wall clock.
 */
export function signedHeaders(secret: string, id: string, at: Date, body: string): Record<string, string> {
  const timestamp = new Date(Math.floor(at.getTime() / 1000) * 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp.getTime() / 1000),
    'webhook-signature': new Webhook(secret).sign(id, timestamp, body),
  };
}

/** Whether the headers sign `body` with `secret`, at a time within the tolerance of `now`. */
export function verifySignedHeaders(secret: string, headers: Record<string, string | string[] | undefined>, body: string, now: Date): boolean {
  const id = headers['webhook-id'];
  const timestampText = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (typeof id !== 'string' || typeof timestampText !== 'string' || typeof signatures !== 'string' || !/^[0-9]{1,12}$/.test(timestampText)) return false;
  const seconds = Number(timestampText);
  if (Math.abs(now.getTime() / 1000 - seconds) > httpProviderTimestampToleranceSeconds) return false;
  const expected = Buffer.from(new Webhook(secret).sign(id, new Date(seconds * 1000), body));
  return signatures.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
