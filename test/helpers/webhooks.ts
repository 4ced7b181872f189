import type { TestApp, TestCustomer } from './test-app.js';
import type { WebhookReceiver } from './webhook-receiver.js';

/** A subscription created through the API, with its one-time secret. */
export async function subscribe(t: TestApp, customer: TestCustomer, body: Record<string, unknown>) {
  const response = await t.request({ method: 'POST', url: '/webhooks', key: customer.key, csrf: true, body });
  if (response.statusCode !== 201) throw new Error(`POST /webhooks answered ${response.statusCode}: ${response.body}`);
  return response.json<{ data: { id: string; signing_secret: string; signing_secret_prefix: string; [field: string]: unknown } }>().data;
}

/**
 * Runs the fan-out and delivery workers until nothing is due: every event in the outbox becomes deliveries, and
 * every due delivery is attempted and recorded. Time does not move (the test's clock decides what is due).
 */
export async function deliverDue(t: Pick<TestApp, 'app'>): Promise<void> {
  const fanOut = t.app.workers.find((worker) => worker.name === 'webhook-fan-out')!;
  const delivery = t.app.workers.find((worker) => worker.name === 'webhook-delivery')!;
  for (let round = 0; round < 100; round += 1) {
    const fanned = await fanOut.runOnce();
    const started = await delivery.runOnce();
    await t.app.webhookDeliveries.idle();
    if (fanned === 0 && started === 0) return;
  }
  throw new Error('deliveries still due after 100 rounds');
}

/** Between tests: what is due delivered, no subscription left, and a receiver that has heard nothing and answers 200. */
export async function resetWebhooks(t: Pick<TestApp, 'app' | 'storage'>, receiver: WebhookReceiver): Promise<void> {
  await deliverDue(t);
  await t.storage.db.deleteFrom('webhook_subscriptions').execute();
  receiver.received.length = 0;
  receiver.answer = () => ({ status: 200 });
}
