import { customerTimeOf, type Clock, type CustomerClocks, type CustomerTime } from '../../clock.js';
import { webhookFanOutBatchSize } from '../../config/limits.js';
import { claimUndeliveredEvents, markEventsPublished } from '../../events/outbox.js';
import { activeSubscriptionsOf, insertDeliveries, newDelivery, type NewDelivery } from './repository.js';
import type { Storage } from '../../storage/database.js';

/**
 * Turns outbox events into deliveries (docs/webhooks.md "Delivery"): each claimed event becomes one delivery per
 * active subscription of its customer that lists its type, and is marked published in the same transaction. A crash
 * before that commit leaves the events unpublished and their lease runs out; the unique (subscription, event) pair
 * makes the second pass add nothing twice. Events are claimed, not read behind a cursor (events/outbox.ts). A
 * delivery is due at once in its customer's time: a customer with a test clock attached gets it in the clock's time,
 * for the clock's advances to attempt (docs/test-clocks.md).
 */
export class WebhookFanOut {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly customerClocks: CustomerClocks,
    /** Called when deliveries were added, to wake the delivery worker. */
    private readonly onDeliveriesQueued: () => void,
    /** How long a claimed batch of events is this instance's before another may take it (a crash mid-batch). */
    private readonly leaseMs: number,
  ) {}

  async pass(): Promise<number> {
    const now = this.clock.now();
    const events = await claimUndeliveredEvents(this.storage, now, this.leaseMs, webhookFanOutBatchSize);
    if (events.length === 0) return 0;
    const customerIds = [...new Set(events.map((event) => event.customer_id))];
    const nowText = now.toISOString();
    const dueTimes = await this.dueTimesOf(customerIds);
    // The subscriptions are read in the transaction that writes their deliveries, and on PostgreSQL held (FOR KEY
    // SHARE) until it commits: a subscription deleted meanwhile would otherwise fail the whole batch's insert.
    const deliveries = await this.storage.transaction(async (trx) => {
      const subscriptions = (await activeSubscriptionsOf(trx, customerIds, this.storage.dialect === 'postgres')).map((subscription) => ({
        ...subscription,
        types: new Set(JSON.parse(subscription.event_types) as string[]),
      }));
      const rows: NewDelivery[] = [];
      for (const event of events) {
        for (const subscription of subscriptions) {
          if (subscription.customer_id !== event.customer_id || !subscription.types.has(event.event_type)) continue;
          rows.push(newDelivery(subscription.id, event.customer_id, event, nowText, dueTimes.get(event.customer_id)));
        }
      }
      await insertDeliveries(trx, this.storage.dialect, rows);
      await markEventsPublished(trx, events.map((event) => event.id), now);
      return rows;
    });
    if (deliveries.length > 0) this.onDeliveriesQueued();
    return events.length;
  }

  /** Each customer's now for its deliveries: its test clock's, or the server's. */
  private async dueTimesOf(customerIds: readonly string[]): Promise<Map<string, CustomerTime>> {
    const dueTimes = await Promise.all(customerIds.map((customerId) => customerTimeOf(this.customerClocks, this.clock, customerId)));
    return new Map(customerIds.map((customerId, index) => [customerId, dueTimes[index]!]));
  }
}
