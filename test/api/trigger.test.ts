import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/cli/api-client.js';
import { trigger, triggerableEventTypes } from '../../src/cli/trigger.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * `customer-api trigger` (docs/cli.md) against a real listener: each event type of the catalogue fires through the
 * API alone. The command's code runs in the test process (the child-process run is test/cli/listen-cli.test.ts); here on both databases.
 */
describe('customer-api trigger', () => {
  let t: TestApp;
  let apiUrl: string;

  beforeAll(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    apiUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => t.close());

  it.each(triggerableEventTypes)('fires %s', async (eventType) => {
    const customer = await t.createCustomer(eventType);
    const made = await trigger(new ApiClient(apiUrl, customer.key), eventType);
    expect(made.event_type).toBe(eventType);
    const events = await t.request({ url: `/events?type=${eventType}`, key: customer.key });
    expect(events.json<{ meta: { pagination: { total: number } } }>().meta.pagination.total, JSON.stringify(made)).toBeGreaterThanOrEqual(1);
  });

  it('refuses an unknown event type with the list of known ones', async () => {
    const customer = await t.createCustomer();
    await expect(trigger(new ApiClient(apiUrl, customer.key), 'payment.exploded')).rejects.toThrow(/unknown event type "payment.exploded"; known types: payment.created, .*otc_order.status_updated/);
  });
});
