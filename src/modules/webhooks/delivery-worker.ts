import type { KeyObject } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { FastifyBaseLogger } from 'fastify';
import type { Clock, TestClockTime } from '../../clock.js';
import {
  testClockAdvanceBatchesMax,
  webhookAttemptsInFlightMax,
  webhookAttemptsInFlightPerSubscriptionMax,
  webhookAttemptsRecordedPerTransactionMax,
  webhookDeliveriesWaitingMax,
  webhookDeliveriesWaitingPerSubscriptionMax,
  webhookSigningKeysCachedMax,
  workerPollIntervalMs,
} from '../../config/limits.js';
import {
  claimDueDeliveries,
  claimDueDeliveriesOnClock,
  recordAttempts,
  releaseDelivery,
  subscriptionsWithDueDeliveries,
  type AttemptResult,
  type ClaimedDelivery,
  type DeliveryRow,
  type SigningSubscription,
} from './repository.js';
import type { SecretBox } from '../../storage/secret-box.js';
import type { AutoDisableReason, DeliveryMetrics } from './metrics.js';
import { nothingExchanged, type AttemptOutcome, type WebhookSender } from './sender.js';
import { signedHeaders, signingKey } from './signing.js';
import type { Storage } from '../../storage/database.js';

export interface DeliverySettings {
  /** The wait after failed attempt n is retryDelaysMs[n - 1]; after the last, the delivery has failed. */
  retryDelaysMs: readonly number[];
  disableAfter: { failures: number; failingMs: number };
  timeoutMs: number;
}

/** How long a claimed delivery is its instance's: twice the timeout plus 5 s, so a slow attempt is recorded within it. */
function attemptLeaseMs(timeoutMs: number): number {
  return timeoutMs * 2 + 5000;
}

/** A claimed delivery waiting in memory for a slot of its subscription's receiver. */
interface Waiting extends ClaimedDelivery {
  claimedAtMs: number;
}

/**
 * Sends due deliveries (docs/webhooks.md "Delivery"). Each pass claims, per subscription, enough to fill its
 * webhookAttemptsInFlightPerSubscriptionMax requests to the receiver and up to webhookDeliveriesWaitingPerSubscriptionMax
 * more that wait in memory (webhookDeliveriesWaitingMax in all), each subscription's share from its own index range.
 * Attempts start without waiting, at most webhookAttemptsInFlightMax at once in this process (from the start until the
 * record); a slot freed by an answer is refilled at once from the subscription's waiting deliveries, so a fast
 * receiver is not held up by the claim's round trips. A slow or dead receiver holds only its own subscription's slots
 * for at most the timeout, while other customers' deliveries keep going. A claim is a lease of twice the timeout plus
 * 5 s, written into `leased_until`: an instance that dies mid-attempt loses it, and another sends the delivery again, with the
 * same webhook-id. A waiting delivery starts only within half the timeout of its claim, so its attempt ends and is
 * recorded within the lease; one that waited longer is released (due again at once, for any instance). Ended
 * attempts are recorded together, one transaction for all those that ended while the previous one committed. Every
 * state change is in the database, so a restart resumes.
 */
