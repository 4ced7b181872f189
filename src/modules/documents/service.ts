import type { Clock } from '../../clock.js';
import { notFound, validationError, type FieldError } from '../../errors.js';
import { documentSizeMaxBytes } from '../../config/limits.js';
import type { Storage } from '../../storage/database.js';
import type { FileStore } from '../../storage/files.js';
import type { AuthenticatedKey } from '../api-keys/service.js';
import type { EndUserService } from '../end-users/service.js';
import { decodeBase64, detectMimeType } from './file-types.js';
import { presentDocument, presentUploadResult } from './presenter.js';
import { findDocument, insertDocument, listDocumentsOfEndUser } from './repository.js';
import type { DocumentRecord, DocumentUploadResultRecord, UploadDocumentInput } from './schemas.js';
import { storeDocumentFile } from './stored-document.js';

/** The decoded file, or every reason it cannot be accepted (all reported on /fileData). */
function decodeUpload(input: UploadDocumentInput): { bytes: Buffer } | { errors: FieldError[] } {
  const bytes = decodeBase64(input.fileData);
  const refuse = (reason: string) => ({ errors: [{ location: 'body' as const, path: '/fileData', reason }] });
  if (bytes === undefined) return refuse('must be standard base64 (RFC 4648, padded, without line breaks or a data: prefix)');
  if (bytes.length > documentSizeMaxBytes) return refuse(`decodes to ${bytes.length} bytes; the limit is ${documentSizeMaxBytes} bytes`);
  const detected = detectMimeType(bytes);
  if (detected === undefined) return refuse(`content is not a PDF, JPEG or PNG file, so it cannot be ${input.mimeType}`);
  if (detected !== input.mimeType) return refuse(`content is ${detected}, not ${input.mimeType}`);
  return { bytes };
}

export class DocumentService {
  constructor(
    private readonly storage: Storage,
    private readonly files: FileStore,
    private readonly clock: Clock,
    private readonly endUsers: EndUserService,
  ) {}

  /**
   * Spec §4 POST /documents: the file is stored (and fsynced) first, then its row lands `pending`; the sync worker
   * hands it to the provider afterwards, so the provider is never called inside a request or a transaction.
   */
  async upload(caller: AuthenticatedKey, input: UploadDocumentInput): Promise<DocumentUploadResultRecord> {
    const decoded = decodeUpload(input);
    if ('errors' in decoded) throw validationError(decoded.errors);
    // Another customer's end user answers 404 exactly like an unknown one; checked before any byte is written.
    const endUser = await this.endUsers.require(caller, input.endUserId);
    const row = await storeDocumentFile(this.files, {
      customerId: caller.customerId,
      endUserId: endUser.id,
      documentType: input.documentType,
      fileName: input.fileName,
      mimeType: input.mimeType,
      bytes: decoded.bytes,
      now: this.clock.now(),
    });
    await insertDocument(this.storage.db, row);
    return presentUploadResult(row);
  }

  async get(caller: AuthenticatedKey, id: string): Promise<DocumentRecord> {
    const row = await findDocument(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('document');
    return presentDocument(row);
  }

  /** Every document of one end user (uploads and end-user reports), oldest first. */
  async listOfEndUser(caller: AuthenticatedKey, endUserId: string): Promise<DocumentRecord[]> {
    const endUser = await this.endUsers.require(caller, endUserId);
    return (await listDocumentsOfEndUser(this.storage.db, caller.customerId, endUser.id)).map(presentDocument);
  }
}
