import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardReplayFormMarginMs, dashboardReplaySuggestedSpanMs, pageLimitDefault, webhookSubscriptionsPerCustomerMax } from '../../config/limits.js';
import { testEventType } from '../../events/catalog.js';
import { bodyChecker } from '../../http/validation.js';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import { EventsQuery } from '../../modules/events/index.js';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  ReplayBody,
  UpdateWebhookBody,
  subscribableEventTypes,
  type CreateWebhookInput,
  type DeliveriesQueryInput,
  type UpdateWebhookInput,
  type WebhookHealthRecord,
  type WebhookSubscriptionRecord,
} from '../../modules/webhooks/index.js';
import { formList, formOf, formText, refusedForm, utcFromLocalInput, type FieldLabels, type FormBody } from '../form.js';
import { pageRoute } from '../page-route.js';
import { timeText } from '../time-text.js';
import { checkListQuery, listQuery, pagerOf } from './lists.js';
import { redirectWithNotice } from './notices.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

type WebhookRoute = { Params: { webhookId: string } };
type DeliveryRoute = { Params: { webhookId: string; deliveryId: string } };

/**
 * The replay form's dates (datetime-local values: minutes, no zone), within the server's replay window
 * (EVENT_RETENTION_DAYS). The earliest is rounded up to the minute and
 * kept dashboardReplayFormMarginMs inside the window, so the form never offers a date the server refuses (its own
 * earliest, cut to the minute, was older than the window); the latest is now, cut to the minute.
 */
function replayDates(nowMs: number, retentionDays: number) {
  const windowStartMs = nowMs - retentionDays * 86_400_000 + dashboardReplayFormMarginMs;
  // Up to the next whole minute.
  const earliestMs = Math.ceil(windowStartMs / 60_000) * 60_000;
  return {
    // A day ago, or the earliest when the window is shorter than a day and some minutes.
    suggested: new Date(Math.max(nowMs - dashboardReplaySuggestedSpanMs, earliestMs)).toISOString().slice(0, 16),
    earliest: new Date(earliestMs).toISOString().slice(0, 16),
    latest: new Date(nowMs).toISOString().slice(0, 16),
    retentionDays,
  };
}

const checkCreate = bodyChecker<CreateWebhookInput>(CreateWebhookBody);
const checkUpdate = bodyChecker<UpdateWebhookInput>(UpdateWebhookBody);
const checkReplay = bodyChecker<{ since: string; onlyFailed?: boolean }>(ReplayBody);
const checkDeliveriesQuery = bodyChecker<DeliveriesQueryInput>(DeliveriesQuery);
const checkEventsQuery = bodyChecker<{ page?: number; limit?: number; type?: string }>(EventsQuery);

/** The subscription form's fields, by the API body paths whose problems are theirs. */
const subscriptionLabels: FieldLabels = {
  url: { label: 'Receiver URL', paths: ['/url'] },
  description: { label: 'Description', paths: ['/description'] },
  event_types: { label: 'Event types', paths: ['/eventTypes'] },
};

const replayLabels: FieldLabels = {
  since: { label: 'Since', paths: ['/since'] },
  only_failed: { label: 'Only the events whose delivery failed', paths: ['/onlyFailed'] },
};

/** "Queue the rest" after a replay that stopped at its bound: carried in the address it redirects to, checked. */
const restSincePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/** What the subscription forms show in their fields: the record, or what was typed when it was refused. */
interface WebhookDraft {
  url: string;
  description: string;
  eventTypes: string[];
  allEventTypes: boolean;
}

const emptyDraft: WebhookDraft = { url: '', description: '', eventTypes: [], allEventTypes: false };

const draftOfRecord = (webhook: WebhookSubscriptionRecord): WebhookDraft => ({
  url: webhook.url,
  description: webhook.description,
  eventTypes: webhook.event_types,
  allEventTypes: false,
});

function draftOfForm(form: FormBody): WebhookDraft {
  return {
    url: formText(form, 'url') ?? '',
    description: formText(form, 'description') ?? '',
    eventTypes: formList(form, 'event_types'),
    allEventTypes: formText(form, 'all_event_types') !== undefined,
  };
}

