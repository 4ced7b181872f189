import type { FastifyInstance } from 'fastify';
import type { Storage } from '../../storage/database.js';
import type { StorageFaultState } from '../../storage/fault-state.js';
import { healthRoutes } from './routes.js';

/** The health plugin: liveness and readiness (docs/operations.md). */
export async function healthPlugin(app: FastifyInstance, options: { storage: Storage; dataDir: string; faults: StorageFaultState }): Promise<void> {
  healthRoutes(app, options.storage, { dataDir: options.dataDir, faults: options.faults });
}
