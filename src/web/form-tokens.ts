import { createHmac, timingSafeEqual } from 'node:crypto';
import { formTokenLength } from '../config/limits.js';

/**
 * CSRF tokens of the browser pages (docs/dashboard.md "Security"): every form carries HMAC(server secret, binding),
 * where the binding is what the request is already tied to — the session, the pre-sign-in cookie, or the hosted
 * page's token — so a page on another site can neither read nor compute it. Nothing is stored.
 */
export class FormTokens {
  constructor(private readonly secret: Buffer) {}

  issue(binding: string): string {
    return createHmac('sha256', this.secret).update(binding).digest('hex');
  }

  verify(binding: string, presented: unknown): boolean {
    if (typeof presented !== 'string' || presented.length !== formTokenLength) return false;
    return timingSafeEqual(Buffer.from(this.issue(binding)), Buffer.from(presented));
  }
}
