import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import { webhookAttemptsInFlightMax, webhookAttemptsInFlightPerSubscriptionMax, webhookAttemptsRecordedPerTransactionMax } from '../../config/limits.js';
import {
  claimDueDeliveries,
  recordAttempts,
  releaseDelivery,
  subscriptionsByIds,
  subscriptionsWithDueDeliveries,
  type AttemptResult,
  type DeliveryRow,
  type SubscriptionRow,
} from './repository.js';
import type { SecretBox } from '../../storage/secret-box.js';
import { eventsByIds } from '../events/index.js';
import type { AutoDisableReason, DeliveryMetrics } from './metrics.js';
import { nothingExchanged, type AttemptOutcome, type WebhookSender } from './sender.js';
import { signedHeaders } from './signing.js';
import type { Storage } from '../../storage/database.js';

export interface DeliverySettings {
  /** The wait after failed attempt n is retryDelaysMs[n - 1]; after the last, the delivery has failed. */
  retryDelaysMs: readonly number[];
  disableAfter: { failures: number; failingMs: number };
  timeoutMs: number;
}

/** How long a claimed delivery is its instance's: twice the timeout plus 5 s, so a slow attempt is recorded within it. */
export function attemptLeaseMs(timeoutMs: number): number {
  return timeoutMs * 2 + 5000;
}

/**
 * Sends due deliveries (docs/webhooks.md "Delivery"). Each pass claims as many as there are free slots — at most
 * webhookAttemptsInFlightMax attempts at once in this process, from the claim until the record, and
 * webhookAttemptsInFlightPerSubscriptionMax requests waiting for one subscription's receiver, each subscription's
 * share claimed from its own index range — and starts them without waiting: a slow or dead receiver holds only its
 * own subscription's slots for at most the timeout, while other customers' deliveries keep going. A claim is a lease
 * of twice the timeout plus 5 s on `next_attempt_at`: an instance that dies mid-attempt loses it, and another sends
 * the delivery again, with the same webhook-id. Ended attempts are recorded together, one transaction for all those
 * that ended while the previous one committed. Every state change is in the database, so a restart resumes.
 */
