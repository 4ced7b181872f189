import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventStreamsPerCustomerMax } from '../../src/config/limits.js';
import { EventStreamClient } from '../helpers/event-stream.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { appendEvent } from '../../src/events/outbox.js';
import { createTestApp, testDialect, type TestApp } from '../helpers/test-app.js';

/** GET /events/stream (docs/webhooks.md "Event stream") over a real listener: fetch reads the server-sent events. */
describe('GET /events/stream', () => {
  let t: TestApp;
  let baseUrl: string;
  const clients: EventStreamClient[] = [];
  // The test's own connection pool, closed after each test: the server's close waits for every open connection.
  let agent: Agent;

  beforeEach(async () => {
    t = await createTestApp();
    agent = new Agent();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    for (const client of clients.splice(0)) client.close();
    await agent.destroy();
    await t.close();
  });

  async function open(key: string, query = '', headers: Record<string, string> = {}): Promise<EventStreamClient> {
    const client = await EventStreamClient.open(`${baseUrl}/events/stream${query}`, { 'x-api-key': key, ...headers }, agent);
    clients.push(client);
    return client;
  }

  it("sends the key's customer's events as they are written, in the delivered body, and never another customer's", async () => {
    const mine = await t.createCustomer('Mine');
    const other = await t.createCustomer('Other');
    const earlier = await createFiatAccount(t, mine);
    const stream = await open(mine.key);
    expect(stream.response.status).toBe(200);
    expect(stream.response.headers.get('content-type')).toMatch(/^text\/event-stream/);

    const otherAccount = await createFiatAccount(t, other);
    const account = await createFiatAccount(t, mine);
    const [message] = await stream.waitFor(1);
    expect(message!.event).toBe('fiat_account.created');
    expect(message!.data.data.id).toBe(account.id);
    expect(message!.id).toMatch(/^[0-9]+$/);
    // The body a webhook delivery carries is the event as GET /events/{id} shows it.
    const read = await t.request({ url: `/events/${message!.data.id}`, key: mine.key });
    const { deliveries: _deliveries, ...event } = read.json<{ data: Record<string, unknown> }>().data;
    expect(message!.data).toEqual(event);
    expect(JSON.stringify(stream.messages)).not.toContain(otherAccount.id);
    expect(JSON.stringify(stream.messages)).not.toContain(earlier.id);
  });

  it('resumes after Last-Event-ID, or after=, without losing or repeating an event', async () => {
    const customer = await t.createCustomer();
    const first = await open(customer.key);
    const accounts = [await createFiatAccount(t, customer), await createFiatAccount(t, customer)];
    const sent = await first.waitFor(2);
    first.close();
    accounts.push(await createFiatAccount(t, customer));

    const resumed = await open(customer.key, '', { 'last-event-id': sent[0]!.id });
    const again = await resumed.waitFor(2);
    expect(again.map((message) => message.data.data.id)).toEqual([accounts[1]!.id, accounts[2]!.id]);
    const byQuery = await open(customer.key, `?after=${again[1]!.id}`);
    accounts.push(await createFiatAccount(t, customer));
    const next = await byQuery.waitFor(1);
    expect(next.map((message) => message.data.data.id)).toEqual([accounts[3]!.id]);
  });

  it(`refuses a customer's stream beyond ${eventStreamsPerCustomerMax} open ones (429), not another customer's, until one closes`, async () => {
    const customer = await t.createCustomer();
    for (let index = 0; index < eventStreamsPerCustomerMax; index += 1) expect((await open(customer.key)).response.status).toBe(200);
    const refused = await open(customer.key);
    expect(refused.response.status).toBe(429);
    expect(((await refused.response.json()) as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    const other = await t.createCustomer('Other');
    expect((await open(other.key)).response.status).toBe(200);
    // A client that leaves frees its slot.
    clients[0]!.close();
    const deadline = Date.now() + 5_000;
    let reopened = await open(customer.key);
    while (reopened.response.status !== 200 && Date.now() < deadline) reopened = await open(customer.key);
    expect(reopened.response.status).toBe(200);
  });

  it('requires the read scope of GET /events, and a cursor that is one', async () => {
    const customer = await t.createCustomer('Scoped', { scopes: ['payments:read'] });
    const refused = await open(customer.key);
    expect(refused.response.status).toBe(403);
    expect(((await refused.response.json()) as { error: { code: string } }).error.code).toBe('INSUFFICIENT_SCOPE');
    const full = await t.createCustomer();
    const badCursor = await open(full.key, '?after=abc');
    expect(badCursor.response.status).toBe(400);
    expect((await open(full.key, '', { 'last-event-id': 'x'.repeat(30) })).response.status).toBe(400);
    expect((await open('sk_test_unknown')).response.status).toBe(401);
  });

  it('sends only the event types the key may read', async () => {
    const customer = await t.createCustomer();
    const { key } = await t.createKey(customer.id, { scopes: ['webhooks:read', 'payments:read'] });
    const stream = await open(key);
    await createFiatAccount(t, customer);
    const full = await open(customer.key);
    await createFiatAccount(t, customer);
    await full.waitFor(1);
    // The fiat account events the key may not read never come, though newer ones reached a key that may.
    expect(stream.messages).toEqual([]);
  });

  it.runIf(testDialect === 'postgres')('sends an event whose transaction commits after a later event was sent (a sequence is taken at insert)', async () => {
    const customer = await t.createCustomer();
    const stream = await open(customer.key);
    let inserted!: () => void;
    let commit!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    const commitSignal = new Promise<void>((resolve) => (commit = resolve));
    const late = t.storage.transaction(async (trx) => {
      await appendEvent(trx, { customerId: customer.id, type: 'payee.created', data: { id: 'committed late' }, createdAt: t.clock.now() });
      inserted();
      await commitSignal;
    });
    await insertedSignal;
    const account = await createFiatAccount(t, customer);
    const [first] = await stream.waitFor(1);
    expect(first!.data.data.id).toBe(account.id);
    commit();
    await late;
    const [, second] = await stream.waitFor(2);
    expect(second!.data.data).toEqual({ id: 'committed late' });
    // It carries the cursor, which had already passed its sequence: a resume from it repeats nothing.
    expect(second!.id).toBe(first!.id);
  });

  it('ends every stream when the server stops taking requests', async () => {
    const customer = await t.createCustomer();
    const stream = await open(customer.key);
    t.app.refuseNewRequests();
    await stream.waitForEnd();
  });
});
