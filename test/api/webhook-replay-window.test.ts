import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardReplayFormMarginMs } from '../../src/config/limits.js';
import { signedInBrowser } from '../helpers/dashboard.js';
import { createPayee } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, subscribe } from '../helpers/webhooks.js';

const day = 86_400_000;
const retentionDays = 45;

/**
 * A replay reaches back exactly as far as events are kept, EVENT_RETENTION_DAYS (docs/webhooks.md "Replay"): the API
 * accepts `since` within it and refuses one before it, OpenAPI says how far, and the dashboard's form offers its dates.
 */
describe('replay window = EVENT_RETENTION_DAYS', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', EVENT_RETENTION_DAYS: String(retentionDays) } });
    alice = await t.createCustomer('Alice Ltd');
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  const replay = (id: string, since: string) => t.request({ method: 'POST', url: `/webhooks/${id}/replay`, key: alice.key, csrf: true, body: { since } });
  const daysAgo = (days: number) => new Date(t.clock.now().getTime() - days * day).toISOString();

  it('replays events older than 30 days when they are kept longer, and refuses a since before the retention', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url(), eventTypes: ['payee.created'] });
    const since = t.clock.now().toISOString();
    await createPayee(t, alice);
    await deliverDue(t);
    t.clock.advance(40 * day);

    const accepted = await replay(hook.id, since);
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(accepted.json().data).toEqual({ queued: 1, next_since: null });
    expect((await replay(hook.id, daysAgo(retentionDays - 0.001))).statusCode).toBe(202);

    const refused = await replay(hook.id, daysAgo(retentionDays + 0.001));
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({
      code: 'VALIDATION_ERROR',
      details: { fields: [{ location: 'body', path: '/since', reason: `must be within the last ${retentionDays} days` }] },
    });
  });

  it('says in OpenAPI how far back a replay reaches', async () => {
    const doc = (await t.request({ url: '/openapi.json' })).json();
    const operation = doc.paths['/webhooks/{webhookId}/replay'].post;
    expect(operation.description).toContain(`at most ${retentionDays} days ago`);
    expect(operation.description).toContain('EVENT_RETENTION_DAYS');
  });

  it('the dashboard’s replay form offers the retention’s dates, its earliest accepted', async () => {
    const hook = await subscribe(t, alice, { url: receiver.url('/form'), eventTypes: ['payee.created'] });
    const browser = await signedInBrowser(t, alice.id);
    t.clock.advance(30_500);
    const page = await browser.get(`/dashboard/webhooks/${hook.id}`);
    expect(page.body).toContain(`at most ${retentionDays} days ago`);
    const earliest = /id="since" name="since" type="datetime-local" required value="[^"]+" min="([^"]+)"/.exec(page.body)![1]!;
    // The window's start, kept its margin inside and rounded up to the minute: far older than 30 days.
    expect(Date.parse(`${earliest}Z`) - Date.parse(daysAgo(retentionDays))).toBeLessThanOrEqual(dashboardReplayFormMarginMs + 60_000);
    // The form redirects after it acts (303); the page it leads to says how many were queued.
    const replayed = await browser.submit(`/dashboard/webhooks/${hook.id}/replay`, { since: earliest });
    expect(replayed.redirectedTo).toMatch(new RegExp(`^/dashboard/webhooks/${hook.id}`));
    expect(replayed.statusCode, replayed.body.slice(0, 2000)).toBe(200);
    expect(replayed.body).toMatch(/\d+ events? queued for delivery\./);
  });
});
