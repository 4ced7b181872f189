import type { FastifyInstance } from 'fastify';
import { orphanFileAgeMs, orphanFileSweepIntervalMs, workerPollIntervalMs } from '../../config/limits.js';
import { PollingWorker } from '../../workers/polling-worker.js';
import type { Clock } from '../../clock.js';
import type { Storage } from '../../storage/database.js';
import type { FileStore } from '../../storage/files.js';
import type { ModuleContext } from '../module-context.js';
import { documentRoutes } from './routes.js';
import { DocumentService } from './service.js';
import { DocumentSyncLifecycle } from './lifecycle.js';
import { DocumentSyncWorker } from './sync-worker.js';
import { releaseClockDocuments } from './repository.js';

/**
 * The document service, their sync lifecycle, and the workers that sync stored documents to the provider and sweep
 * orphan files.
 */
export function documentServices(context: ModuleContext): { documents: DocumentService } {
  const { storage, files, clock, endUsers, providers, log } = context;
  const documents = new DocumentService(storage, files, clock, endUsers, context.config.documentStorageQuotaBytes, context.customerClocks);
  const lifecycle = new DocumentSyncLifecycle(storage, clock, log);
  context.providerEvents.register(lifecycle);
  const sync = new DocumentSyncWorker(storage, providers.kyc, files, clock, log, lifecycle);
  context.workers.push(new PollingWorker('document-sync', () => sync.syncDue(), workerPollIntervalMs, log));
  context.customerClocks.onAdvance((testClock) => sync.syncDueOnClock(testClock));
  context.customerClocks.onDetach((clockId) => releaseClockDocuments(storage.db, clockId));
  context.workers.push(new PollingWorker('document-file-sweeper', () => sweepOrphanFiles(storage, files, clock), orphanFileSweepIntervalMs, log));
  return { documents };
}

/** The documents plugin: POST /documents and GET /documents/{id}. */
export async function documentsPlugin(app: FastifyInstance, { documents }: { documents: DocumentService }): Promise<void> {
  documentRoutes(app, documents);
}

/** One pass of the sweeper; returns 0 so the worker waits its interval before the next (it is never urgent). */
async function sweepOrphanFiles(storage: Storage, files: FileStore, clock: Clock): Promise<number> {
  const recordedPathsOf = async (customerId: string) =>
    new Set((await storage.db.selectFrom('documents').select('storage_path').where('customer_id', '=', customerId).execute()).map((row) => row.storage_path));
  await files.sweepOrphans(recordedPathsOf, new Date(clock.now().getTime() - orphanFileAgeMs));
  return 0;
}

export { type DocumentKind, type DocumentRecord, UploadDocumentBody, type UploadDocumentInput, identityUploadTypes, uploadDocumentTypes } from './schemas.js';
export { type DocumentService } from './service.js';
export { assertWithinStorageQuota, insertStoredDocuments, storedDocumentRow } from './stored-document.js';
export { type CheckedFile, checkFile } from './upload.js';
