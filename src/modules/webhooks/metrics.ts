import type { FastifyBaseLogger } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { Clock } from '../../clock.js';
import { webhookBacklogCountedMax } from '../../config/limits.js';
import type { Storage } from '../../storage/database.js';
import { dueBacklog, subscriptionHealthCounts, type ClaimedDelivery } from './repository.js';
import type { AttemptOutcome } from './sender.js';

/** From 10 ms (a delivery claimed at once) to half an hour (a receiver's retries waiting on a full backlog). */
const lagBucketsSeconds = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800];
/** The runs of consecutive failures the subscriptions are counted by: bounded labels, never a subscription's id. */
const failureRunLengths = [1, 10, 100, 1000];

/** What an attempt came to, as the attempts counter labels it. */
type AttemptOutcomeLabel = 'succeeded' | 'error_status' | 'no_answer';
const attemptOutcomes: readonly AttemptOutcomeLabel[] = ['succeeded', 'error_status', 'no_answer'];

/** Why a subscription was disabled automatically: its run of failures, or a 410 Gone. */
export type AutoDisableReason = 'failures' | 'gone';
const autoDisableReasons: readonly AutoDisableReason[] = ['failures', 'gone'];

/**
 * The delivery metrics (docs/operations.md "Metrics"). Counters and histograms are this instance's, kept as its
 * attempts happen: the delivery worker tells `claimed` what it claims and `attemptRecorded` what each attempt came
 * to. The backlog and the subscriptions' health are the database's, the same for every instance: read when scraped,
 * by two bounded, index-served queries, because a count kept in memory would see only this instance's claims and
 * none of the deliveries other instances fan out or the requests that replay them.
 */
export class DeliveryMetrics {
  private readonly attempts: Counter<'outcome'>;
  private readonly failedForGood: Counter;
  private readonly autoDisabled: Counter<'reason'>;
  private readonly firstAttemptLag: Histogram;
  private readonly dueLag: Histogram;