/** The API body of a subscription form: "every type" ticked stands for the whole list of subscribable types. */
const subscriptionFields = (draft: WebhookDraft) => ({
  ...(draft.url !== '' ? { url: draft.url } : {}),
  // An emptied description is a description of "", as the API stores one not given.
  description: draft.description,
  eventTypes: draft.allEventTypes ? [...subscribableEventTypes] : draft.eventTypes,
});

/** A duration in whole days, hours and minutes, the two largest units that are not zero ("4 days 23 hours"). */
function durationText(seconds: number): string {
  const units: Array<[string, number]> = [['day', 86_400], ['hour', 3600], ['minute', 60]];
  const parts: string[] = [];
  let left = seconds;
  for (const [name, size] of units) {
    const count = Math.floor(left / size);
    left -= count * size;
    if (count > 0) parts.push(`${count} ${name}${count === 1 ? '' : 's'}`);
  }
  return parts.length === 0 ? 'less than a minute' : parts.slice(0, 2).join(' ');
}

/** The health of a subscription in words (docs/webhooks.md "Health"). */
function healthText(health: WebhookHealthRecord): { lastDay: string; autoDisable: string | null } {
  const lastDay =
    health.error_rate_24h === null
      ? 'No attempts'
      : `${health.attempts_24h} ${health.attempts_24h === 1 ? 'attempt' : 'attempts'}, ${health.failed_attempts_24h} failed (${Math.round(health.error_rate_24h * 100)} % errors)`;
  const disable = health.auto_disable;
  if (disable === null) return { lastDay, autoDisable: null };
  const failures = disable.failures_left === 0 ? 'at its next failed attempt' : `after ${disable.failures_left} more failed ${disable.failures_left === 1 ? 'attempt' : 'attempts'}`;
  const notBefore = disable.seconds_left > 0 ? `, and not before ${timeText(disable.not_before)} (in ${durationText(disable.seconds_left)})` : '';
  return { lastDay, autoDisable: `If it keeps failing: ${failures}${notBefore}.` };
}

/**
 * Webhooks (docs/webhooks.md) through the same service as the JSON API: subscriptions (list, create with the
 * secret shown once, edit, disable/enable, rotate, test, replay, delete), each one's deliveries (a page of them, and
 * each one's attempts on its own page), and the events feed.
 */
