import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../../clock.js';
import { httpProviderErrorLengthMax, httpProviderEventBodyBytesMax, providerEventIdempotencyKeyLengthMax, providerEventReferenceLengthMax, providerNameLengthMax } from '../../config/limits.js';
import { DomainError, notFound } from '../../errors.js';
import { DataOf, errorResponses, StringEnum } from '../../http/schemas.js';
import type { ProviderEventInbox } from '../inbox.js';
import { httpProviderName } from './payments.js';
import { verifySignedHeaders } from './signature.js';

/** The outcomes the HTTP adapter reports: payments only (docs/providers.md "The HTTP adapter"). */
const httpEventTypes = ['payment.completed', 'payment.failed'] as const;

const ProviderEventBody = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: providerEventIdempotencyKeyLengthMax, description: "The provider's id of the event: the same id is applied once." }),
    type: StringEnum(httpEventTypes),
    reference: Type.String({ minLength: 1, maxLength: providerEventReferenceLengthMax, description: "The payment's frPaymentId." }),
    data: Type.Optional(
      Type.Object({ reason: Type.Optional(Type.String({ minLength: 1, maxLength: httpProviderErrorLengthMax, description: 'Why a payment failed.' })) }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);

const ProviderEventReceived = Type.Object({ id: Type.String(), status: Type.Literal('received') }, { additionalProperties: false });

/**
 * `POST /provider-events/{provider}`: where the HTTP payment provider reports outcomes (docs/providers.md "The HTTP
 * adapter"). The request is signed with the shared secret (Standard Webhooks headers; 401 otherwise, checked before
 * anything else is read), and the event written to the inbox as received (202): the worker `provider-events` applies
 * it. An event id already received answers 202 again and writes nothing.
 */
export async function providerEventRoutes(app: FastifyInstance, inbox: ProviderEventInbox, clock: Clock, secret: string): Promise<void> {
  await app.register(async (scope) => {
    // The signature covers the body's bytes as sent: kept before parsing, in this route's scope only.
    const rawBodies = new WeakMap<FastifyRequest, string>();
    const parseJson = scope.getDefaultJsonParser('error', 'error');
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
      rawBodies.set(request, body as string);
      void parseJson(request, body as string, done);
    });

    scope.withTypeProvider<TypeBoxTypeProvider>().post(
      '/provider-events/:provider',
      {
        bodyLimit: httpProviderEventBodyBytesMax,
        config: { public: true },
        preValidation: async (request) => {
          if (request.params.provider !== httpProviderName) throw notFound('provider');
          if (!verifySignedHeaders(secret, request.headers, rawBodies.get(request) ?? '', clock.now())) {
            throw new DomainError('UNAUTHENTICATED', 'The provider event is not signed with the shared secret, or its timestamp is too far from now.');
          }
        },
        schema: {
          tags: ['Providers'],
          operationId: 'reportProviderEvent',
          summary: "Report a provider's outcome (the HTTP payment adapter)",
          description: 'Signed with PAYMENT_PROVIDER_SECRET as a Standard Webhook. Only `http` is a provider here.',
          security: [],
          params: Type.Object({ provider: Type.String({ maxLength: providerNameLengthMax }) }),
          body: ProviderEventBody,
          response: { 202: DataOf(ProviderEventReceived), ...errorResponses(400, 401, 404, 413, 415, 500) },
        },
      },
      async (request, reply) => {
        const { id, type, reference, data } = request.body;
        await inbox.record({ provider: httpProviderName, type, reference, idempotencyKey: id, payload: data ?? {} });
        return reply.code(202).send({ data: { id, status: 'received' as const } });
      },
    );
  });
}
