import { formatDecimal } from '../../ledger/money.js';
import type { Clock } from '../../clock.js';
import { httpProviderErrorLengthMax, providerCallTimeoutMs } from '../../config/limits.js';
import type { PaymentRail, PaymentSubmission } from '../payments.js';
import { ProviderRefusedError } from '../provisioning.js';
import { signedHeaders } from './signature.js';

/** The HTTP adapter's name: its outcomes are posted to /provider-events/http and carry it. */
export const httpProviderName = 'http';

/**
 * The HTTP payment adapter (docs/providers.md "The HTTP adapter"): a deliberately small contract that proves the
 * seam. A payment is submitted with `POST {PAYMENT_PROVIDER_URL}/payments`, signed, its fr_payment_id as
 * `webhook-id` and `Idempotency-Key`; any 2xx means taken, a 4xx refused for good (the payment fails with the
 * provider's `error.message`), anything else (5xx, no answer in 30 s) is tried again. Outcomes come back as
 * signed provider events (providers/http/events-route.ts).
 */
export class HttpPaymentRail implements PaymentRail {
  readonly name = httpProviderName;

  constructor(
    private readonly baseUrl: string,
    private readonly secret: string,
    private readonly clock: Clock,
  ) {}

  async submitPayment(payment: PaymentSubmission): Promise<void> {
    const body = JSON.stringify({
      id: payment.frPaymentId,
      amount: formatDecimal(payment.amountMinor, payment.currency),
      currency: payment.currency,
      scheme: payment.scheme,
      reference: payment.reference,
    });
    const response = await fetch(`${this.baseUrl}/payments`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': payment.frPaymentId,
        ...signedHeaders(this.secret, payment.frPaymentId, this.clock.now(), body),
      },
      body,
      signal: AbortSignal.timeout(providerCallTimeoutMs),
    });
    const text = (await response.text()).slice(0, httpProviderErrorLengthMax);
    if (response.ok) return;
    if (response.status >= 400 && response.status < 500) throw new ProviderRefusedError(refusalOf(text, response.status));
    throw new Error(`the payment provider answered ${response.status}`);
  }
}

/** The provider's `error.message`, or its status when it said nothing readable. */
function refusalOf(text: string, status: number): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === 'string' && message.length > 0) return message;
  } catch {
    // Not JSON: the status says it.
  }
  return `Refused by the payment provider (HTTP ${status})`;
}
