import { Type, type Static } from 'typebox';
import { documentBase64LengthMax, documentFileNameLengthMax, documentSizeMaxBytes } from '../../config/limits.js';
import { Nullable, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { identityDocumentKinds } from '../end-users/index.js';
import { documentMimeTypes } from './file-types.js';

/** docs/spec.md §4 POST /documents: the documentType values a client may upload. */
export const uploadDocumentTypes = ['IDENTITY_VERIFICATION', 'BUSINESS_REGISTRATION', 'identity', 'proof_of_address', 'other'] as const;

/** The upload documentTypes of an identity document: the only ones a documentKind describes. */
export const identityUploadTypes: ReadonlySet<string> = new Set<(typeof uploadDocumentTypes)[number]>(['IDENTITY_VERIFICATION', 'identity']);

/** Additive (docs/documents.md): which identity document a file is — the kinds of an end user's identificationDocument. */
export type DocumentKind = (typeof identityDocumentKinds)[number];

/** Sync states of a stored document (docs/spec.md §3 shows only `pending`; docs/documents.md has the rest). */
const documentSyncStatuses = ['pending', 'synced', 'failed'] as const;

/** docs/spec.md §4 POST /documents. The encoding of fileData is "not shown" in the spec; docs/documents.md decides base64. */
export const UploadDocumentBody = Type.Object(
  {
    endUserId: Uuid,
    documentType: StringEnum(uploadDocumentTypes),
    fileName: Type.String({ minLength: 1, maxLength: documentFileNameLengthMax, description: 'A label; any directory part is dropped (C:\\scans\\passport.pdf → passport.pdf)' }),
    fileData: Type.String({
      minLength: 1,
      maxLength: documentBase64LengthMax,
      contentEncoding: 'base64',
      description: `File content as standard padded base64 (RFC 4648 §4; LF or CRLF line breaks allowed; no data: prefix); at most ${documentSizeMaxBytes} bytes once decoded, and the bytes must be of mimeType`,
    }),
    mimeType: StringEnum(documentMimeTypes, { description: 'Checked against the decoded content by its magic bytes' }),
    documentKind: Type.Optional(
      StringEnum(identityDocumentKinds, { description: 'Additive: which identity document this is; only with documentType identity or IDENTITY_VERIFICATION' }),
    ),
  },
  {
    title: 'UploadDocumentRequest',
    additionalProperties: false,
    examples: [
      {
        endUserId: '0196b2d4-5e6f-7a80-9b1c-2d3e4f5a6b7c',
        documentType: 'IDENTITY_VERIFICATION',
        documentKind: 'passport',
        fileName: 'passport.pdf',
        fileData: 'JVBERi0xLjcK',
        mimeType: 'application/pdf',
      },
    ],
  },
);
export type UploadDocumentInput = Static<typeof UploadDocumentBody>;

/** docs/spec.md §2 document upload result (`id` is additive, so the client can read the sync status later). */
export const DocumentUploadResult = Type.Object(
  {
    id: Uuid,
    storage_path: Type.String(),
    fr_document_id: Type.String({ description: 'Provider id, prefix doc_' }),
    status: Type.String({ description: 'uploaded' }),
    fr_sync_status: StringEnum(documentSyncStatuses, { description: 'pending on upload' }),
    message: Type.String({ description: 'Human-readable text' }),
  },
  { title: 'DocumentUploadResult', additionalProperties: false },
);
export type DocumentUploadResultRecord = Static<typeof DocumentUploadResult>;

/** A stored document and its provider sync state (additive: docs/architecture.md, Additive endpoints, GET by id for every resource). */
export const Document = Type.Object(
  {
    id: Uuid,
    end_user_id: Uuid,
    document_type: Type.String({ description: 'An upload documentType, or kyc_report / kyb_report / provider_report for end-user reports' }),
    document_kind: Type.Unsafe<DocumentKind | null>({
      type: ['string', 'null'],
      enum: [...identityDocumentKinds, null],
      description: 'Additive: the documentKind of an identity document; null when none was given',
    }),
    file_name: Type.String(),
    mime_type: Type.String(),
    size_bytes: Type.Integer({ description: 'Decoded size in bytes' }),
    storage_path: Type.String(),
    fr_document_id: Type.String({ description: 'Provider id, prefix doc_' }),
    status: Type.String({ description: 'uploaded' }),
    fr_sync_status: StringEnum(documentSyncStatuses),
    sync_attempts: Type.Integer({ description: 'Provider sync attempts started so far' }),
    next_sync_at: Nullable(Timestamp),
    last_sync_error: Nullable(Type.String({ description: 'Why the last attempt failed; kept when the document ends failed' })),
    synced_at: Nullable(Timestamp),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: 'Document', additionalProperties: false },
);
export type DocumentRecord = Static<typeof Document>;

export const DocumentParams = Type.Object({ id: Uuid }, { additionalProperties: false });
export const EndUserDocumentsParams = Type.Object({ endUserId: Uuid }, { additionalProperties: false });
