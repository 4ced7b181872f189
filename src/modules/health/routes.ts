import fs from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { dataDirectoryFreeBytesMin, readinessFaultHoldMs, readinessProbeTimeoutMs } from '../../config/limits.js';
import { DomainError } from '../../errors.js';
import { errorResponses } from '../../http/schemas.js';
import { pingDatabase, type Storage } from '../../storage/database.js';
import type { StorageFaultState } from '../../storage/fault-state.js';
import type { StorageFault } from '../../storage/faults.js';
import { pendingMigrations } from '../../storage/migrate.js';

const Status = Type.Object({ status: Type.String() }, { additionalProperties: false });

/** `details.reason` of a 503 from GET /ready (docs/operations.md "Faults"). */
const faultReasons: Record<StorageFault, string> = {
  unavailable: 'database_unavailable',
  unwritable: 'storage_unwritable',
  full: 'storage_full',
};

const faultMessages: Record<StorageFault, string> = {
  unavailable: 'The database is not reachable.',
  unwritable: 'The data cannot be written.',
  full: 'The storage is full.',
};

function notReady(fault: StorageFault, message = faultMessages[fault]): DomainError {
  return new DomainError('NOT_READY', message, { reason: faultReasons[fault] });
}

/** `select 1`, given up after readinessProbeTimeoutMs: a database that does not answer makes /ready answer anyway. */
async function pingWithin(storage: Storage, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([pingDatabase(storage), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * SQLite: the data directory (database file, documents) must be writable and have room. access() reports a
 * read-only mount even to root; statfs() the free space of a full disk, which SQLite only meets on its next write.
 */
async function dataDirectoryFault(dataDir: string): Promise<StorageFault | undefined> {
  try {
    await fs.access(dataDir, fs.constants.W_OK);
  } catch {
    return 'unwritable';
  }
  const space = await fs.statfs(dataDir);
  return space.bavail * space.bsize < dataDirectoryFreeBytesMin ? 'full' : undefined;
}

/**
 * Liveness (the process answers) and readiness (the database answers, can be written, and its schema is current).
 * Both are polled, so readiness stays cheap: one `select 1` with a deadline, on SQLite an access() and a statfs() of
 * the data directory, what requests and workers met lately (StorageFaultState), and one read of the migrations.
 */
export function healthRoutes(app: FastifyInstance, storage: Storage, options: { dataDir: string; faults: StorageFaultState }): void {
  const routes = app.withTypeProvider<TypeBoxTypeProvider>();
  const config = { public: true, rateLimit: false } as const;
  const { faults } = options;

  routes.get('/health', { config, schema: { tags: ['Operations'], operationId: 'getHealth', summary: 'Liveness', security: [], response: { 200: Status } } }, async () => ({
    status: 'ok',
  }));

  routes.get(
    '/ready',
    { config, schema: { tags: ['Operations'], operationId: 'getReadiness', summary: 'Readiness', security: [], response: { 200: Status, ...errorResponses(503) } } },
    async () => {
      try {
        await pingWithin(storage, readinessProbeTimeoutMs);
      } catch (error) {
        faults.observe(error);
        throw notReady('unavailable');
      }
      faults.recovered('unavailable');
      if (storage.dialect === 'sqlite') {
        const fault = await dataDirectoryFault(options.dataDir);
        if (fault !== undefined) throw notReady(fault);
      }
      const recent = faults.recent(readinessFaultHoldMs);
      if (recent !== undefined) throw notReady(recent.fault);
      const pending = await pendingMigrations(storage);
      if (pending.length > 0) throw new DomainError('NOT_READY', 'Database migrations are pending.', { reason: 'migrations_pending', pending_migrations: pending });
      return { status: 'ready' };
    },
  );
}
