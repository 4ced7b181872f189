import type { TestApp, TestCustomer } from './test-app.js';

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
