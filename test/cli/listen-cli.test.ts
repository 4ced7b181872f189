import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv, ensureBuilt, processTestTimeoutMs, run, spawnServer, type Spawned } from '../e2e/support.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

/**
 * `customer-api listen` and `trigger` (docs/cli.md) as a newcomer runs them: two processes talking HTTP to a running
 * server with an API key; the event `trigger` fires reaches a local receiver signed with the secret `listen` printed.
 */
describe('customer-api listen and trigger', { timeout: processTestTimeoutMs }, () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let env: NodeJS.ProcessEnv;
  let listener: Spawned | undefined;

  beforeAll(async () => {
    await ensureBuilt();
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    receiver = await new WebhookReceiver().listen();
    const customer = await t.createCustomer();
    env = childEnv({ CUSTOMER_API_KEY: customer.key, CUSTOMER_API_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}` });
  }, processTestTimeoutMs);
  afterAll(async () => {
    listener?.kill();
    await receiver.close();
    await t.close();
  });

  it('forwards the event trigger fires, signed with the secret listen printed, and stops on SIGINT', async () => {
    listener = spawnServer(process.execPath, ['bin/customer-api.js', 'listen', '--forward-to', receiver.url('/webhooks'), '--events', 'payment.completed'], env);
    await listener.logged('(^C to quit)');
    const secret = /Ready! Your webhook signing secret is (whsec_\S+)/.exec(listener.output())![1]!;

    const triggered = await run(process.execPath, ['bin/customer-api.js', 'trigger', 'payment.completed'], { env });
    expect(triggered.stderr).toBe('');
    expect(triggered.code).toBe(0);
    const { created } = JSON.parse(triggered.stdout) as { created: { payment: string } };

    const [delivery] = await receiver.waitFor(1);
    // Only the type asked for is forwarded, though the payment fired payment.created before it.
    expect(receiver.received).toHaveLength(1);
    expect(delivery!.path).toBe('/webhooks');
    const event = new Webhook(secret).verify(delivery!.body, delivery!.headers) as { type: string; data: { id: string } };
    expect(event.type).toBe('payment.completed');
    expect(event.data.id).toBe(created.payment);
    await listener.logged('[200]');
    expect(listener.output()).toMatch(/payment\.completed {2}[0-9a-f-]{36} {2}-> POST http:\/\/127\.0\.0\.1:\d+\/webhooks \[200\]/);

    listener.child.kill('SIGINT');
    expect(await listener.exited).toEqual({ code: 0, signal: null });
  });

  it('takes the key `sandbox init` exports as KEY when CUSTOMER_API_KEY is not set', async () => {
    const triggered = await run(process.execPath, ['bin/customer-api.js', 'trigger', 'payee.created'], { env: { ...env, CUSTOMER_API_KEY: '', KEY: env.CUSTOMER_API_KEY } });
    expect(triggered.stderr).toBe('');
    expect(triggered.code).toBe(0);
  });

  it('refuses an unknown event type with the known ones, and a missing API key', async () => {
    const unknown = await run(process.execPath, ['bin/customer-api.js', 'trigger', 'payment.exploded'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^customer-api: unknown event type "payment.exploded"; known types: payment.created, .*otc_order.status_updated\n$/);
    const keyless = await run(process.execPath, ['bin/customer-api.js', 'listen', '--forward-to', receiver.url()], { env: { ...env, CUSTOMER_API_KEY: '', KEY: '' } });
    expect(keyless.code).toBe(1);
    expect(keyless.stderr).toContain('an API key is needed');
  });
});
