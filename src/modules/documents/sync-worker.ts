import type { FastifyBaseLogger } from 'fastify';
import { sql, type RawBuilder } from 'kysely';
import type { Clock, TestClockTime } from '../../clock.js';
import {
  documentSyncAttemptsMax,
  documentSyncBatchSize,
  documentSyncCallTimeoutMs,
  documentSyncErrorLengthMax,
  documentSyncLeaseMs,
  testClockAdvanceBatchesMax,
} from '../../config/limits.js';
import type { KycProvider } from '../../providers/kyc.js';
import type { Storage } from '../../storage/database.js';
import type { FileStore } from '../../storage/files.js';
import { claimDue } from '../../workers/claim.js';
import { withTimeout } from '../../workers/timeout.js';
import { providerEndUserIds } from '../end-users/index.js';
import type { DocumentSyncLifecycle } from './lifecycle.js';
import type { DocumentRow, DueDocument } from './repository.js';

// Where the tests have always found it; the lifecycle owns it.
export { documentSyncRetryDelayMs } from './lifecycle.js';

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > documentSyncErrorLengthMax ? `${text.slice(0, documentSyncErrorLengthMax - 1)}…` : text;
}

/**
 * Hands stored documents (uploads and end-user reports) to the KYC provider. All state lives in the documents
 * row, so a restarted process resumes where the last one stopped:
 *
 * 1. claim (workers/claim.ts, the claim of every worker): sync_attempts + 1 and next_sync_at = now + lease, in
 *    one statement that hands each due document to exactly one instance;
 * 2. read the file and call the provider, outside any transaction;
 * 3. hand the answer to the document lifecycle (lifecycle.ts), which records `synced`, or `pending` again after the
 *    backoff, or `failed` once documentSyncAttemptsMax attempts have failed — only if no newer attempt started.
 *
 * An attempt cut short by a crash counts as an attempt; its document is retried when the lease runs out.
 */
export class DocumentSyncWorker {
  constructor(
    private readonly storage: Storage,
    private readonly kyc: KycProvider,
    private readonly files: FileStore,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    private readonly lifecycle: DocumentSyncLifecycle,
  ) {}

  /** One pass over the due documents on the server clock; returns how many it acted on. */
  syncDue(): Promise<number> {
    return this.sync(sql`clock_id is null`, this.clock.now(), false);
  }

  /**
   * A test clock's advance (docs/test-clocks.md): the documents in the clock's time due by its new time, each attempt
   * at its due time, a batch at a time until none is due, so a retry falling due by then is attempted in the same
   * advance; at most testClockAdvanceBatchesMax batches. The claim's lease is in the clock's time (its advances
   * follow one another).
   */
  async syncDueOnClock(testClock: TestClockTime): Promise<void> {
    for (let batch = 0; batch < testClockAdvanceBatchesMax; batch += 1) {
      if ((await this.sync(sql`clock_id = ${testClock.clockId}`, testClock.now, true)) === 0) return;
    }
  }

  /** `atDueTime`: each attempt is made at its document's due time (a test clock's), which its retry is counted from. */
  private async sync(clocked: RawBuilder<unknown>, now: Date, atDueTime: boolean): Promise<number> {
    const claimed = await claimDue<DocumentRow & { was_due_at: string }>(this.storage, {
      table: 'documents',
      due: sql`fr_sync_status = 'pending' and ${clocked}`,
      leaseColumn: 'next_sync_at',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + documentSyncLeaseMs).toISOString(),
      orderBy: 'next_sync_at',
      limit: documentSyncBatchSize,
      set: { sync_attempts: sql`sync_attempts + 1`, updated_at: this.clock.now().toISOString() },
      previousLeaseAs: 'was_due_at',
    });
    if (claimed.length === 0) return 0;
    const frEndUserIdOf = await providerEndUserIds(this.storage.db, claimed.map((document) => document.end_user_id));
    for (const { was_due_at: dueAt, ...document } of claimed) {
      await this.syncOne({ ...document, fr_end_user_id: frEndUserIdOf.get(document.end_user_id) ?? '' }, atDueTime ? new Date(dueAt) : undefined);
    }
    return claimed.length;
  }

  /** An attempt claimed (sync_attempts already counts it): send it, or give up if no attempts are left. `clockTime`: its time in a test clock's time. */
  private async syncOne(document: DueDocument, clockTime: Date | undefined): Promise<void> {
    const attempt = Number(document.sync_attempts);
    // The last attempt was claimed but never reported back (its process stopped); no attempts are left.
    if (attempt > documentSyncAttemptsMax) return this.lifecycle.abandoned(document, attempt);
    return this.lifecycle.attempted(document, attempt, await this.send(document, attempt), clockTime);
  }

  /** The provider call of one attempt; undefined on success, otherwise the reason to keep. */
  private async send(document: DueDocument, attempt: number): Promise<string | undefined> {
    let bytes: Buffer;
    try {
      bytes = await this.files.get(document.storage_path);
    } catch (error) {
      // The client sees a plain reason; the path and errno stay in the log.
      this.log.error({ err: error, documentId: document.id }, 'stored document file could not be read');
      return 'the stored file could not be read';
    }
    try {
      await withTimeout(
        this.kyc.uploadDocument({
          frDocumentId: document.fr_document_id,
          frEndUserId: document.fr_end_user_id,
          documentType: document.document_type,
          documentKind: document.document_kind,
          fileName: document.file_name,
          mimeType: document.mime_type,
          bytes,
          attempt,
        }),
        documentSyncCallTimeoutMs,
        'the provider',
      );
      return undefined;
    } catch (error) {
      return errorText(error);
    }
  }
}
