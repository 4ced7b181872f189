import { customerTimeOf, type Clock, type CustomerClocks } from '../../clock.js';
import { documentSizeMaxBytes } from '../../config/limits.js';
import { notFound, validationError, type FieldError } from '../../errors.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import type { Storage } from '../../storage/database.js';
import { recordWithFiles, type FileStore } from '../../storage/files.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import type { EndUserService } from '../end-users/index.js';
import { presentDocument, presentUploadResult } from './presenter.js';
import { findDocument, listDocumentsOfEndUser } from './repository.js';
import { identityUploadTypes, type DocumentRecord, type DocumentUploadResultRecord, type UploadDocumentInput } from './schemas.js';
import { assertWithinStorageQuota, insertStoredDocuments, storedDocumentRow } from './stored-document.js';
import { checkFile } from './upload.js';

export class DocumentService {
  constructor(
    private readonly storage: Storage,
    private readonly files: FileStore,
    private readonly clock: Clock,
    private readonly endUsers: EndUserService,
    private readonly storageQuotaBytes: number,
    /** A document's sync attempts are due in its customer's time (docs/test-clocks.md). */
    private readonly customerClocks: CustomerClocks,
  ) {}

  /**
   * docs/spec.md §4 POST /documents: every check passes first (the file, the end user, the quota); then the file is stored
   * and its row lands `pending` in one step that leaves no file behind if the row cannot be written. The sync
   * worker hands it to the provider afterwards, so the provider is never called inside a request. `onCreated` runs
   * in that step (an Idempotency-Key's answer is stored with the row).
   */
  async upload(caller: AuthenticatedKey, input: UploadDocumentInput, onCreated?: OnCreated<DocumentUploadResultRecord>): Promise<DocumentUploadResultRecord> {
    const errors: FieldError[] = [];
    if (input.documentKind !== undefined && !identityUploadTypes.has(input.documentType)) {
      errors.push({
        location: 'body',
        path: '/documentKind',
        reason: `describes an identity document, and documentType ${input.documentType} is not one: send it with identity or IDENTITY_VERIFICATION, or leave it out`,
      });
    }
    const file = checkFile(
      {
        path: '/fileData',
        base64: input.fileData,
        fileNamePath: '/fileName',
        fileName: input.fileName,
        declaredMimeType: input.mimeType,
        defaultName: 'document',
        sizeMaxBytes: documentSizeMaxBytes,
      },
      errors,
    );
    if (!file || errors.length > 0) throw validationError(errors);
    // Another customer's end user answers 404 exactly like an unknown one; checked before any byte is written.
    const endUser = await this.endUsers.require(caller, input.endUserId);
    await assertWithinStorageQuota(this.storage.db, caller.customerId, file.bytes.length, this.storageQuotaBytes);
    const firstSync = await customerTimeOf(this.customerClocks, this.clock, caller.customerId);
    return recordWithFiles(this.storage, this.files, caller.customerId, [file.bytes], async (trx, [storagePath]) => {
      const document = storedDocumentRow({
        customerId: caller.customerId,
        endUserId: endUser.id,
        documentType: input.documentType,
        documentKind: input.documentKind,
        file,
        storagePath: storagePath!,
        now: this.clock.now(),
        firstSync,
      });
      await insertStoredDocuments(trx, caller.customerId, [document], this.storageQuotaBytes);
      const record = presentUploadResult(document);
      await onCreated?.(trx, record);
      return record;
    });
  }

  async get(caller: AuthenticatedKey, id: string): Promise<DocumentRecord> {
    const row = await findDocument(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('document');
    return presentDocument(row);
  }

  /** A document with its file's bytes, for the dashboard to show or download (docs/dashboard.md "End users"). */
  async withContent(caller: AuthenticatedKey, id: string): Promise<{ document: DocumentRecord; bytes: Buffer }> {
    const row = await findDocument(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('document');
    return { document: presentDocument(row), bytes: await this.files.get(row.storage_path) };
  }

  /** Every document of one end user (uploads and end-user reports), oldest first. */
  async listOfEndUser(caller: AuthenticatedKey, endUserId: string): Promise<DocumentRecord[]> {
    const endUser = await this.endUsers.require(caller, endUserId);
    return (await listDocumentsOfEndUser(this.storage.db, caller.customerId, endUser.id)).map(presentDocument);
  }
}
