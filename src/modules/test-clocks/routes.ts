import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { callerOf } from '../../http/auth.js';
import { DataOf, authenticatedReadErrors, authenticatedWriteErrors, errorResponses } from '../../http/schemas.js';
import { AdvanceTestClockBody, CreateTestClockBody, TestClock, TestClockParams } from './schemas.js';
import type { TestClocks } from './service.js';

/**
 * The sandbox's test clocks (docs/test-clocks.md). A clock changes every rule that follows it for the whole customer,
 * so only a full-access key (`*`) manages them.
 */
export function testClockRoutes(app: FastifyInstance, clocks: TestClocks): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const tags = ['Sandbox'];
  const config = { scope: '*' } as const;

  routes.post(
    '/sandbox/test-clocks',
    {
      config,
      schema: {
        tags,
        operationId: 'sandboxCreateTestClock',
        summary: 'Create a test clock, attached to your customer (sandbox only)',
        body: CreateTestClockBody,
        response: { 201: DataOf(TestClock), ...errorResponses(...authenticatedWriteErrors, 409) },
      },
    },
    async (request, reply) => reply.code(201).send({ data: await clocks.create(callerOf(request), request.body) }),
  );

  routes.get(
    '/sandbox/test-clocks',
    {
      config,
      schema: {
        tags,
        operationId: 'sandboxListTestClocks',
        summary: 'List your test clocks: the one attached, or none (sandbox only)',
        response: { 200: DataOf(Type.Array(TestClock)), ...errorResponses(...authenticatedReadErrors) },
      },
    },
    async (request) => ({ data: await clocks.list(callerOf(request)) }),
  );

  routes.get(
    '/sandbox/test-clocks/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'sandboxGetTestClock',
        summary: 'Get a test clock (sandbox only)',
        params: TestClockParams,
        response: { 200: DataOf(TestClock), ...errorResponses(...authenticatedReadErrors, 404) },
      },
    },
    async (request) => ({ data: await clocks.get(callerOf(request), request.params.id) }),
  );

  routes.post(
    '/sandbox/test-clocks/:id/advance',
    {
      config,
      schema: {
        tags,
        operationId: 'sandboxAdvanceTestClock',
        summary: 'Advance a test clock and run what fell due up to its new time (sandbox only)',
        params: TestClockParams,
        body: AdvanceTestClockBody,
        response: { 200: DataOf(TestClock), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request) => ({ data: await clocks.advance(callerOf(request), request.params.id, request.body.to) }),
  );

  routes.delete(
    '/sandbox/test-clocks/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'sandboxDeleteTestClock',
        summary: 'Delete a test clock, which detaches it from your customer (sandbox only)',
        params: TestClockParams,
        response: { 204: Type.Null(), ...errorResponses(...authenticatedWriteErrors, 404, 422) },
      },
    },
    async (request, reply) => {
      await clocks.delete(callerOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
