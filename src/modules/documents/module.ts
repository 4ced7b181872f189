import type { FastifyInstance } from 'fastify';
import { workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import type { ModuleContext } from '../module-context.js';
import { documentRoutes } from './routes.js';
import { DocumentService } from './service.js';
import { DocumentSyncWorker } from './sync-worker.js';

/** Registers the document routes and the worker that syncs stored documents to the provider. */
export function registerDocuments(app: FastifyInstance, context: ModuleContext): void {
  const { storage, files, clock, endUsers, providers, log } = context;
  documentRoutes(app, new DocumentService(storage, files, clock, endUsers, context.config.documentStorageQuotaBytes));
  const sync = new DocumentSyncWorker(storage, providers.kyc, files, clock, log);
  context.workers.push(new PollingWorker('document-sync', () => sync.syncDue(), workerPollIntervalMs, log));
}
