import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../../clock.js';
import { documentSyncAttemptsMax, documentSyncBackoffBaseMs, documentSyncBackoffMaxMs } from '../../config/limits.js';
import { DomainError, notFound } from '../../errors.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { Storage } from '../../storage/database.js';
import { presentDocument } from './presenter.js';
import { updatePendingDocument, type DueDocument } from './repository.js';
import type { DocumentRecord } from './schemas.js';

/** Wait after failed attempt `attempt` (1-based): base · 2^(attempt−1), capped. */
export function documentSyncRetryDelayMs(attempt: number): number {
  return Math.min(documentSyncBackoffBaseMs * 2 ** (attempt - 1), documentSyncBackoffMaxMs);
}

type DocumentChanges = Parameters<typeof updatePendingDocument>[3];

/**
 * The document sync lifecycle (docs/documents.md), whatever the KYC provider: a stored document is `pending` until
 * the provider has it (`synced`) or it is given up on (`failed`); both are final. It moves on two kinds of news:
 * - the answer to each upload attempt of the sync worker (sync-worker.ts): accepted → synced; refused or unanswered →
 *   pending again after a backoff, or failed once documentSyncAttemptsMax attempts have failed. Each is recorded only
 *   if no newer attempt started meanwhile;
 * - the provider events `document.synced` and `document.rejected` (payload `{ reason? }`; reference: the document's
 *   fr_document_id), from a provider that reviews uploads later.
 */
export class DocumentSyncLifecycle implements Lifecycle<'document'> {
  readonly resource = 'document';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<DocumentRecord> {
    const row = await this.storage.db.selectFrom('documents').selectAll().where('fr_document_id', '=', event.reference).executeTakeFirst();
    if (!row) throw notFound('document');
    const to = event.type === 'document.synced' ? 'synced' : 'failed';
    if (row.fr_sync_status !== 'pending') {
      throw new DomainError('INVALID_STATUS_TRANSITION', `A ${row.fr_sync_status} document cannot become ${to}.`, { from: row.fr_sync_status, to });
    }
    const now = this.clock.now().toISOString();
    const reason = typeof event.payload.reason === 'string' ? event.payload.reason : 'Rejected by the provider';
    const changes: DocumentChanges =
      to === 'synced'
        ? { fr_sync_status: 'synced', next_sync_at: null, last_sync_error: null, synced_at: now, updated_at: now }
        : { fr_sync_status: 'failed', next_sync_at: null, last_sync_error: reason, updated_at: now };
    await this.storage.transaction(async (trx) => {
      const result = await trx.updateTable('documents').set(changes).where('id', '=', row.id).where('fr_sync_status', '=', 'pending').executeTakeFirst();
      if (result.numUpdatedRows !== 1n) throw new DomainError('INVALID_STATUS_TRANSITION', 'The document was synced meanwhile.', { to });
      await applied.inTransaction(trx);
    });
    return presentDocument({ ...row, ...changes });
  }

  /** Attempt `attempt` (already counted) was claimed but never reported back, and no attempts are left. */
  async abandoned(document: DueDocument, attempt: number): Promise<void> {
    await this.record(document, attempt, {
      fr_sync_status: 'failed',
      next_sync_at: null,
      sync_attempts: documentSyncAttemptsMax,
      last_sync_error: document.last_sync_error ?? `attempt ${documentSyncAttemptsMax} did not finish`,
      updated_at: this.clock.now().toISOString(),
    });
  }

  /**
   * The provider's answer to attempt `attempt`: undefined when it took the document, else the reason it did not. The
   * retry is counted from now, or from `clockTime`, the attempt's time in a test clock's time (docs/test-clocks.md).
   */
  async attempted(document: DueDocument, attempt: number, failure: string | undefined, clockTime?: Date): Promise<void> {
    const now = this.clock.now();
    if (failure === undefined) {
      this.log.info({ documentId: document.id, attempt }, 'document synced to the provider');
      await this.record(document, attempt, { fr_sync_status: 'synced', next_sync_at: null, last_sync_error: null, synced_at: now.toISOString(), updated_at: now.toISOString() });
      return;
    }
    if (attempt >= documentSyncAttemptsMax) {
      this.log.warn({ documentId: document.id, attempt, reason: failure }, 'document sync failed for good');
      await this.record(document, attempt, { fr_sync_status: 'failed', next_sync_at: null, last_sync_error: failure, updated_at: now.toISOString() });
      return;
    }
    const retryAt = new Date((clockTime ?? now).getTime() + documentSyncRetryDelayMs(attempt));
    this.log.warn({ documentId: document.id, attempt, reason: failure, retryAt: retryAt.toISOString() }, 'document sync attempt failed; retrying later');
    await this.record(document, attempt, { next_sync_at: retryAt.toISOString(), last_sync_error: failure, updated_at: now.toISOString() });
  }

  private async record(document: DueDocument, attempt: number, changes: DocumentChanges): Promise<void> {
    const recorded = await updatePendingDocument(this.storage.db, document, attempt, changes);
    if (!recorded) {
      // Our lease ran out and another instance started a newer attempt; its outcome is the one that counts.
      this.log.warn({ documentId: document.id, attempt }, 'document sync outcome discarded: a newer attempt exists');
    }
  }
}
