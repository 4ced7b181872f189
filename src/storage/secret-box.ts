import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { secretBoxIvBytes, secretBoxKeyBytes, secretBoxTagBytes } from '../config/limits.js';

/**
 * AES-256-GCM under one key. It keeps webhook signing secrets encrypted with a key of the deployment, so a copy of the
 * subscriptions table, a log line or a backup of that table alone reveals no secret; the server must be able to
 * sign, so it cannot store a one-way hash as it does for API keys (docs/webhooks.md "Secrets"). It also wraps that
 * key and the other server secrets with the operator's master key (storage/server-secrets.ts). `context`, when
 * given, is authenticated with the text: a sealed value moved to another place (another secret's row) fails to open.
 */
export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== secretBoxKeyBytes) throw new Error('a secret box needs a 32-byte key');
  }

  seal(plaintext: string, context?: string): string {
    const iv = randomBytes(secretBoxIvBytes);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (context !== undefined) cipher.setAAD(Buffer.from(context, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return `v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
  }

  /** Throws when the value was sealed under another key or context, or altered. */
  open(sealed: string, context?: string): string {
    if (!sealed.startsWith('v1:')) throw new Error('unknown sealed secret format');
    const raw = Buffer.from(sealed.slice(3), 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, secretBoxIvBytes));
    if (context !== undefined) decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(secretBoxIvBytes, secretBoxIvBytes + secretBoxTagBytes));
    return Buffer.concat([decipher.update(raw.subarray(secretBoxIvBytes + secretBoxTagBytes)), decipher.final()]).toString('utf8');
  }
}
