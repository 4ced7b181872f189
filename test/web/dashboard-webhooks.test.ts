import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscribableEventTypes } from '../../src/modules/webhooks/schemas.js';
import { DashboardBrowser, csrfOf, signedInBrowser } from '../helpers/dashboard.js';
import { createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, subscribe } from '../helpers/webhooks.js';

const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';

/** The whole secret a page shows once, in its copy field. */
function secretOn(html: string): string {
  const match = /id="new-secret-value" readonly value="([^"]+)"/.exec(html);
  if (!match) throw new Error('the page shows no secret');
  return match[1]!;
}

/** The rows of a page's table body, tags stripped, one string per row. */
function tableRows(html: string): string[] {
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(html)?.[1] ?? '';
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) => row[1]!.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ').trim());
}

/** A datetime-local value (UTC, minutes) `ms` before the test clock's now. */
const minutesAgo = (t: TestApp, ms: number) => new Date(t.clock.now().getTime() - ms).toISOString().slice(0, 16);

describe('dashboard: webhooks and events', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    browser = await signedInBrowser(t, alice.id);
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const apiWebhook = async (customer: TestCustomer, id: string) => t.request({ url: `/webhooks/${id}`, key: customer.key });
  const removeThroughApi = (customer: TestCustomer, id: string) => t.request({ method: 'DELETE', url: `/webhooks/${id}`, key: customer.key, csrf: true });

  /** Creates a subscription through the dashboard form; answers its id and the secret shown once. */
  async function createThroughForm(fields: Record<string, string | string[]>) {
    await browser.get('/dashboard/webhooks');
    const response = await browser.submit('/dashboard/webhooks', fields);
    expect(response.statusCode, response.body.slice(0, 2000)).toBe(200);
    expect(response.redirectedTo).toMatch(/^\/dashboard\/reveal\//);
    const id = /href="\/dashboard\/webhooks\/([0-9a-f-]{36})">Open the subscription/.exec(response.body)![1]!;
    return { id, secret: secretOn(response.body), page: response.body, revealedAt: response.redirectedTo! };
  }

  it('creates a subscription from the form, shows its whole secret once, and the API lists it', async () => {
    const { id, secret, page, revealedAt } = await createThroughForm({ url: receiver.url(), description: 'Ledger <sync>', event_types: ['payment.created', 'end_user.created'] });
    expect(page).toContain('shown only this once');
    expect(page).toContain(`Subscription to ${receiver.url()} created.`);
    expect(page).toContain('data-copy="new-secret-value"');
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const listed = await t.request({ url: '/webhooks', key: alice.key });
    const record = listed.json().data.find((item: { id: string }) => item.id === id);
    expect(record).toMatchObject({ url: receiver.url(), description: 'Ledger <sync>', event_types: ['payment.created', 'end_user.created'], is_active: true });
    expect(secret.startsWith(record.signing_secret_prefix)).toBe(true);

    // Listed with its prefix only, the description escaped; the secret never again.
    const list = await browser.get('/dashboard/webhooks');
    expect(list.statusCode).toBe(200);
    expect(list.body).toContain(`${record.signing_secret_prefix}…`);
    expect(list.body).toContain('Ledger &lt;sync&gt;');
    expect(list.body).not.toContain(secret);
    expect(tableRows(list.body).find((row) => row.includes(receiver.url()))).toContain('Active');
    expect((await browser.get(`/dashboard/webhooks/${id}`)).body).not.toContain(secret);
    // A reload of the reveal page creates no second subscription and shows the secret no more.
    const count = (await t.request({ url: '/webhooks', key: alice.key })).json().data.length;
    const reloaded = await browser.get(revealedAt);
    expect(reloaded.statusCode).toBe(410);
    expect(reloaded.body).toContain('already been shown');
    expect(reloaded.body).not.toContain(secret);
    expect((await t.request({ url: '/webhooks', key: alice.key })).json().data.length).toBe(count);
    await removeThroughApi(alice, id);
  });

  it('"every type" subscribes to the whole list of subscribable types', async () => {
    const { id } = await createThroughForm({ url: receiver.url(), all_event_types: 'yes', event_types: 'payee.created' });
    expect((await apiWebhook(alice, id)).json().data.event_types).toEqual([...subscribableEventTypes]);
    await removeThroughApi(alice, id);
  });

  it('a refused form answers 400 with the API’s reasons, keeps what was typed and creates nothing', async () => {
    const before = (await t.request({ url: '/webhooks', key: alice.key })).json().data.length;
    await browser.get('/dashboard/webhooks');
    const cases: Array<[Record<string, string | string[]>, string]> = [
      [{ url: receiver.url('/kept'), description: 'kept too' }, '<a href="#event_types">Event types: must NOT have fewer than 1 items</a>'],
      [{ event_types: 'payee.created' }, '<a href="#url">Receiver URL: is required</a>'],
      [{ url: 'ftp://example.com/hook', event_types: 'payee.created' }, 'Receiver URL:'],
      [{ url: receiver.url(), event_types: 'payment.refunded' }, 'Event types: must be one of'],
      [{ url: receiver.url(), event_types: 'payee.created', description: 'x'.repeat(501) }, 'Description: must NOT have more than 500 characters'],
      [{ url: receiver.url(), event_types: 'payee.created', description: 'Ledger \u202Ecnys' }, 'Description: must not contain U+202E (a bidirectional control character)'],
      [{ url: receiver.url(), event_types: 'payee.created', description: 'Ledger\r\nsync' }, 'Description: must not contain U+000D (a line break)'],
    ];
    for (const [fields, reason] of cases) {
      const response = await browser.submit('/dashboard/webhooks', fields);
      expect(response.statusCode, JSON.stringify(fields).slice(0, 80)).toBe(400);
      expect(response.body).toContain('role="alert"');
      expect(response.body).toContain(reason);
    }
    const first = await browser.submit('/dashboard/webhooks', cases[0]![0]);
    expect(first.body).toContain(`value="${receiver.url('/kept')}"`);
    expect(first.body).toContain('value="kept too"');
    expect((await t.request({ url: '/webhooks', key: alice.key })).json().data).toHaveLength(before);
  });

  it('the 11th subscription is refused with the LIMIT_EXCEEDED message (422)', async () => {
    const carol = await t.createCustomer('Carol SA');
    for (let index = 0; index < 10; index += 1) await subscribe(t, carol, { url: receiver.url(), eventTypes: ['payee.created'] });
    const carolBrowser = await signedInBrowser(t, carol.id);
    await carolBrowser.get('/dashboard/webhooks');
    const response = await carolBrowser.post('/dashboard/webhooks', { url: receiver.url(), event_types: 'payee.created' });
    expect(response.statusCode).toBe(422);
    expect(response.body).toContain('A customer has at most 10 webhook subscriptions.');
    expect(response.body).toContain('(10 of at most 10)');
  });

  it('edits the url, description and event types; an emptied description is ""', async () => {
    const created = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'], description: 'Before' });
    const page = await browser.get(`/dashboard/webhooks/${created.id}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('value="payee.created" checked');
    const saved = await browser.submit(`/dashboard/webhooks/${created.id}`, { url: receiver.url('/moved'), description: 'After', event_types: ['end_user.created', 'payment.completed'] });
    expect(saved.statusCode).toBe(200);
    expect(saved.body).toContain('Saved.');
    expect((await apiWebhook(alice, created.id)).json().data).toMatchObject({ url: receiver.url('/moved'), description: 'After', event_types: ['end_user.created', 'payment.completed'] });

    const refused = await browser.submit(`/dashboard/webhooks/${created.id}`, { url: receiver.url('/moved'), description: 'Typed', event_types: 'nope' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Event types: must be one of');
    expect(refused.body).toContain('value="Typed"');
    expect((await apiWebhook(alice, created.id)).json().data.description).toBe('After');

    await browser.submit(`/dashboard/webhooks/${created.id}`, { url: receiver.url('/moved'), description: '', event_types: 'end_user.created' });
    expect((await apiWebhook(alice, created.id)).json().data).toMatchObject({ description: '', event_types: ['end_user.created'] });
    await removeThroughApi(alice, created.id);
  });

  it('disables and enables a subscription; a disabled one refuses a test event with WEBHOOK_DISABLED', async () => {
    const created = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    await browser.get(`/dashboard/webhooks/${created.id}`);
    const disabled = await browser.submit(`/dashboard/webhooks/${created.id}/active`, { is_active: 'false' });
    expect(disabled.statusCode).toBe(200);
    expect(disabled.body).toContain('Disabled: nothing is sent to it');
    expect(disabled.body).toContain('Disabled</span> since');
    expect(disabled.body).toContain('disabled by request');
    expect((await apiWebhook(alice, created.id)).json().data).toMatchObject({ is_active: false, disabled_reason: 'disabled by request' });

    // A page opened before it was disabled still offers the test: the refusal is shown as a problem.
    const test = await browser.submit(`/dashboard/webhooks/${created.id}/test`);
    expect(test.statusCode).toBe(422);
    expect(test.body).toContain('This subscription is disabled');

    const enabled = await browser.submit(`/dashboard/webhooks/${created.id}/active`, { is_active: 'true' });
    expect(enabled.statusCode).toBe(200);
    expect(enabled.body).toContain('Enabled:');
    expect((await apiWebhook(alice, created.id)).json().data).toMatchObject({ is_active: true, disabled_at: null, disabled_reason: null });

    const nonsense = await browser.submit(`/dashboard/webhooks/${created.id}/active`, { is_active: 'maybe' });
    expect(nonsense.statusCode).toBe(400);
    expect(nonsense.body).toContain('Is active: must be boolean');
    await removeThroughApi(alice, created.id);
  });

  it('rotating shows a new secret once, different from the first, and deliveries are signed with it', async () => {
    const { id, secret } = await createThroughForm({ url: receiver.url('/rotated'), event_types: 'payee.created' });
    await browser.get(`/dashboard/webhooks/${id}`);
    expect(browser.lastPage).toMatch(/rotate-secret" data-confirm="[^"]+"/);
    const rotated = await browser.submit(`/dashboard/webhooks/${id}/rotate-secret`);
    expect(rotated.statusCode).toBe(200);
    const newSecret = secretOn(rotated.body);
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(secret);
    expect(newSecret.startsWith((await apiWebhook(alice, id)).json().data.signing_secret_prefix)).toBe(true);
    expect((await browser.get(`/dashboard/webhooks/${id}`)).body).not.toContain(newSecret);
    // Reloading the reveal page shows no secret and rotates nothing.
    const prefix = (await apiWebhook(alice, id)).json().data.signing_secret_prefix;
    const again = await browser.get(rotated.redirectedTo!);
    expect(again.statusCode).toBe(410);
    expect(again.body).not.toContain(newSecret);
    expect((await apiWebhook(alice, id)).json().data.signing_secret_prefix).toBe(prefix);

    await browser.submit(`/dashboard/webhooks/${id}/test`);
    await deliverDue(t);
    const received = receiver.received.filter((request) => request.path === '/rotated');
    expect(received).toHaveLength(1);
    const headers = { 'webhook-id': received[0]!.headers['webhook-id']!, 'webhook-timestamp': received[0]!.headers['webhook-timestamp']!, 'webhook-signature': received[0]!.headers['webhook-signature']! };
    // Both secrets sign during the day after a rotation.
    expect(new Webhook(newSecret).verify(received[0]!.body, headers)).toMatchObject({ type: 'webhook.test' });
    expect(new Webhook(secret).verify(received[0]!.body, headers)).toMatchObject({ type: 'webhook.test' });
    await removeThroughApi(alice, id);
  });

  it('a test event is queued, and its delivery shows in the table with status, code and attempts', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/tested'), eventTypes: ['payee.created'] });
    await browser.get(`/dashboard/webhooks/${created.id}`);
    const queued = await browser.submit(`/dashboard/webhooks/${created.id}/test`);
    expect(queued.statusCode).toBe(200);
    expect(queued.body).toContain('is queued for this subscription');
    const eventId = /A webhook\.test event \(([0-9a-f-]{36})\) is queued/.exec(queued.body)![1]!;
    expect(tableRows(queued.body)).toEqual([expect.stringMatching(new RegExp(`^Pending Webhook test ${eventId} 0 — —`))]);
    // A reload after the post shows the same one delivery: no second test event.
    expect(queued.redirectedTo).toBe(`/dashboard/webhooks/${created.id}`);
    expect(tableRows((await browser.get(queued.redirectedTo!)).body)).toHaveLength(1);

    receiver.answer = () => ({ status: 503 });
    await deliverDue(t);
    receiver.answer = () => ({ status: 200 });
    const failedOnce = await browser.get(`/dashboard/webhooks/${created.id}`);
    const [row] = tableRows(failedOnce.body);
    expect(row).toMatch(new RegExp(`^Pending Webhook test ${eventId} 1 503 `));
    const delivery = (await t.request({ url: `/webhooks/${created.id}/deliveries`, key: alice.key })).json().data[0];
    expect(failedOnce.body).toContain(`<time datetime="${delivery.next_attempt_at}"`);
    // The attempts are on the delivery's own page, which its count links to.
    const deliveryPath = `/dashboard/webhooks/${created.id}/deliveries/${delivery.id}`;
    expect(failedOnce.body).toContain(`href="${deliveryPath}"`);
    expect((await browser.get(deliveryPath)).body).toMatch(/#1 failed: 503, \d+ ms/);

    t.clock.advance(10_000);
    await deliverDue(t);
    const succeeded = await browser.get(`/dashboard/webhooks/${created.id}?status=succeeded`);
    expect(tableRows(succeeded.body)[0]).toMatch(new RegExp(`^Succeeded Webhook test ${eventId} 2 200 `));
    expect((await browser.get(deliveryPath)).body).toMatch(/#2 succeeded: 200, \d+ ms[\s\S]*#1 failed: 503, \d+ ms/);
    expect(succeeded.body).toContain(`href="/dashboard/events/${eventId}"`);
    expect(tableRows((await browser.get(`/dashboard/webhooks/${created.id}?status=failed`)).body)).toEqual(['No deliveries of this status here.']);
    await removeThroughApi(alice, created.id);
  });

  it('shows a failing subscription as failing, its health and deliveries first, each delivery’s exchanges on its page, and sends one again from its row', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/failing'), eventTypes: ['payee.created'] });
    receiver.answer = () => ({ status: 500, headers: { 'x-trace': 'trace-7' }, body: 'database <down>' });
    const tested = await t.request({ method: 'POST', url: `/webhooks/${created.id}/test`, key: alice.key, csrf: true });
    const deliveryId = tested.json().data.delivery_id as string;
    await deliverDue(t);
    // The first retry, 5 s later, fails too; the next is due in 5 minutes.
    t.clock.advance(5000);
    await deliverDue(t);
    receiver.answer = () => ({ status: 200 });

    const page = await browser.get(`/dashboard/webhooks/${created.id}`);
    expect(page.body).toContain('<span class="status-bad">Failing</span>: the last 2 attempts failed');
    expect(page.body).toContain('<dt>Last success</dt><dd>never</dd>');
    expect(page.body).toContain('<dt>Last 24 hours</dt><dd>2 attempts, 2 failed (100 % errors)</dd>');
    expect(page.body).toMatch(/<dt>Disabled automatically<\/dt><dd>If it keeps failing: after 6 more failed attempts, and not before \d{1,2} \w{3} \d{4}, \d{2}:\d{2} UTC \(in 4 days 23 hours\)\.<\/dd>/);
    // Deliveries come before the subscription's details and forms.
    expect(page.body.indexOf('<h2 id="deliveries">Deliveries</h2>')).toBeLessThan(page.body.indexOf('<h2>Edit</h2>'));
    const [row] = tableRows(page.body);
    expect(row).toMatch(/^Pending Webhook test .* 2 500 /);
    expect(row).toMatch(/Send again now$/);
    // The list carries no exchange: each delivery's page has its attempts, with what was sent and answered.
    expect(page.body).not.toContain('trace-7');
    const deliveryPage = await browser.get(`/dashboard/webhooks/${created.id}/deliveries/${deliveryId}`);
    expect(deliveryPage.statusCode).toBe(200);
    expect(deliveryPage.body).toMatch(/#2 failed: 500[\s\S]*#1 failed: 500/);
    expect(deliveryPage.body).toContain('x-trace: trace-7');
    expect(deliveryPage.body).toContain(`webhook-id: ${deliveryId}`);
    expect(deliveryPage.body).toContain('database &lt;down&gt;');
    expect(deliveryPage.body).toContain(`action="/dashboard/webhooks/${created.id}/deliveries/${deliveryId}/retry"`);
    // An unknown delivery, and one of another customer's, are not found alike.
    expect((await browser.get(`/dashboard/webhooks/${created.id}/deliveries/${unknownId}`)).statusCode).toBe(404);
    const bobBrowser = await signedInBrowser(t, bob.id);
    expect((await bobBrowser.get(`/dashboard/webhooks/${created.id}/deliveries/${deliveryId}`)).statusCode).toBe(404);
    expect((await browser.get('/dashboard/webhooks')).body).toContain('<span class="status-bad">Failing</span>');
    expect(tableRows((await browser.get(`/dashboard/webhooks/${created.id}?status=failing`)).body)[0]).toMatch(/^Pending Webhook test/);
    expect(tableRows((await browser.get(`/dashboard/webhooks/${created.id}?status=failed`)).body)).toEqual(['No deliveries of this status here.']);

    // Sent again now, without waiting for its retry.
    const retried = await browser.submit(`/dashboard/webhooks/${created.id}/deliveries/${deliveryId}/retry`);
    expect(retried.statusCode).toBe(200);
    expect(retried.body).toContain(`Delivery ${deliveryId} is due again now`);
    await deliverDue(t);
    const healthy = await browser.get(`/dashboard/webhooks/${created.id}`);
    expect(healthy.body).toContain('<span class="status-ok">Active</span>');
    expect(healthy.body).toContain(`<dt>Last success</dt><dd><time datetime="${t.clock.now().toISOString()}"`);
    expect(tableRows(healthy.body)[0]).toMatch(/^Succeeded Webhook test .* 3 200 /);
    const unknown = await browser.submit(`/dashboard/webhooks/${created.id}/deliveries/${unknownId}/retry`);
    expect(unknown.statusCode).toBe(404);
    await removeThroughApi(alice, created.id);
  });

  it('sending again a delivery being attempted leaves it as it is, and says so', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/hanging'), eventTypes: ['payee.created'] });
    receiver.answer = () => 'hang';
    const receivedBefore = receiver.received.length;
    const tested = await t.request({ method: 'POST', url: `/webhooks/${created.id}/test`, key: alice.key, csrf: true });
    const deliveryId = tested.json().data.delivery_id as string;
    expect(await t.app.workers.find((worker) => worker.name === 'webhook-delivery')!.runOnce()).toBe(1);
    await receiver.waitFor(receivedBefore + 1);
    const retried = await browser.submit(`/dashboard/webhooks/${created.id}/deliveries/${deliveryId}/retry`);
    expect(retried.statusCode).toBe(200);
    expect(retried.body).toContain(`Delivery ${deliveryId} is being attempted: it was left as it is.`);
    await t.app.webhookDeliveries.idle();
    expect(receiver.received.filter((received) => received.path === '/hanging')).toHaveLength(1);
    receiver.answer = () => ({ status: 200 });
    await removeThroughApi(alice, created.id);
  });

  it('the replay form offers only dates the server accepts, its earliest included, and can replay only the failed deliveries', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/replay-form'), eventTypes: ['payee.created'] });
    // Mid-minute, where cutting the earliest date to its minute made it older than the window.
    t.clock.advance(30_500);
    const page = await browser.get(`/dashboard/webhooks/${created.id}`);
    const earliest = /id="since" name="since" type="datetime-local" required value="[^"]+" min="([^"]+)"/.exec(page.body)![1]!;
    const replayed = await browser.submit(`/dashboard/webhooks/${created.id}/replay`, { since: earliest });
    expect(replayed.statusCode, replayed.body.slice(0, 2000)).toBe(200);
    expect(replayed.body).toMatch(/\d+ events? queued for delivery\./);
    await deliverDue(t);
    const onlyFailed = await browser.submit(`/dashboard/webhooks/${created.id}/replay`, { since: earliest, only_failed: 'true' });
    expect(onlyFailed.statusCode).toBe(200);
    expect(onlyFailed.body).toContain('0 failed events queued for delivery.');
    await removeThroughApi(alice, created.id);
  });

  it('pages deliveries and events, keeping the filter; a bad page, limit or filter answers a 400 page', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/paged'), eventTypes: ['payee.created'] });
    for (let index = 0; index < 3; index += 1) {
      await t.request({ method: 'POST', url: `/webhooks/${created.id}/test`, key: alice.key, csrf: true });
      t.clock.advance(1);
    }
    const first = await browser.get(`/dashboard/webhooks/${created.id}?status=pending&limit=2`);
    expect(first.body).toContain('Page 1 of 2 (3 in all)');
    expect(tableRows(first.body)).toHaveLength(2);
    expect(first.body).toContain(`href="/dashboard/webhooks/${created.id}?status=pending&amp;page=2&amp;limit=2" rel="next"`);
    const second = await browser.get(`/dashboard/webhooks/${created.id}?status=pending&page=2&limit=2`);
    expect(tableRows(second.body)).toHaveLength(1);
    expect(second.body).toContain('rel="prev"');
    expect(second.body).not.toContain('rel="next"');
    // The whole list, however large the limit asked for: clamped like the API.
    expect((await browser.get(`/dashboard/webhooks/${created.id}?limit=100000`)).body).toContain('Page 1 of 1 (3 in all)');

    const events = await browser.get('/dashboard/events?type=webhook.test&limit=1');
    expect(events.statusCode).toBe(200);
    expect(events.body).toMatch(/Page 1 of \d+ \(\d+ in all\)/);
    expect(events.body).toContain('href="/dashboard/events?type=webhook.test&amp;page=2&amp;limit=1" rel="next"');

    const refused: Array<[string, string]> = [
      [`/dashboard/webhooks/${created.id}?page=0`, 'Page: must be &gt;= 1'],
      [`/dashboard/webhooks/${created.id}?page=x`, 'Page: must be integer'],
      [`/dashboard/webhooks/${created.id}?limit=0`, 'Limit: must be &gt;= 1'],
      [`/dashboard/webhooks/${created.id}?status=bounced`, 'Status: must be one of pending, succeeded, failed'],
      ['/dashboard/events?page=-1', 'Page: must be integer'],
      ['/dashboard/events?page=1000000001', 'Page: must be &lt;= 1000000000'],
      [`/dashboard/events?type=${'t'.repeat(65)}`, 'Type: must NOT have more than 64 characters'],
    ];
    for (const [url, reason] of refused) {
      const response = await browser.get(url);
      expect(response.statusCode, url).toBe(400);
      expect(response.body, url).toContain(reason);
    }
    await removeThroughApi(alice, created.id);
  });

  it('the events page lists this customer’s events only, filters by type, and shows an event’s data escaped', async () => {
    const mine = await createIndividual(t, alice, { lastName: 'Lovelace-<b>' });
    const theirs = await createIndividual(t, bob);
    const apiEvents = (await t.request({ url: '/events?type=end_user.created', key: alice.key })).json().data as Array<{ id: string; data: { id: string } }>;
    const myEvent = apiEvents.find((event) => event.data.id === mine.id)!;
    const theirEvent = (await t.request({ url: '/events?type=end_user.created', key: bob.key })).json().data.find((event: { data: { id: string } }) => event.data.id === theirs.id);

    const all = await browser.get('/dashboard/events');
    expect(all.statusCode).toBe(200);
    expect(all.body).toContain(`href="/dashboard/events/${myEvent.id}"`);
    expect(all.body).not.toContain(theirEvent.id);
    const filtered = await browser.get('/dashboard/events?type=end_user.created');
    expect(tableRows(filtered.body).every((row) => row.includes('end_user.created'))).toBe(true);
    expect(filtered.body).toContain('<option value="end_user.created" selected>');
    expect(tableRows((await browser.get('/dashboard/events?type=payee.created')).body)).toEqual(['No events here.']);
    // An empty filter (the form's "Any") is no filter.
    expect((await browser.get('/dashboard/events?type=&page=')).statusCode).toBe(200);

    const detail = await browser.get(`/dashboard/events/${myEvent.id}`);
    expect(detail.statusCode).toBe(200);
    expect(detail.body).toContain('<pre class="event-data"><code>{\n  &quot;id&quot;: &quot;' + mine.id + '&quot;');
    expect(detail.body).toContain('&quot;last_name&quot;: &quot;Lovelace-&lt;b&gt;&quot;');
    expect(detail.body).not.toContain('Lovelace-<b>');
  });

  it('replays past events of the subscription’s types and says how many were queued', async () => {
    const since = minutesAgo(t, 60 * 60_000);
    await createIndividual(t, alice);
    const expected = (await t.request({ url: '/events?type=end_user.created&limit=100', key: alice.key }))
      .json()
      .data.filter((event: { created_at: string }) => event.created_at >= `${since}:00.000Z`).length;
    const created = await subscribe(t, alice, { url: receiver.url('/replayed'), eventTypes: ['end_user.created'] });
    const page = await browser.get(`/dashboard/webhooks/${created.id}`);
    expect(page.body).toContain('<label for="since">Since <span class="hint">(UTC)</span></label>');

    const replayed = await browser.submit(`/dashboard/webhooks/${created.id}/replay`, { since });
    expect(replayed.statusCode).toBe(200);
    expect(expected).toBeGreaterThan(0);
    expect(replayed.body).toContain(`${expected} ${expected === 1 ? 'event' : 'events'} queued for delivery.`);
    const deliveries = (await t.request({ url: `/webhooks/${created.id}/deliveries`, key: alice.key })).json().data;
    expect(deliveries).toHaveLength(expected);
    expect(tableRows(replayed.body).every((row) => row.startsWith('Pending End user: created'))).toBe(true);
    // Reloading the page the replay redirected to queues nothing more, and says nothing again.
    const reloaded = await browser.get(replayed.redirectedTo!);
    expect(reloaded.body).not.toContain('queued for delivery.');
    expect((await t.request({ url: `/webhooks/${created.id}/deliveries`, key: alice.key })).json().data).toHaveLength(expected);

    const tooOld = await browser.submit(`/dashboard/webhooks/${created.id}/replay`, { since: minutesAgo(t, 31 * 86_400_000) });
    expect(tooOld.statusCode).toBe(400);
    expect(tooOld.body).toContain('<a href="#since">Since: must be within the last 30 days</a>');
    const garbled = await browser.submit(`/dashboard/webhooks/${created.id}/replay`, { since: 'yesterday' });
    expect(garbled.statusCode).toBe(400);
    expect(garbled.body).toContain('Since: must be an RFC 3339 date-time');
    expect(garbled.body).toMatch(/<input id="since"[^>]*value="yesterday"[^>]* aria-invalid="true" aria-describedby="since-problem">/);

    // A replay that stopped at its bound redirects with where the rest starts: the page offers to queue it.
    const rest = await browser.get(`/dashboard/webhooks/${created.id}?rest_since=2026-11-26T10:00:00.123Z&only_failed=true`);
    expect(rest.body).toContain('Queue the rest, from 26 Nov 2026, 10:00 UTC');
    expect(rest.body).toContain('<input type="hidden" name="since" value="2026-11-26T10:00:00.123Z">');
    expect(rest.body).toContain('<input type="hidden" name="only_failed" value="true">');
    // Anything else there is no date: no such form.
    expect((await browser.get(`/dashboard/webhooks/${created.id}?rest_since=%22%3E%3Cscript%3E`)).body).not.toContain('Queue the rest');

    await browser.submit(`/dashboard/webhooks/${created.id}/active`, { is_active: 'false' });
    const whileDisabled = await browser.submit(`/dashboard/webhooks/${created.id}/replay`, { since });
    expect(whileDisabled.statusCode).toBe(422);
    expect(whileDisabled.body).toContain('This subscription is disabled');
    await removeThroughApi(alice, created.id);
  });

  it('deletes after a confirmation, redirecting to the list; the events stay', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/deleted'), eventTypes: ['payee.created'] });
    await t.request({ method: 'POST', url: `/webhooks/${created.id}/test`, key: alice.key, csrf: true });
    const page = await browser.get(`/dashboard/webhooks/${created.id}`);
    expect(page.body).toMatch(new RegExp(`action="/dashboard/webhooks/${created.id}/delete" data-confirm="Delete this subscription`));
    const deleted = await browser.submit(`/dashboard/webhooks/${created.id}/delete`);
    expect(deleted.redirectedTo).toBe('/dashboard/webhooks');
    expect(deleted.body).toContain(`The subscription to ${receiver.url('/deleted')} is deleted.`);
    expect((await apiWebhook(alice, created.id)).statusCode).toBe(404);
    expect((await browser.get('/dashboard/webhooks')).body).not.toContain(receiver.url('/deleted'));
    expect((await browser.get(`/dashboard/webhooks/${created.id}`)).statusCode).toBe(404);
  });

  it('every form of the section is refused 403 without its form token, changing nothing', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/guarded'), eventTypes: ['payee.created'] });
    const forms: Array<[string, Record<string, string>]> = [
      ['/dashboard/webhooks', { url: receiver.url(), event_types: 'payee.created' }],
      [`/dashboard/webhooks/${created.id}`, { url: receiver.url('/changed'), event_types: 'payee.created' }],
      [`/dashboard/webhooks/${created.id}/active`, { is_active: 'false' }],
      [`/dashboard/webhooks/${created.id}/rotate-secret`, {}],
      [`/dashboard/webhooks/${created.id}/test`, {}],
      [`/dashboard/webhooks/${created.id}/replay`, { since: minutesAgo(t, 60_000) }],
      [`/dashboard/webhooks/${created.id}/delete`, {}],
      [`/dashboard/webhooks/${created.id}/deliveries/${unknownId}/retry`, {}],
    ];
    const before = (await apiWebhook(alice, created.id)).json().data;
    for (const [url, fields] of forms) {
      for (const token of ['', 'f'.repeat(64)]) {
        const response = await browser.submit(url, { ...fields, _csrf: token });
        expect(response.statusCode, url).toBe(403);
        expect(response.body).toContain('The form was out of date');
      }
      // Without the field at all.
      const bare = await t.app.inject({ method: 'POST', url, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: [...browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ') } });
      expect(bare.statusCode, url).toBe(403);
    }
    expect((await apiWebhook(alice, created.id)).json().data).toEqual(before);
    expect((await t.request({ url: `/webhooks/${created.id}/deliveries`, key: alice.key })).json().data).toEqual([]);
    expect((await t.request({ url: '/webhooks', key: alice.key })).json().data.filter((item: { url: string }) => item.url === receiver.url())).toEqual([]);
    await removeThroughApi(alice, created.id);
  });

  it('another customer’s subscription or event answers 404 on every route, exactly like an unknown id', async () => {
    const theirs = await subscribe(t, bob, { url: receiver.url('/bobs'), eventTypes: ['payee.created'] });
    const theirEvent = (await t.request({ method: 'POST', url: `/webhooks/${theirs.id}/test`, key: bob.key, csrf: true })).json().data.event.id as string;
    const routes = (webhookId: string, eventId: string): Array<[string, string, Record<string, string>]> => [
      ['GET', `/dashboard/webhooks/${webhookId}`, {}],
      ['GET', `/dashboard/webhooks/${webhookId}?status=pending&page=2`, {}],
      ['POST', `/dashboard/webhooks/${webhookId}`, { url: receiver.url('/stolen'), description: 'mine now', event_types: 'payee.created' }],
      ['POST', `/dashboard/webhooks/${webhookId}`, { event_types: 'nope' }],
      ['POST', `/dashboard/webhooks/${webhookId}/active`, { is_active: 'false' }],
      ['POST', `/dashboard/webhooks/${webhookId}/rotate-secret`, {}],
      ['POST', `/dashboard/webhooks/${webhookId}/test`, {}],
      ['POST', `/dashboard/webhooks/${webhookId}/replay`, { since: minutesAgo(t, 60_000) }],
      ['POST', `/dashboard/webhooks/${webhookId}/delete`, {}],
      ['POST', `/dashboard/webhooks/${webhookId}/deliveries/${eventId}/retry`, {}],
      ['GET', `/dashboard/events/${eventId}`, {}],
    ];
    const answer = async ([method, url, fields]: [string, string, Record<string, string>]) => {
      if (method === 'POST') await browser.get('/dashboard/webhooks');
      const response = method === 'GET' ? await browser.get(url) : await browser.submit(url, fields);
      return { status: response.statusCode, body: response.body.replace(/[0-9a-f]{64}/g, 'token') };
    };
    const foreign = routes(theirs.id, theirEvent);
    const unknown = routes(unknownId, unknownId);
    for (const [index, route] of foreign.entries()) {
      const theirAnswer = await answer(route);
      expect(theirAnswer.status, route[1]).toBe(404);
      expect(theirAnswer.body).toEqual((await answer(unknown[index]!)).body);
      expect(theirAnswer.body).not.toContain(receiver.url('/bobs'));
    }
    // Nothing of Bob's changed.
    expect((await apiWebhook(bob, theirs.id)).json().data).toMatchObject({ url: receiver.url('/bobs'), description: '', is_active: true, signing_secret_prefix: theirs.signing_secret_prefix });
    expect((await t.request({ url: `/webhooks/${theirs.id}/deliveries`, key: bob.key })).json().data).toHaveLength(1);
  });

  it('signed out, every page and form of the section redirects to sign-in', async () => {
    const created = await subscribe(t, alice, { url: receiver.url('/signed-out'), eventTypes: ['payee.created'] });
    const stranger = new DashboardBrowser(t);
    const pages = ['/dashboard/webhooks', `/dashboard/webhooks/${created.id}`, '/dashboard/events', `/dashboard/events/${unknownId}`, '/dashboard/events?page=0'];
    for (const url of pages) {
      const response = await stranger.get(url);
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location).toBe(`/dashboard/sign-in?next=${encodeURIComponent(url)}`);
    }
    const token = csrfOf((await browser.get('/dashboard/webhooks')).body);
    const forms = ['/dashboard/webhooks', `/dashboard/webhooks/${created.id}`, `/dashboard/webhooks/${created.id}/active`, `/dashboard/webhooks/${created.id}/rotate-secret`,
      `/dashboard/webhooks/${created.id}/test`, `/dashboard/webhooks/${created.id}/replay`, `/dashboard/webhooks/${created.id}/delete`,
      `/dashboard/webhooks/${created.id}/deliveries/${unknownId}/retry`];
    for (const url of forms) {
      const response = await stranger.post(url, { _csrf: token, is_active: 'false' });
      expect(response.statusCode, url).toBe(303);
      expect(response.headers.location).toBe('/dashboard/sign-in');
    }
    expect((await apiWebhook(alice, created.id)).json().data.is_active).toBe(true);
    await removeThroughApi(alice, created.id);
  });
});