export function webhookPages(context: FastifyInstance, services: WebServices): void {
  const callerOf = (request: FastifyRequest): AuthenticatedKey => request.dashboard!.caller;

  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) =>
    renderPage(services, request, reply, '/dashboard/webhooks', 'Webhooks', {
      webhooks: await services.webhooks.list(callerOf(request)),
      limit: webhookSubscriptionsPerCustomerMax,
      eventTypeChoices: subscribableEventTypes,
      draft: emptyDraft,
      ...extra,
    }, status);

  /** The subscription, its forms and a page of its deliveries (filtered by the query; a POST's address has none). */
  const detailPage = async (request: FastifyRequest<WebhookRoute>, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = callerOf(request);
    const id = request.params.webhookId;
    const webhook = await services.webhooks.get(caller, id);
    const query = checkListQuery(checkDeliveriesQuery, listQuery(request.query, ['status']));
    const sent = formOf(request.query);
    const restSince = formText(sent, 'rest_since');
    const replayed = restSince !== undefined && restSincePattern.test(restSince) ? { next_since: restSince, onlyFailed: formText(sent, 'only_failed') === 'true' } : undefined;
    const [deliveries, health] = await Promise.all([
      services.webhooks.deliveries(caller, id, query.status, query.page ?? 1, query.limit ?? pageLimitDefault),
      services.webhooks.health(caller, id),
    ]);
    return renderPage(services, request, reply, '/dashboard/webhook', 'Webhook subscription', {
      webhook,
      health,
      healthText: healthText(health),
      deliveries: deliveries.data,
      pager: pagerOf(`/dashboard/webhooks/${encodeURIComponent(id)}`, deliveries.meta.pagination, { status: query.status, page: undefined, limit: String(deliveries.meta.pagination.limit) }),
      statusFilter: query.status ?? '',
      eventTypeChoices: subscribableEventTypes,
      draft: draftOfRecord(webhook),
      replay: replayDates(services.clock.now().getTime(), services.webhooks.replayWindowDays),
      replayed,
      ...extra,
    }, status);
  };

  /**
   * Runs a subscription's action, then redirects (303) to its page with what the action reports as the notice, so a
   * reload never repeats it; a refused action shows the page with its problems (by their fields) and changes nothing.
   */
  const afterAction = async (
    request: FastifyRequest<WebhookRoute>,
    reply: FastifyReply,
    action: () => Promise<{ notice: string; location?: string }>,
    onRefusal: { sent?: FormBody; labels?: FieldLabels; draft?: WebhookDraft } = {},
  ) => {
    let outcome: { notice: string; location?: string };
    try {
      outcome = await action();
    } catch (error) {
      const refused = refusedForm(error, onRefusal.sent ?? {}, onRefusal.labels ?? {});
      if (!refused) throw error;
      const { status, ...shown } = refused;
      return detailPage(request, reply, { ...shown, ...(onRefusal.draft ? { draft: onRefusal.draft } : {}) }, status);
    }
    return redirectWithNotice(services, request, reply, outcome.location ?? `/dashboard/webhooks/${request.params.webhookId}`, outcome.notice);
  };

  context.get('/webhooks', pageRoute, async (request, reply) => listPage(request, reply));

  context.post('/webhooks', pageRoute, async (request, reply) => {
    const sent = formOf(request.body);
    const draft = draftOfForm(sent);
    let created: Awaited<ReturnType<typeof services.webhooks.create>>;
    try {
      created = await services.webhooks.create(callerOf(request), checkCreate(subscriptionFields(draft)));
    } catch (error) {
      const refused = refusedForm(error, sent, subscriptionLabels);
      if (!refused) throw error;
      const { status, ...shown } = refused;
      return listPage(request, reply, { ...shown, draft }, status);
    }
    // The secret is shown once, on its reveal page: a reload there (or here) makes no second subscription.
    const revealId = await services.reveals.store(request.dashboard!, 'webhook_secret', created.id, created.signing_secret);
    return redirectWithNotice(services, request, reply, `/dashboard/reveal/${revealId}`, `Subscription to ${created.url} created.`);
  });

  context.get<WebhookRoute>('/webhooks/:webhookId', pageRoute, async (request, reply) => detailPage(request, reply));

  context.post<WebhookRoute>('/webhooks/:webhookId', pageRoute, async (request, reply) => {
    const sent = formOf(request.body);
    const draft = draftOfForm(sent);
    return afterAction(
      request,
      reply,
      async () => {
        await services.webhooks.update(callerOf(request), request.params.webhookId, checkUpdate(subscriptionFields(draft)));
        return { notice: 'Saved.' };
      },
      { sent, labels: subscriptionLabels, draft },
    );
  });

  context.post<WebhookRoute>('/webhooks/:webhookId/active', pageRoute, async (request, reply) => {
    const wanted = formText(formOf(request.body), 'is_active');
    return afterAction(request, reply, async () => {
      // Anything but "true" or "false" goes on as text, so the schema refuses it as the API would.
      const isActive = wanted === 'true' ? true : wanted === 'false' ? false : wanted;
      const updated = await services.webhooks.update(callerOf(request), request.params.webhookId, checkUpdate({ isActive }));
      return {
        notice: updated.is_active
          ? 'Enabled: new events are queued for it again, and its pending deliveries go out. Events of the time it was disabled are not; replay them below.'
          : 'Disabled: nothing is sent to it until it is enabled again.',
      };
    });
  });

  context.post<WebhookRoute>('/webhooks/:webhookId/rotate-secret', pageRoute, async (request, reply) =>
    afterAction(request, reply, async () => {
      const rotated = await services.webhooks.rotateSecret(callerOf(request), request.params.webhookId);
      const revealId = await services.reveals.store(request.dashboard!, 'webhook_rotated_secret', rotated.id, rotated.signing_secret);
      return { notice: 'The signing secret is rotated.', location: `/dashboard/reveal/${revealId}` };
    }),
  );

  context.post<WebhookRoute>('/webhooks/:webhookId/test', pageRoute, async (request, reply) =>
    afterAction(request, reply, async () => {
      const { event } = await services.webhooks.sendTest(callerOf(request), request.params.webhookId);
      return { notice: `A ${testEventType} event (${event.id}) is queued for this subscription; its delivery shows below.` };
    }),
  );

  context.post<WebhookRoute>('/webhooks/:webhookId/replay', pageRoute, async (request, reply) => {
    const sent = formOf(request.body);
    const since = formText(sent, 'since');
    // A ticked checkbox sends its value; an unticked one sends nothing.
    const onlyFailed = formText(sent, 'only_failed') !== undefined;
    return afterAction(
      request,
      reply,
      async () => {
        const body = checkReplay(since === undefined ? {} : { since: utcFromLocalInput(since), onlyFailed });
        const id = request.params.webhookId;
        const result = await services.webhooks.replay(callerOf(request), id, body.since, body.onlyFailed ?? false);
        const more = result.next_since === null ? '' : ` There were more: replay from ${timeText(result.next_since)} to queue the rest.`;
        const what = onlyFailed ? (result.queued === 1 ? 'failed event' : 'failed events') : result.queued === 1 ? 'event' : 'events';
        const rest = result.next_since === null ? '' : `?${new URLSearchParams({ rest_since: result.next_since, ...(onlyFailed ? { only_failed: 'true' } : {}) }).toString()}`;
        return { notice: `${result.queued} ${what} queued for delivery.${more}`, location: `/dashboard/webhooks/${id}${rest}` };
      },
      { sent, labels: replayLabels },
    );
  });

  context.get<DeliveryRoute>('/webhooks/:webhookId/deliveries/:deliveryId', pageRoute, async (request, reply) => {
    const caller = callerOf(request);
    const webhook = await services.webhooks.get(caller, request.params.webhookId);
    const delivery = await services.webhooks.delivery(caller, webhook.id, request.params.deliveryId);
    return renderPage(services, request, reply, '/dashboard/webhook-delivery', 'Webhook delivery', { webhook, delivery });
  });

  context.post<DeliveryRoute>('/webhooks/:webhookId/deliveries/:deliveryId/retry', pageRoute, async (request, reply) =>
    afterAction(request, reply, async () => {
      const { delivery, retried } = await services.webhooks.retry(callerOf(request), request.params.webhookId, request.params.deliveryId);
      return {
        notice: retried
          ? `Delivery ${delivery.id} is due again now: it goes out within moments, and its attempt shows below.`
          : `Delivery ${delivery.id} is being attempted: it was left as it is.`,
      };
    }),
  );

  context.post<WebhookRoute>('/webhooks/:webhookId/delete', pageRoute, async (request, reply) => {
    const webhook = await services.webhooks.get(callerOf(request), request.params.webhookId);
    await services.webhooks.delete(callerOf(request), webhook.id);
    return redirectWithNotice(services, request, reply, '/dashboard/webhooks', `The subscription to ${webhook.url} is deleted.`);
  });

  context.get('/events', pageRoute, async (request, reply) => {
    const query = checkListQuery(checkEventsQuery, listQuery(request.query, ['type']));
    const events = await services.events.list(callerOf(request), query.type, query.page ?? 1, query.limit ?? pageLimitDefault);
    return renderPage(services, request, reply, '/dashboard/events', 'Events', {
      events: events.data,
      pager: pagerOf('/dashboard/events', events.meta.pagination, { type: query.type, page: undefined, limit: String(events.meta.pagination.limit) }),
      typeFilter: query.type ?? '',
      typeChoices: [...subscribableEventTypes, testEventType],
    });
  });

  context.get<{ Params: { eventId: string } }>('/events/:eventId', pageRoute, async (request, reply) => {
    const event = await services.events.get(callerOf(request), request.params.eventId);
    return renderPage(services, request, reply, '/dashboard/event', `Event ${event.type}`, { event, json: JSON.stringify(event.data, null, 2) });
  });
}
