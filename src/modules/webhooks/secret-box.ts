import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { webhookSecretPrefixLength, webhookSecretRandomBytes } from '../../config/limits.js';

/** A new signing secret in the Standard Webhooks form: `whsec_` and the base64 of random bytes. */
export function newSigningSecret(): { secret: string; prefix: string } {
  const secret = `whsec_${randomBytes(webhookSecretRandomBytes).toString('base64')}`;
  return { secret, prefix: secret.slice(0, webhookSecretPrefixLength) };
}

const ivBytes = 12;
const tagBytes = 16;

/**
 * Signing secrets are kept encrypted (AES-256-GCM) with a key of the deployment (storage/server-secrets.ts), so a
 * copy of the subscriptions table, a log line or a backup of that table alone reveals no secret. The server must be
 * able to sign, so it cannot store a one-way hash as it does for API keys (docs/webhooks.md "Secrets").
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== 32) throw new Error('a secret box needs a 32-byte key');
  }

  seal(plaintext: string): string {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  open(sealed: string): string {
    if (!sealed.startsWith('v1:')) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, ivBytes));
    decipher.setAuthTag(raw.subarray(ivBytes, ivBytes + tagBytes));
    return Buffer.concat([decipher.update(raw.subarray(ivBytes + tagBytes)), decipher.final()]).toString('utf8');
  }
}
