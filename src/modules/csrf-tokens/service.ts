import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { csrfWindowSeconds } from '../../config/limits.js';
import { DomainError } from '../../errors.js';

const tokenPattern = /^[0-9a-f]{64}$/i;

export interface CsrfToken {
  csrf_token: string;
  expires_at: string;
}

const csrfRefused = () =>
  new DomainError('CSRF_TOKEN_INVALID', 'POST, PATCH and DELETE need a valid X-CSRF-Token header; get one from GET /csrf-token.');

/**
 * docs/spec.md §5.4 asks for a 64-hex token on every write; how it is obtained is not shown, and GET /csrf-token is
 * our answer (docs/architecture.md, Keys and scopes). Tokens are stateless: HMAC-SHA256(server secret, key id + time window), so any instance can
 * check them without a lookup, a token of another key never matches, and revoking the key ends its tokens.
 */
export class CsrfTokenService {
  constructor(
    private readonly secret: Buffer,
    private readonly clock: Clock,
  ) {}

  private windowOf(date: Date): number {
    return Math.floor(date.getTime() / 1000 / csrfWindowSeconds);
  }

  private tokenFor(apiKeyId: string, window: number): string {
    return createHmac('sha256', this.secret).update(`csrf:${apiKeyId}:${window}`).digest('hex');
  }

  /** Valid for the rest of the current window and all of the next. */
  issue(apiKeyId: string): CsrfToken {
    const window = this.windowOf(this.clock.now());
    return {
      csrf_token: this.tokenFor(apiKeyId, window),
      expires_at: new Date((window + 2) * csrfWindowSeconds * 1000).toISOString(),
    };
  }

  verify(apiKeyId: string, presented: string | string[] | undefined): void {
    if (typeof presented !== 'string' || !tokenPattern.test(presented)) throw csrfRefused();
    const given = Buffer.from(presented.toLowerCase(), 'hex');
    const window = this.windowOf(this.clock.now());
    for (const candidate of [window, window - 1]) {
      if (timingSafeEqual(given, Buffer.from(this.tokenFor(apiKeyId, candidate), 'hex'))) return;
    }
    throw csrfRefused();
  }
}