  constructor(registry: Registry, storage: Storage, private readonly clock: Clock, log: FastifyBaseLogger) {
    this.attempts = new Counter({
      name: 'webhook_attempts_total',
      help: 'Delivery attempts by what they came to: succeeded (2xx), error_status (the receiver answered another status), no_answer (timeout, connection refused or blocked)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    for (const outcome of attemptOutcomes) this.attempts.inc({ outcome }, 0);
    this.failedForGood = new Counter({
      name: 'webhook_deliveries_failed_total',
      help: 'Deliveries given up: their retry schedule ended without a success (the receiver never got those events)',
      registers: [registry],
    });
    this.autoDisabled = new Counter({
      name: 'webhook_subscriptions_auto_disabled_total',
      help: 'Subscriptions disabled by delivery: after their run of failures (failures) or on a 410 Gone (gone)',
      labelNames: ['reason'] as const,
      registers: [registry],
    });
    for (const reason of autoDisableReasons) this.autoDisabled.inc({ reason }, 0);
    this.firstAttemptLag = new Histogram({
      name: 'webhook_first_attempt_lag_seconds',
      help: 'From the commit of an event to the first attempt of each of its deliveries made by the fan-out',
      buckets: lagBucketsSeconds,
      registers: [registry],
    });
    this.dueLag = new Histogram({
      name: 'webhook_attempt_due_lag_seconds',
      help: 'From when a delivery was due (created, retry time, replay or retry request) to the start of its attempt',
      buckets: lagBucketsSeconds,
      registers: [registry],
    });
    this.registerSampledGauges(registry, storage, log);
  }

  /**
   * A claimed delivery whose attempt starts now (it may have waited, claimed ahead): how late it is after it was due,
   * and for a delivery the fan-out made that was never attempted, how long after its event's commit. A replay's deliveries (made or restarted after
   * the fan-out) and retries count in the due lag only: their events may be days old.
   */
  started(delivery: ClaimedDelivery): void {
    const nowMs = this.clock.now().getTime();
    const { row, event } = delivery;
    observe(this.dueLag, secondsSince(nowMs, row.next_attempt_at!));
    // Taken over from an instance whose lease ran out (it had started it, and counted it), or made due again: not a first.
    const firstOfFanOut =
      Number(row.attempt_count) === 0 && row.previous_leased_until === null && row.next_attempt_at === row.created_at && row.created_at === event?.published_at;
    if (firstOfFanOut) observe(this.firstAttemptLag, secondsSince(nowMs, event.created_at));
  }

  /** An attempt recorded: its outcome, whether its delivery was given up, and whether it disabled its subscription. */
  attemptRecorded(outcome: Pick<AttemptOutcome, 'succeeded' | 'statusCode'>, failedForGood: boolean, disabled: AutoDisableReason | undefined): void {
    this.attempts.inc({ outcome: outcome.succeeded ? 'succeeded' : outcome.statusCode === null ? 'no_answer' : 'error_status' });
    if (failedForGood) this.failedForGood.inc();
    if (disabled !== undefined) this.autoDisabled.inc({ reason: disabled });
  }

  /**
   * The backlog and the subscriptions' health, read once per scrape however many series show them. A read that
   * fails (the database away) leaves the last values and is logged: the scrape still answers, storage_fault with it.
   */
  private registerSampledGauges(registry: Registry, storage: Storage, log: FastifyBaseLogger): void {
    const due = new Gauge({
      name: 'webhook_deliveries_due',
      help: `Backlog: pending deliveries of active subscriptions that are due and not being attempted (counted up to ${webhookBacklogCountedMax})`,
      registers: [registry],
      collect: () => readBacklog(),
    });
    const oldestDue = new Gauge({
      name: 'webhook_deliveries_oldest_due_seconds',
      help: 'How long the longest-waiting due delivery has waited for its attempt (0 when none is due)',
      registers: [registry],
      collect: () => readBacklog(),
    });
    const readBacklog = oncePerScrape(async () => {
      const now = this.clock.now();
      const backlog = await dueBacklog(storage.db, now.toISOString(), webhookBacklogCountedMax);
      due.set(backlog.due);
      oldestDue.set(backlog.oldestDueAt === null ? 0 : secondsSince(now.getTime(), backlog.oldestDueAt));
    }, log);

    const subscriptions = new Gauge({
      name: 'webhook_subscriptions',
      help: 'Subscriptions by state: healthy (active, no failure since the last success), failing (active, failing), disabled',
      labelNames: ['state'] as const,
      registers: [registry],
      collect: () => readSubscriptions(),
    });
    const failing = new Gauge({
      name: 'webhook_subscriptions_failing',
      help: 'Active subscriptions whose current run of consecutive failed attempts is at least `at_least` long',
      labelNames: ['at_least'] as const,
      registers: [registry],
      collect: () => readSubscriptions(),
    });
    const failingLongest = new Gauge({
      name: 'webhook_subscription_failing_longest_seconds',
      help: 'How long the active subscription failing for the longest time has been failing (0 when none is)',
      registers: [registry],
      collect: () => readSubscriptions(),
    });
    const readSubscriptions = oncePerScrape(async () => {
      const now = this.clock.now();
      const health = await subscriptionHealthCounts(storage.db, failureRunLengths);
      subscriptions.set({ state: 'healthy' }, health.healthy);
      subscriptions.set({ state: 'failing' }, health.failing);
      subscriptions.set({ state: 'disabled' }, health.disabled);
      for (const { length, subscriptions: count } of health.failingAtLeast) failing.set({ at_least: String(length) }, count);
      failingLongest.set(health.failingSince === null ? 0 : secondsSince(now.getTime(), health.failingSince));
    }, log);
  }
}

function secondsSince(nowMs: number, at: string): number {
  return Math.max(0, nowMs - Date.parse(at)) / 1000;
}

/** A time that does not parse is left out: prom-client would throw, and a figure must never stop a delivery pass. */
function observe(histogram: Histogram, seconds: number): void {
  if (Number.isFinite(seconds)) histogram.observe(seconds);
}

/**
 * One read for the series a scrape collects together (prom-client collects them at once): calls made while a read
 * is in flight share it. A failed read is logged and leaves the gauges as they were.
 */
function oncePerScrape(read: () => Promise<void>, log: FastifyBaseLogger): () => Promise<void> {
  let inFlight: Promise<void> | undefined;
  return () => {
    inFlight ??= read()
      .catch((error: unknown) => log.warn({ err: error }, 'webhook delivery metrics could not be read'))
      .finally(() => (inFlight = undefined));
    return inFlight;
  };
}