export class WebhookDeliveryWorker {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly inFlightBySubscription = new Map<string, number>();
  private readonly shutdown = new AbortController();
  private readonly leaseMs: number;
  /** Ended attempts waiting for the next recording transaction. */
  private readonly unrecorded: { result: AttemptResult; recorded: () => void; failed: (error: unknown) => void }[] = [];
  private recording = false;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly sender: WebhookSender,
    private readonly secrets: SecretBox,
    private readonly settings: DeliverySettings,
    private readonly log: FastifyBaseLogger,
    private readonly metrics: DeliveryMetrics,
    /** Called when an attempt ends and frees a slot, to wake the worker's loop. */
    private readonly onSlotFreed: () => void,
  ) {
    this.leaseMs = attemptLeaseMs(settings.timeoutMs);
  }

  async pass(): Promise<number> {
    let free = webhookAttemptsInFlightMax - this.inFlight.size;
    if (free <= 0 || this.shutdown.signal.aborted) return 0;
    const full = [...this.inFlightBySubscription].filter(([, count]) => count >= webhookAttemptsInFlightPerSubscriptionMax).map(([id]) => id);
    const now = this.clock.now();
    const shares = new Map<string, number>();
    for (const id of await subscriptionsWithDueDeliveries(this.storage.db, now.toISOString(), free, full)) {
      const share = Math.min(webhookAttemptsInFlightPerSubscriptionMax - (this.inFlightBySubscription.get(id) ?? 0), free);
      shares.set(id, share);
      free -= share;
      if (free === 0) break;
    }
    if (shares.size === 0) return 0;
    const rows = await claimDueDeliveries(this.storage, now, new Date(now.getTime() + this.leaseMs), shares);
    if (rows.length === 0) return 0;
    const [events, subscriptions] = await Promise.all([
      eventsByIds(this.storage.db, rows.map((row) => row.event_id)),
      subscriptionsByIds(this.storage.db, rows.map((row) => row.subscription_id)),
    ]);
    for (const row of rows) this.start(row, events.get(row.event_id)?.payload, subscriptions.get(row.subscription_id));
    this.metrics.claimed(rows, events);
    return rows.length;
  }

  /** Resolves when every attempt started so far has been recorded (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Cuts attempts in progress short (their deliveries are due again at once) and waits for them. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    await this.idle();
  }

  private start(row: DeliveryRow, payload: string | undefined, subscription: SubscriptionRow | undefined): void {
    this.inFlightBySubscription.set(row.subscription_id, (this.inFlightBySubscription.get(row.subscription_id) ?? 0) + 1);
    let answered = false;
    // The subscription's slot is the receiver's: freed by the answer (or its absence), while the record is written.
    const freeSubscriptionSlot = () => {
      if (answered) return;
      answered = true;
      const left = (this.inFlightBySubscription.get(row.subscription_id) ?? 1) - 1;
      if (left > 0) this.inFlightBySubscription.set(row.subscription_id, left);
      else this.inFlightBySubscription.delete(row.subscription_id);
      this.onSlotFreed();
    };
    const attempt = this.attempt(row, payload, subscription, freeSubscriptionSlot)
      .catch((error: unknown) => this.log.error({ err: error, delivery: row.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        freeSubscriptionSlot();
        this.inFlight.delete(attempt);
        this.onSlotFreed();
      });
    this.inFlight.add(attempt);
  }

  private async attempt(row: DeliveryRow, payload: string | undefined, subscription: SubscriptionRow | undefined, onAnswer: () => void): Promise<void> {
    const lease = row.next_attempt_at!;
    // Deleted meanwhile: its deliveries went with it (cascade), and the fenced record below finds nothing.
    if (!subscription) return;
    const sentAt = this.clock.now();
    const outcome: AttemptOutcome =
      payload === undefined
        ? { succeeded: false, statusCode: null, durationMs: 0, error: 'the event no longer exists', retryAfterMs: null, exchange: nothingExchanged }
        : await this.sender.send(subscription.url, payload, signedHeaders(row.id, sentAt, payload, this.signingSecrets(subscription, sentAt)), () => this.clock.now(), this.shutdown.signal);
    const at = this.clock.now();
    onAnswer();
    // Cut short by shutdown before any answer: nothing happened that counts, and any instance may send it now.
    if (this.shutdown.signal.aborted && outcome.statusCode === null) {
      await releaseDelivery(this.storage.db, row.id, lease, at.toISOString());
      return;
    }
    const attemptNumber = Number(row.attempt_count) + 1;
    const delayMs = this.settings.retryDelaysMs[attemptNumber - 1];
    const gone = outcome.statusCode === 410;
    const exhausted = !outcome.succeeded && (delayMs === undefined || payload === undefined);
    let disabled: AutoDisableReason | undefined;
    await this.record({
      deliveryId: row.id,
      subscriptionId: row.subscription_id,
      lease,
      attemptNumber,
      succeeded: outcome.succeeded,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      error: outcome.error,
      exchange: outcome.exchange,
      status: outcome.succeeded ? 'succeeded' : exhausted ? 'failed' : 'pending',
      nextAttemptAt: outcome.succeeded || exhausted ? null : new Date(at.getTime() + Math.max(delayMs!, outcome.retryAfterMs ?? 0)).toISOString(),
      at: at.toISOString(),
      disableReason: (failures, failingSince) => {
        const { disableAfter } = this.settings;
        const ranOut = failures >= disableAfter.failures && at.getTime() - Date.parse(failingSince) >= disableAfter.failingMs;
        disabled = gone ? 'gone' : ranOut ? 'failures' : undefined;
        if (disabled === undefined) return null;
        return gone ? 'the endpoint answered 410 Gone' : `${failures} consecutive failed attempts`;
      },
    });
    this.metrics.attemptRecorded(outcome, exhausted, disabled);
  }

  /** Resolves once the attempt is recorded, with the others that ended meanwhile (one transaction for all). */
  private record(result: AttemptResult): Promise<void> {
    return new Promise((recorded, failed) => {
      this.unrecorded.push({ result, recorded, failed });
      if (!this.recording) void this.recordUnrecorded();
    });
  }

  private async recordUnrecorded(): Promise<void> {
    this.recording = true;
    // Attempts that end in the same turn of the event loop join the first one's transaction.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.unrecorded.length > 0) {
      const batch = this.unrecorded.splice(0, webhookAttemptsRecordedPerTransactionMax);
      try {
        await recordAttempts(this.storage, batch.map((entry) => entry.result));
        for (const entry of batch) entry.recorded();
      } catch (error) {
        for (const entry of batch) entry.failed(error);
      }
    }
    this.recording = false;
  }

  /** The current secret, and the previous one during the day after a rotation. */
  private signingSecrets(subscription: SubscriptionRow, now: Date): string[] {
    const secrets = [this.secrets.open(subscription.secret_encrypted)];
    if (subscription.previous_secret_encrypted && subscription.previous_secret_expires_at && Date.parse(subscription.previous_secret_expires_at) > now.getTime()) {
      secrets.push(this.secrets.open(subscription.previous_secret_encrypted));
    }
    return secrets;
  }
}
