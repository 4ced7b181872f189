import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { DomainError } from '../../errors.js';
import { errorResponses } from '../../http/schemas.js';
import { pingDatabase, type Storage } from '../../storage/database.js';
import { pendingMigrations } from '../../storage/migrate.js';

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });

/** Liveness (the process answers) and readiness (the database answers and its schema is current). */
export function healthRoutes(app: FastifyInstance, storage: Storage): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const config = { public: true, rateLimit: false } as const;

  routes.get('/health', { config, schema: { tags: ['Operations'], summary: 'Liveness', security: [], response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));

  routes.get(
    '/ready',
    { config, schema: { tags: ['Operations'], summary: 'Readiness', security: [], response: { 200: Status, ...errorResponses(503) } } },
    async (request) => {
      try {
        await pingDatabase(storage);
      } catch (error) {
        request.log.warn({ err: error }, 'readiness: database unreachable');
        throw new DomainError('NOT_READY', 'The database is not reachable.');
      }
      const pending = await pendingMigrations(storage);
      if (pending.length > 0) throw new DomainError('NOT_READY', 'Database migrations are pending.', { pending_migrations: pending });
      return { status: 'ready' };
    },
  );
}
