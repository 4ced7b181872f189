import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/cli/api-client.js';
import { listen } from '../../src/cli/listen.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { FaultProxy } from '../helpers/tcp-faults.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * `customer-api listen` (docs/cli.md) when its stream drops: the command's code runs in the test process, talking to a
 * real listener through a TCP proxy the test cuts (the child-process run is test/cli/listen-cli.test.ts).
 */
describe('customer-api listen after a dropped stream', () => {
  let t: TestApp;
  let proxy: FaultProxy;
  let receiver: WebhookReceiver;
  let customer: TestCustomer;
  const stop = new AbortController();
  const lines: string[] = [];
  let session: Promise<void>;
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

  beforeEach(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    proxy = await FaultProxy.start({ host: '127.0.0.1', port: (t.app.server.address() as AddressInfo).port });
    receiver = await new WebhookReceiver().listen();
    customer = await t.createCustomer();
    session = listen(new ApiClient(`http://${proxy.address}`, customer.key), { forwardTo: receiver.url('/webhooks'), eventTypes: [], secret, signal: stop.signal, write: (line) => lines.push(line) });
    await expect.poll(() => lines[0], { timeout: 5_000 }).toMatch(/^Ready! Your webhook signing secret is whsec_MfKQ/);
  });
  afterEach(async () => {
    stop.abort();
    await session;
    await proxy.close();
    await receiver.close();
    await t.close();
  });

  const forwardedAccountIds = () => receiver.received.map((delivery) => (new Webhook(secret).verify(delivery.body, delivery.headers) as { data: { id: string } }).data.id);

  it('resumes after the last event it received: what happened meanwhile is forwarded once, nothing twice', async () => {
    const before = await createFiatAccount(t, customer);
    await receiver.waitFor(1);
    proxy.cut();
    const meanwhile = await createFiatAccount(t, customer);
    await expect.poll(() => lines.some((line) => line.includes('stream lost')), { timeout: 5_000 }).toBe(true);
    await proxy.restore();
    await expect.poll(() => lines.some((line) => line.endsWith('reconnected')), { timeout: 15_000 }).toBe(true);
    const after = await createFiatAccount(t, customer);
    await receiver.waitFor(3);
    expect(forwardedAccountIds()).toEqual([before.id, meanwhile.id, after.id]);
  });
});
