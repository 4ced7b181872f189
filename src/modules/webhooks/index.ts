import type { FastifyInstance } from 'fastify';
import { testClockAdvanceBatchesMax, workerPollIntervalMs } from '../../config/limits.js';
import { SecretBox } from '../../storage/secret-box.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import { WebhookDeliveryWorker } from './delivery-worker.js';
import { WebhookFanOut } from './fan-out.js';
import { DeliveryMetrics } from './metrics.js';
import { deleteEventsCreatedBefore } from '../events/index.js';
import { deleteDeliveriesCreatedBefore, releaseClockDeliveries } from './repository.js';
import type { ModuleContext } from '../module-context.js';
import { systemResolver, type HostResolver } from './address-guard.js';
import { webhookRoutes } from './routes.js';
import { Delivery } from './schemas.js';
import type { EventDeliveries } from '../events/index.js';
import { WebhookSender } from './sender.js';
import { WebhookService } from './service.js';

export interface WebhookServices {
  webhooks: WebhookService;
  /** The delivery worker, for tests: idle() waits for the attempts started so far. */
  deliveries: WebhookDeliveryWorker;
  /** An event's deliveries, which GET /events/{eventId} lists (the events module takes them: webhooks depend on events). */
  eventDeliveries: EventDeliveries;
}

/**
 * Webhook subscriptions and their tools (docs/webhooks.md), the two workers that deliver the outbox — the fan-out
 * (events → deliveries) and the delivery worker (deliveries → signed POSTs) — and the retention of what they deliver.
 */
export async function webhookServices(context: ModuleContext, resolve: HostResolver = systemResolver): Promise<WebhookServices> {
  const { storage, clock, config, log } = context;
  const secrets = new SecretBox(await context.serverSecrets.get('webhook-signing-secrets'));
  const sender = new WebhookSender({ timeoutMs: config.webhookTimeoutMs, allowPrivateUrls: config.webhookAllowPrivateUrls, resolve });
  const settings = { retryDelaysMs: config.webhookRetryDelaysMs, disableAfter: config.webhookDisableAfter, timeoutMs: config.webhookTimeoutMs };
  // Each worker wakes the other's loop: new deliveries, or a slot freed by an ended attempt. Wakes come from
  // attempts, the fan-out and requests, all after this function has returned, so the loop exists by then.
  const wakeDelivery = () => deliveryLoop.wake();
  const metrics = new DeliveryMetrics(context.metrics, storage, clock, log);
  const deliveries = new WebhookDeliveryWorker(storage, clock, sender, secrets, settings, log, metrics, wakeDelivery);
  const deliveriesQueued = () => {
    deliveries.deliveriesQueued();
    deliveryLoop.wake();
  };
  // A pass claims for every subscription found wanting deliveries; what lets it claim more wakes it (an answer that
  // leaves a subscription wanting more, a record that frees the process's slots, new deliveries), so a pass right
  // after one that claimed would only claim for the same busy subscriptions again (docs/webhooks.md "Claiming ahead").
  const deliveryLoop = new PollingWorker('webhook-delivery', () => deliveries.pass(), workerPollIntervalMs, log, {
    stopStarted: async () => {
      await deliveries.stop();
      await sender.close();
    },
    runAgainAfterWork: false,
  });
  const fanOut = new WebhookFanOut(storage, clock, context.customerClocks, deliveriesQueued, config.webhookFanOutLeaseMs);
  const fanOutLoop = new PollingWorker('webhook-fan-out', () => fanOut.pass(), workerPollIntervalMs, log);
  // An event is fanned out as soon as the transaction that wrote it commits in this instance: every commit wakes the
  // fan-out (commits during a pass add one pass at most). The poll finds the events other instances wrote.
  storage.committed.listen(() => fanOutLoop.wake());
  context.workers.push(fanOutLoop, deliveryLoop);
  // An advance of a test clock answers once the events of what fell due are fanned out and the deliveries in the
  // clock's time due by then attempted, retries included (docs/test-clocks.md); a deleted clock's go back to the server's.
  context.customerClocks.onAdvance(async (testClock) => {
    for (let batch = 0; batch < testClockAdvanceBatchesMax && (await fanOut.pass()) > 0; batch += 1);
    await deliveries.attemptDueOnClock(testClock);
  });
  context.customerClocks.onDetach(async (clockId) => {
    await releaseClockDeliveries(storage.db, clockId);
    deliveriesQueued();
  });
  const webhooks = new WebhookService(
    storage,
    clock,
    context.customerClocks,
    secrets,
    {
      allowPrivateUrls: config.webhookAllowPrivateUrls,
      disableAfter: config.webhookDisableAfter,
      replayWindowDays: config.eventRetentionMs / 86_400_000,
    },
    deliveriesQueued,
  );
  // What webhooks deliver is kept EVENT_RETENTION_DAYS: the events (GET /events), their deliveries and attempts.
  const retentionStart = (now: Date) => new Date(now.getTime() - config.eventRetentionMs).toISOString();
  context.reaper.add(async (now, limit) => deleteDeliveriesCreatedBefore(storage, retentionStart(now), limit));
  context.reaper.add(async (now, limit) => deleteEventsCreatedBefore(storage, retentionStart(now), limit));
  const eventDeliveries: EventDeliveries = { item: Delivery, list: (caller, eventId) => webhooks.deliveriesOfEvent(caller, eventId) };
  return { webhooks, deliveries, eventDeliveries };
}

/** The webhooks plugin: /webhooks, their deliveries and tools, and the events they carry. */
export async function webhooksPlugin(app: FastifyInstance, { webhooks }: { webhooks: WebhookService }): Promise<void> {
  webhookRoutes(app, webhooks);
}

export { type HostResolver } from './address-guard.js';
export { type WebhookDeliveryWorker } from './delivery-worker.js';
export { CreateWebhookBody, type CreateWebhookInput, DeliveriesQuery, type DeliveriesQueryInput, ReplayBody, UpdateWebhookBody, type UpdateWebhookInput, type WebhookHealthRecord, type WebhookSubscriptionRecord, subscribableEventTypes } from './schemas.js';
export { type WebhookService } from './service.js';
export { signedHeaders, signingKey } from './signing.js';
export { newSigningSecret } from './signing-secret.js';
