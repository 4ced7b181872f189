import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { idempotencyHeaders, onCreatedOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import { Pagination } from '../transactions/index.js';
import {
  CreateWebhookBody,
  DeliveriesQuery,
  Delivery,
  DeliveryParams,
  DeliveryWithAttempts,
  ReplayBody,
  ReplayResult,
  TestDelivery,
  UpdateWebhookBody,
  WebhookHealth,
  WebhookParams,
  WebhookSubscription,
  WebhookSubscriptionWithSecret,
} from './schemas.js';
import type { WebhookService } from './service.js';

const paginated = <T extends Parameters<typeof Type.Array>[0]>(item: T) =>
  Type.Object({ data: Type.Array(item), meta: Type.Object({ pagination: Pagination }) }, { additionalProperties: false });

/** docs/spec.md §4 /webhooks (list, get, update) and the additive operations (docs/architecture.md, Additive endpoints; docs/webhooks.md). */
export function webhookRoutes(app: FastifyInstance, webhooks: WebhookService): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Webhooks'];

  routes.post(
    '/webhooks',
    {
      // The answer holds the signing secret, which no read shows: it is stored encrypted, and only a key that may
      // manage subscriptions (and so rotate the secret anyway) is given it again.
      config: { scope: 'webhooks:write', idempotency: { kind: 'create', readScope: 'webhooks:write', holdsSecret: true } },
      schema: {
        tags,
        operationId: 'createWebhook',
        summary: 'Create a webhook subscription',
        description:
          'Answers the record with the whole `signing_secret`, shown only here. 422 LIMIT_EXCEEDED: a customer has at most 10 subscriptions. ' +
          '403 INSUFFICIENT_SCOPE: eventTypes the key may not read (each type needs its resource’s read scope). ' +
          'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer, secret included, and creates nothing.',
        headers: idempotencyHeaders(false),
        body: CreateWebhookBody,
        response: { 201: DataOf(WebhookSubscriptionWithSecret), ...errorResponses(...authenticatedWriteErrors, 409, 422) },
      },
    },
    async (request) => {
      await webhooks.create(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/webhooks',
    {
      config: { scope: 'webhooks:read' },
      schema: { tags, operationId: 'listWebhooks', summary: 'List webhook subscriptions', response: { 200: DataOf(Type.Array(WebhookSubscription)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await webhooks.list(callerOf(request)) }),
  );

  routes.get(
    '/webhooks/:webhookId',
    {
      config: { scope: 'webhooks:read' },
      schema: { tags, operationId: 'getWebhook', summary: 'Get a webhook subscription', params: WebhookParams, response: { 200: DataOf(WebhookSubscription), ...errorResponses(...authenticatedReadErrors, 404) } },
    },
    async (request) => ({ data: await webhooks.get(callerOf(request), request.params.webhookId) }),
  );

  routes.patch(
    '/webhooks/:webhookId',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'updateWebhook',
        summary: 'Update a webhook subscription',
        description:
          'isActive: true on a disabled subscription clears consecutive_failures, disabled_at and disabled_reason. 403 INSUFFICIENT_SCOPE: ' +
          'eventTypes the key may not read, or a new url for a subscription listing types the key may not read.',
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: DataOf(WebhookSubscription), ...errorResponses(...authenticatedWriteErrors, 404) },
      },
    },
    async (request) => ({ data: await webhooks.update(callerOf(request), request.params.webhookId, request.body) }),
  );

  routes.delete(
    '/webhooks/:webhookId',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook subscription',
        description: 'Answers 204 with no body. Pending deliveries are dropped; the events stay in GET /events.',
        params: WebhookParams,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errorResponses(...authenticatedWriteErrors, 404) },
      },
    },
    async (request, reply) => {
      await webhooks.delete(callerOf(request), request.params.webhookId);
      return reply.code(204).send(null);
    },
  );

  routes.post(
    '/webhooks/:webhookId/rotate-secret',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'rotateWebhookSecret',
        summary: 'Rotate the signing secret',
        description: 'Answers the record with the new whole `signing_secret`. For 24 hours deliveries carry a signature by each secret.',
        params: WebhookParams,
        response: { 200: DataOf(WebhookSubscriptionWithSecret), ...errorResponses(...authenticatedWriteErrors, 404) },
      },
    },
    async (request) => ({ data: await webhooks.rotateSecret(callerOf(request), request.params.webhookId) }),
  );

  routes.post(
    '/webhooks/:webhookId/test',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'sendTestWebhookEvent',
        summary: 'Send a signed test event',
        description: 'Queues a `webhook.test` event to this subscription alone and answers 202; the attempt shows in its deliveries. 422 WEBHOOK_DISABLED.',
        params: WebhookParams,
        response: { 202: DataOf(TestDelivery), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request, reply) => reply.code(202).send({ data: await webhooks.sendTest(callerOf(request), request.params.webhookId) }),
  );

  routes.post(
    '/webhooks/:webhookId/replay',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'replayWebhookEvents',
        summary: 'Deliver past events again',
        description:
          `Queues the events created since \`since\` (at most ${webhooks.replayWindowDays} days ago: EVENT_RETENTION_DAYS, how long events are kept) ` +
          'of the types the subscription lists that the key may read, at most 10,000 per call; ' +
          '`next_since` is where the next call starts when there were more. `onlyFailed: true`: of those, only the events whose delivery to this subscription has failed. ' +
          'Answers 202. 422 WEBHOOK_DISABLED.',
        params: WebhookParams,
        body: ReplayBody,
        response: { 202: DataOf(ReplayResult), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ data: await webhooks.replay(callerOf(request), request.params.webhookId, request.body.since, request.body.onlyFailed ?? false) }),
  );

  routes.post(
    '/webhooks/:webhookId/deliveries/:deliveryId/retry',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        tags,
        operationId: 'retryWebhookDelivery',
        summary: 'Send one delivery again now',
        description:
          'Makes the delivery due now, under the same webhook-id: its next attempt goes out at once. One being attempted ' +
          'is answered as it is. Answers 202 with the delivery as the deliveries list shows it. 422 WEBHOOK_DISABLED.',
        params: DeliveryParams,
        response: { 202: DataOf(Delivery), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request, reply) =>
      reply.code(202).send({ data: (await webhooks.retry(callerOf(request), request.params.webhookId, request.params.deliveryId)).delivery }),
  );

  routes.get(
    '/webhooks/:webhookId/health',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags,
        operationId: 'getWebhookHealth',
        summary: 'How a subscription’s receiver is doing',
        description: 'Its last success, its run of failures, its attempts and error rate over the last 24 hours, and how close it is to being disabled.',
        params: WebhookParams,
        response: { 200: DataOf(WebhookHealth), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await webhooks.health(callerOf(request), request.params.webhookId) }),
  );

  routes.get(
    '/webhooks/:webhookId/deliveries',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags,
        operationId: 'listWebhookDeliveries',
        summary: 'List a subscription’s deliveries, newest first',
        description: 'Each delivery’s state and last outcome; its attempts, with what each exchanged, are in GET /webhooks/{webhookId}/deliveries/{deliveryId}.',
        params: WebhookParams,
        querystring: DeliveriesQuery,
        response: { 200: paginated(Delivery), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => webhooks.deliveries(callerOf(request), request.params.webhookId, request.query.status, request.query.page ?? 1, request.query.limit ?? 50),
  );

  routes.get(
    '/webhooks/:webhookId/deliveries/:deliveryId',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        tags,
        operationId: 'getWebhookDelivery',
        summary: 'Get one delivery with its attempts',
        description:
          'The delivery and its most recent attempts, newest first, each with the request headers sent and the receiver’s status, headers and first 4 KiB of answer. ' +
          'A delivery of another subscription or customer answers 404 like an unknown one.',
        params: DeliveryParams,
        response: { 200: DataOf(DeliveryWithAttempts), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await webhooks.delivery(callerOf(request), request.params.webhookId, request.params.deliveryId) }),
  );
}
