import type { FastifyRequest } from 'fastify';
import {
  documentSizeMaxBytes,
  onboardingFormFieldBytesMax,
  onboardingFormFieldNameBytesMax,
} from '../../config/limits.js';
import { DomainError, validationError } from '../../errors.js';
import { bodyChecker } from '../../http/validation.js';
import { UploadDocumentBody, type UploadDocumentInput } from '../../modules/documents/index.js';
import { documentKindWords } from '../document-kind-words.js';
import { fieldProblems, refuseForm, type FieldLabels } from '../form.js';

/**
 * What the upload form may send (@fastify/multipart limits, this context only): one file of at most the API's
 * document size, and a few short fields (the form has two: `_csrf` and `identity_document`). Anything beyond is
 * refused while it is read, never buffered.
 */
export const documentFormLimits = {
  files: 1,
  fileSize: documentSizeMaxBytes,
  fields: 4,
  fieldSize: onboardingFormFieldBytesMax,
  fieldNameSize: onboardingFormFieldNameBytesMax,
  parts: 5,
  headerPairs: 20,
};

interface ReceivedFile {
  name: string;
  mimeType: string;
  bytes: Buffer;
}

interface DocumentForm {
  fields: Record<string, string>;
  file: ReceivedFile | undefined;
}

/** The size limit as the page states it. */
export const fileSizeMaxMegabytes = documentSizeMaxBytes / (1024 * 1024);

/** The multipart plugin's refusals (413s) and busboy's (400s) in words; anything else passes through. */
function inWords(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') {
    return new DomainError('PAYLOAD_TOO_LARGE', `The file is larger than ${fileSizeMaxMegabytes} MB. Choose a smaller file, or scan it at a lower resolution.`);
  }
  if (code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT' || code === 'FST_PARTS_LIMIT') {
    return new DomainError('PAYLOAD_TOO_LARGE', 'Send one file with the form on this page.');
  }
  // Busboy refuses a body it cannot read (no boundary, cut short, a malformed part header) with a plain Error and
  // no status: the request's fault, a 400, not a failure of ours (500, logged).
  if (!(error instanceof DomainError) && typeof (error as { statusCode?: unknown }).statusCode !== 'number') {
    return new DomainError('VALIDATION_ERROR', 'The upload could not be read. Send it again with the form on this page.');
  }
  return error;
}

/**
 * Reads the upload form. `checkFormToken` runs on the fields sent before the file (the form puts `_csrf` first,
 * as browsers send fields in page order), so a forged request is refused before a byte of its file is kept; a
 * request without a file is checked at the end.
 */
export async function readDocumentForm(request: FastifyRequest, checkFormToken: (presented: string | undefined) => void): Promise<DocumentForm> {
  const fields: Record<string, string> = {};
  let file: ReceivedFile | undefined;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        // A cut-off value (longer than fieldSize) is no value.
        if (typeof part.value === 'string' && !part.valueTruncated) fields[part.fieldname] = part.value;
        continue;
      }
      try {
        checkFormToken(fields._csrf);
      } catch (error) {
        // Let the rest of the body flow past unread, so the connection is not left waiting on it.
        part.file.resume();
        throw error;
      }
      file = { name: part.filename, mimeType: part.mimetype, bytes: await part.toBuffer() };
    }
  } catch (error) {
    throw inWords(error);
  }
  checkFormToken(fields._csrf);
  return { fields, file };
}

const checkUploadBody = bodyChecker<UploadDocumentInput>(UploadDocumentBody);

/**
 * The API's POST /documents body for the form — an identity document of the kind the person chose — checked by the
 * same schema: an empty file input (a browser sends a nameless, empty part) or an unknown document kind is refused
 * like any other invalid field.
 */
export function uploadBodyOf(endUserId: string, form: DocumentForm): UploadDocumentInput {
  const kind = form.fields.identity_document;
  const problems = [];
  if (kind === undefined || !Object.hasOwn(documentKindWords, kind)) {
    problems.push({ location: 'body' as const, path: '/identity_document', reason: `choose one of: ${Object.values(documentKindWords).join(', ')}` });
  }
  if (form.file === undefined || (!form.file.name && form.file.bytes.length === 0)) {
    problems.push({ location: 'body' as const, path: '/document', reason: 'choose a file (PDF, JPEG or PNG)' });
  }
  if (problems.length > 0 || form.file === undefined) throw validationError(problems);
  return checkUploadBody({
    endUserId,
    documentType: 'identity',
    documentKind: kind,
    fileName: form.file.name,
    fileData: form.file.bytes.toString('base64'),
    mimeType: form.file.mimeType,
  });
}

/** The form's fields, and the API body's fields each one's problems come from. */
const uploadLabels: FieldLabels = {
  identity_document: { label: 'Document', paths: ['/identity_document', '/documentKind'] },
  document: { label: 'File', paths: ['/document', '/fileData'] },
  fileName: { label: 'File name', paths: ['/fileName'], id: 'document' },
  mimeType: { label: 'File type', paths: ['/mimeType'], id: 'document' },
};
/** Refusals shown on the page itself, next to the form; the rest (expired form, gone link) are error pages. */
export function uploadProblems(error: unknown): string[] | undefined {
  if (!(error instanceof DomainError)) return undefined;
  // The quota is the customer's: the person can do nothing about it but say so.
  if (error.code === 'STORAGE_QUOTA_EXCEEDED') return ['The document cannot be stored at the moment. Please tell the company that sent you this link.'];
  if (error.code !== 'VALIDATION_ERROR' && error.code !== 'PAYLOAD_TOO_LARGE') return undefined;
  return refuseForm({}, uploadLabels, fieldProblems(error, uploadLabels) ?? []).problems.map((problem) => problem.text);
}
