import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { endUserBodyLimitBytes } from '../../config/limits.js';
import { callerOf } from '../../http/auth.js';
import { idempotencyHeaders, onCreatedOf } from '../../http/idempotency.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses, uploadErrors } from '../../http/schemas.js';
import type { EndUserService } from './service.js';
import type { SandboxVerification } from '../../providers/sandbox/verification.js';
import { notFound } from '../../errors.js';
import type { OnboardingLinks } from './onboarding.js';
import { CreateBusinessBody, CreateIndividualBody, EndUser, EndUserIdParams, OnboardingLink, SandboxVerificationBody, UpdateEndUserBody, type EndUserRecord } from './schemas.js';

export function endUserRoutes(app: FastifyInstance, endUsers: EndUserService, onboardingLinks: OnboardingLinks): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['End users'];
  // 409 IDEMPOTENCY_KEY_IN_USE; 422 STORAGE_QUOTA_EXCEEDED for the reports; 502 PROVIDER_UNAVAILABLE.
  const created = { 201: DataOf(EndUser), ...errorResponses(...uploadErrors, 409, 422, 502) };
  const description = 'Accepts an Idempotency-Key (docs/idempotency.md): a retry with the same key replays the first answer and creates nothing.';

  routes.post(
    '/end-users',
    {
      bodyLimit: endUserBodyLimitBytes,
      config: { scope: 'end-users:write', idempotency: { kind: 'create', readScope: 'end-users:read' } },
      schema: { tags, operationId: 'createEndUser', summary: 'Create an individual end user', description, headers: idempotencyHeaders(false), body: CreateIndividualBody, response: created },
    },
    async (request) => {
      await endUsers.createIndividual(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.post(
    '/end-users/businesses',
    {
      bodyLimit: endUserBodyLimitBytes,
      config: { scope: 'end-users:write', idempotency: { kind: 'create', readScope: 'end-users:read' } },
      schema: { tags, operationId: 'createBusinessEndUser', summary: 'Create a business end user', description, headers: idempotencyHeaders(false), body: CreateBusinessBody, response: created },
    },
    async (request) => {
      await endUsers.createBusiness(callerOf(request), request.body, onCreatedOf(request));
    },
  );

  routes.get(
    '/end-users',
    {
      config: { scope: 'end-users:read' },
      schema: { tags, operationId: 'listEndUsers', summary: 'List end users', response: { 200: DataOf(Type.Array(EndUser)), ...errorResponses(...authenticatedReadErrors) } },
    },
    async (request) => ({ data: await endUsers.list(callerOf(request)) }),
  );

  routes.get(
    '/end-users/:endUserId',
    {
      config: { scope: 'end-users:read' },
      schema: { tags, operationId: 'getEndUser', summary: 'Get an end user', params: EndUserIdParams, response: { 200: DataOf(EndUser), ...errorResponses(...authenticatedReadErrors, 404) } },
    },
    async (request) => ({ data: await endUsers.get(callerOf(request), request.params.endUserId) }),
  );

  routes.get(
    '/end-users/:endUserId/onboarding-link',
    {
      config: { scope: 'end-users:read' },
      schema: {
        tags,
        operationId: 'getEndUserOnboardingLink',
        summary: "Get an end user's hosted onboarding link",
        description: 'Additive (docs/dashboard.md "Hosted onboarding"): the page a hosted_kyc end user opens to verify their identity. 404 for other end users.',
        params: EndUserIdParams,
        response: { 200: DataOf(OnboardingLink), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => {
      const link = onboardingLinks.linkOf(await endUsers.require(callerOf(request), request.params.endUserId));
      if (!link) throw notFound('hosted onboarding link (the end user was not created with verificationMethod hosted_kyc)');
      return { data: link };
    },
  );

  routes.patch(
    '/end-users/:endUserId',
    {
      config: { scope: 'end-users:write' },
      schema: {
        tags,
        operationId: 'updateEndUser',
        summary: 'Update an end user',
        params: EndUserIdParams,
        body: UpdateEndUserBody,
        response: { 200: DataOf(EndUser), ...errorResponses(...authenticatedWriteErrors, 404) },
      },
    },
    async (request) => ({ data: await endUsers.update(callerOf(request), request.params.endUserId, request.body) }),
  );
}

/** Sandbox simulation endpoint (docs/architecture.md, Sandbox simulation): the sandbox provider's verification decision, on demand. */
export function sandboxEndUserRoutes(app: FastifyInstance, verification: SandboxVerification<EndUserRecord>): void {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/sandbox/end-users/:endUserId/verification',
    {
      config: { scope: 'end-users:write' },
      schema: {
        tags: ['Sandbox'],
        operationId: 'sandboxDecideEndUserVerification',
        summary: 'Decide the verification of an end user (sandbox only)',
        params: EndUserIdParams,
        body: SandboxVerificationBody,
        response: { 200: DataOf(EndUser), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await verification.decide(callerOf(request).customerId, request.params.endUserId, request.body.outcome) }),
  );
}