export class WebhookDeliveryWorker {
  /** Attempts started and not yet recorded, and releases of waiting deliveries. */
  private readonly inFlight = new Set<Promise<void>>();
  /** Requests waiting for each subscription's receiver. */
  private readonly sendingBySubscription = new Map<string, number>();
  private readonly waitingBySubscription = new Map<string, Waiting[]>();
  private waitingCount = 0;
  /** Subscriptions whose receiver answered an attempt since their last claim: it is making progress. */
  private readonly answeredSinceClaim = new Set<string>();
  /**
   * Subscriptions whose last claim took its whole share: most likely more of theirs are due, so they are claimed for
   * again without listing the due subscriptions first (docs/webhooks.md "Claiming ahead"). In the order of their last
   * claim, the least recent first: when the instance's allowance runs out, the next pass starts with those left out.
   */
  private readonly claimedInFull = new Set<string>();
  /**
   * Whether the next pass lists the due subscriptions whatever it knows: deliveries became due in this instance, or a
   * claim made without a listing came back short, since the last listing.
   */
  private listingWanted = true;
  /** When the due subscriptions were last listed, on the worker's clock: at least once every poll interval. */
  private listedAtMs = Number.NEGATIVE_INFINITY;
  /** Signing keys by their sealed secret: one AES-GCM open and one key object per secret instead of per attempt. */
  private readonly keys = new Map<string, KeyObject>();
  private readonly shutdown = new AbortController();
  private readonly leaseMs: number;
  /** How long after its claim a waiting delivery may still start: half the timeout, so its record falls within the lease. */
  private readonly startWithinMs: number;
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
    /** Called when an answer leaves a subscription wanting more deliveries, or a record frees a full process's slot: wakes the loop. */
    private readonly onSlotFreed: () => void,
  ) {
    this.leaseMs = attemptLeaseMs(settings.timeoutMs);
    this.startWithinMs = settings.timeoutMs / 2;
    // Every attempt in flight listens for shutdown on this one signal (sender.ts): the worker's own and a test clock
    // advance's round at most. Node's default of 10 would warn of a leak that is none.
    setMaxListeners(webhookAttemptsInFlightMax + webhookAttemptsInFlightPerSubscriptionMax, this.shutdown.signal);
  }

  async pass(): Promise<number> {
    if (this.shutdown.signal.aborted) return 0;
    this.releaseStale();
    let free = webhookAttemptsInFlightMax - this.inFlight.size - this.waitingCount + webhookDeliveriesWaitingMax;
    if (free <= 0) return 0;
    const perSubscriptionMax = webhookAttemptsInFlightPerSubscriptionMax + webhookDeliveriesWaitingPerSubscriptionMax;
    const claimedOf = (id: string) => (this.sendingBySubscription.get(id) ?? 0) + (this.waitingBySubscription.get(id)?.length ?? 0);
    const subscriptionIds = new Set([...this.sendingBySubscription.keys(), ...this.waitingBySubscription.keys()]);
    for (const id of this.answeredSinceClaim) if (!subscriptionIds.has(id)) this.answeredSinceClaim.delete(id);
    for (const id of this.claimedInFull) if (!subscriptionIds.has(id)) this.claimedInFull.delete(id);
    // Left for later: a subscription with half its allowance or more still waiting (claimed later, in a batch worth a
    // claim), and one whose receiver holds every request slot and has answered none since its last claim (a slow
    // receiver gets nothing claimed ahead; a fast one, whose slots are refilled as soon as they free, still does).
    const full = [...subscriptionIds].filter(
      (id) =>
        claimedOf(id) >= perSubscriptionMax ||
        !this.wantsMore(id) ||
        ((this.sendingBySubscription.get(id) ?? 0) >= webhookAttemptsInFlightPerSubscriptionMax && !this.answeredSinceClaim.has(id)),
    );
    const now = this.clock.now();
    const shares = new Map<string, number>();
    const { subscriptionIds: candidates, listed } = await this.subscriptionsToClaimFor(now, free, full);
    for (const id of candidates) {
      const share = Math.min(perSubscriptionMax - claimedOf(id), free);
      shares.set(id, share);
      free -= share;
      if (free === 0) break;
    }
    if (shares.size === 0) return 0;
    const claimed = await claimDueDeliveries(this.storage, now, new Date(now.getTime() + this.leaseMs), shares);
    const claimedBySubscription = countBySubscription(claimed);
    for (const [id, share] of shares) {
      this.answeredSinceClaim.delete(id);
      // Taken out and put back last: busy subscriptions are claimed for least recently claimed first, in turn.
      this.claimedInFull.delete(id);
      if (claimedBySubscription.get(id) === share) this.claimedInFull.add(id);
      // Claimed for without a listing and found short (drained, disabled, deleted): the next pass lists again.
      else if (!listed) this.listingWanted = true;
    }
    const claimedAtMs = now.getTime();
    for (const delivery of claimed) {
      const queue = this.waitingBySubscription.get(delivery.row.subscription_id) ?? [];
      queue.push({ ...delivery, claimedAtMs });
      this.waitingBySubscription.set(delivery.row.subscription_id, queue);
      this.waitingCount += 1;
    }
    this.startWaiting();
    return claimed.length;
  }

  /**
   * A test clock's advance (docs/test-clocks.md): attempts the deliveries in the clock's time due by its new time, each
   * at its due time (a frozen clock does not move during an attempt), a round at a time until none is due, so a retry
   * falling due by then is attempted in a later round; at most testClockAdvanceBatchesMax rounds of
   * webhookAttemptsInFlightPerSubscriptionMax. The claim is the lease every instance honours, in the clock's time
   * (the clock's advances follow one another, so no later one takes a delivery being attempted); the signature's
   * timestamp stays the server's, which a receiver checks against its own clock.
   */
  async attemptDueOnClock(testClock: TestClockTime): Promise<void> {
    const leaseUntil = new Date(testClock.now.getTime() + this.leaseMs);
    for (let round = 0; round < testClockAdvanceBatchesMax && !this.shutdown.signal.aborted; round += 1) {
      const claimed = await claimDueDeliveriesOnClock(this.storage, testClock.clockId, testClock.now, leaseUntil, webhookAttemptsInFlightPerSubscriptionMax);
      if (claimed.length === 0) return;
      // In flight like the worker's own attempts, so that stop() and idle() wait for them before the sender closes.
      const attempts = claimed.map(({ row, payload, subscription }) => {
        const attempt: Promise<void> = this.attempt(row, payload, subscription, () => undefined, new Date(row.next_attempt_at!))
          .catch((error: unknown) => this.log.error({ err: error, delivery: row.id }, 'webhook attempt could not be recorded'))
          .finally(() => this.inFlight.delete(attempt));
        this.inFlight.add(attempt);
        return attempt;
      });
      await Promise.all(attempts);
    }
  }

  /**
   * Deliveries became due in this instance (the fan-out, a replay, a retry or a test event through the API, a
   * subscription enabled again, a test clock's deliveries given back to the server's clock): the next pass lists the
   * due subscriptions again.
   */
  deliveriesQueued(): void {
    this.listingWanted = true;
  }

  /**
   * Which subscriptions a pass claims for, leaving out those in `full`, and whether they were listed. The due
   * subscriptions are listed (one probe of each active subscription's index range, the longest waiting first) when
   * deliveries became due in this instance since the last listing or a claim without one came back short, when a poll
   * interval has passed since it on the worker's clock (retries falling due, other instances' deliveries), or when none
   * of the subscriptions whose last claim took its whole share wants more. Otherwise the pass claims straight away for those: a fast receiver's next
   * deliveries are then one round trip away instead of two, so its requests in flight do not run dry while the claim
   * is on its way.
   */
  private async subscriptionsToClaimFor(now: Date, limit: number, full: readonly string[]): Promise<{ subscriptionIds: string[]; listed: boolean }> {
    const excluded = new Set(full);
    const busy = [...this.claimedInFull].filter((id) => !excluded.has(id));
    const listingDue = this.listingWanted || Math.abs(now.getTime() - this.listedAtMs) >= workerPollIntervalMs;
    if (!listingDue && busy.length > 0) return { subscriptionIds: busy, listed: false };
    this.listingWanted = false;
    this.listedAtMs = now.getTime();
    return { subscriptionIds: await subscriptionsWithDueDeliveries(this.storage.db, now.toISOString(), limit, full), listed: true };
  }

  /** Resolves when every attempt started so far, and every delivery claimed, has been recorded (tests; shutdown). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  /** Cuts attempts in progress short and releases the waiting deliveries (all due again at once), and waits for them. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    for (const queue of this.waitingBySubscription.values()) for (const waiting of queue) this.release(waiting.row);
    this.waitingBySubscription.clear();
    this.waitingCount = 0;
    await this.idle();
  }

  /**
   * Whether a pass should claim for this subscription now: fewer than half its allowance of deliveries wait. Answers
   * wake the loop only then, so a busy receiver's deliveries are claimed dozens at a time, not one per answer; an idle
   * one (nothing waiting) is claimed for as soon as anything is due.
   */
  private wantsMore(subscriptionId: string): boolean {
    return (this.waitingBySubscription.get(subscriptionId)?.length ?? 0) < webhookDeliveriesWaitingPerSubscriptionMax / 2;
  }

  /** Starts waiting deliveries while their subscriptions and the process have free slots, oldest claim first. */
  private startWaiting(): void {
    for (const [subscriptionId, queue] of this.waitingBySubscription) {
      while (queue.length > 0 && this.inFlight.size < webhookAttemptsInFlightMax && (this.sendingBySubscription.get(subscriptionId) ?? 0) < webhookAttemptsInFlightPerSubscriptionMax) {
        const waiting = queue.shift()!;
        this.waitingCount -= 1;
        if (this.clock.now().getTime() - waiting.claimedAtMs > this.startWithinMs) {
          this.release(waiting.row);
          continue;
        }
        this.metrics.started(waiting);
        this.start(waiting.row, waiting.payload, waiting.subscription);
      }
      if (queue.length === 0) this.waitingBySubscription.delete(subscriptionId);
    }
  }

  /** Releases the waiting deliveries claimed too long ago to be attempted within their lease. */
  private releaseStale(): void {
    const oldestStartableMs = this.clock.now().getTime() - this.startWithinMs;
    for (const [subscriptionId, queue] of this.waitingBySubscription) {
      while (queue.length > 0 && queue[0]!.claimedAtMs < oldestStartableMs) {
        this.release(queue.shift()!.row);
        this.waitingCount -= 1;
      }
      if (queue.length === 0) this.waitingBySubscription.delete(subscriptionId);
    }
  }

  /** A claimed delivery not attempted: due again at once, for any instance (fenced by the claim's lease). */
  private release(row: DeliveryRow): void {
    const released = releaseDelivery(this.storage.db, row.id, row.leased_until!, this.clock.now().toISOString())
      .catch((error: unknown) => this.log.error({ err: error, delivery: row.id }, 'webhook delivery could not be released; its lease will run out'))
      .finally(() => this.inFlight.delete(released));
    this.inFlight.add(released);
  }

  private start(row: DeliveryRow, payload: string | undefined, subscription: SigningSubscription | undefined): void {
    this.sendingBySubscription.set(row.subscription_id, (this.sendingBySubscription.get(row.subscription_id) ?? 0) + 1);
    let answered = false;
    // The subscription's slot is the receiver's: freed by the answer (or its absence), while the record is written,
    // and refilled at once from the deliveries waiting.
    const freeSubscriptionSlot = () => {
      if (answered) return;
      answered = true;
      this.answeredSinceClaim.add(row.subscription_id);
      const left = (this.sendingBySubscription.get(row.subscription_id) ?? 1) - 1;
      if (left > 0) this.sendingBySubscription.set(row.subscription_id, left);
      else this.sendingBySubscription.delete(row.subscription_id);
      if (!this.shutdown.signal.aborted) this.startWaiting();
      if (this.wantsMore(row.subscription_id)) this.onSlotFreed();
    };
    const attempt = this.attempt(row, payload, subscription, freeSubscriptionSlot)
      .catch((error: unknown) => this.log.error({ err: error, delivery: row.id }, 'webhook attempt could not be recorded'))
      .finally(() => {
        freeSubscriptionSlot();
        // Every attempt slot was taken: a pass may claim again (for another subscription, which an answer does not wake).
        const allTaken = this.inFlight.size >= webhookAttemptsInFlightMax;
        this.inFlight.delete(attempt);
        if (this.waitingCount > 0 && !this.shutdown.signal.aborted) this.startWaiting();
        if (allTaken) this.onSlotFreed();
      });
    this.inFlight.add(attempt);
  }

  /** `clockTime`: the attempt's time in a test clock's time, which its record, retry and run of failures are kept in. */
  private async attempt(row: DeliveryRow, payload: string | undefined, subscription: SigningSubscription | undefined, onAnswer: () => void, clockTime?: Date): Promise<void> {
    const lease = row.leased_until!;
    // Deleted meanwhile: its deliveries went with it (cascade), and the fenced record below finds nothing.
    if (!subscription) return;
    const sentAt = this.clock.now();
    const outcome: AttemptOutcome =
      payload === undefined
        ? { succeeded: false, statusCode: null, durationMs: 0, error: 'the event no longer exists', retryAfterMs: null, exchange: nothingExchanged }
        : await this.sender.send(subscription.url, payload, signedHeaders(row.id, sentAt, payload, this.signingKeys(subscription, sentAt)), () => this.clock.now(), this.shutdown.signal);
    const at = clockTime ?? this.clock.now();
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

  /** The current secret's key, and the previous one's during the day after a rotation. */
  private signingKeys(subscription: SigningSubscription, now: Date): KeyObject[] {
    const keys = [this.keyOf(subscription.secret_encrypted)];
    if (subscription.previous_secret_encrypted && subscription.previous_secret_expires_at && Date.parse(subscription.previous_secret_expires_at) > now.getTime()) {
      keys.push(this.keyOf(subscription.previous_secret_encrypted));
    }
    return keys;
  }

  /** A sealed secret's key, kept by the sealed value (a rotation seals a new one, so nothing goes stale). */
  private keyOf(sealed: string): KeyObject {
    let key = this.keys.get(sealed);
    if (key === undefined) {
      if (this.keys.size >= webhookSigningKeysCachedMax) this.keys.clear();
      key = signingKey(this.secrets.open(sealed));
      this.keys.set(sealed, key);
    }
    return key;
  }
}

/** How many of the claimed deliveries are each subscription's. */
function countBySubscription(claimed: readonly ClaimedDelivery[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const { row } of claimed) counts.set(row.subscription_id, (counts.get(row.subscription_id) ?? 0) + 1);
  return counts;
}
