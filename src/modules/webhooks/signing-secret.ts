import { randomBytes } from 'node:crypto';
import { webhookSecretPrefixLength, webhookSecretRandomBytes } from '../../config/limits.js';

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of random bytes. */
export function newSigningSecret(): { secret: string; prefix: string } {
  const secret = `whsec_${randomBytes(webhookSecretRandomBytes).toString('base64')}`;
  return { secret, prefix: secret.slice(0, webhookSecretPrefixLength) };
}
