import type { FieldError } from '../../errors.js';
import { decodeBase64, detectMimeType, extensionByMimeType, safeFileName, type DocumentMimeType } from './file-types.js';

/** A file of a request, decoded and checked, not yet stored. */
export interface CheckedFile {
  bytes: Buffer;
  mimeType: DocumentMimeType;
  fileName: string;
}

export interface FileField {
  /** JSON pointer of the base64 field, where its problems are reported. */
  path: string;
  base64: string;
  /** Pointer of the file name field, when the request has one. */
  fileNamePath?: string;
  fileName?: string;
  /** The type the client declared; without one, any accepted type will do. */
  declaredMimeType?: DocumentMimeType;
  /** Name used when the request has none; the detected type's extension is added. */
  defaultName: string;
  sizeMaxBytes: number;
}

/**
 * The checks every uploaded file passes before anything is written (docs/documents.md): base64, at most
 * `sizeMaxBytes` once decoded, content recognised by its magic bytes as PDF, JPEG or PNG (and the declared
 * type, if any), and a file name without a directory part. Problems are appended to `errors`.
 */
export function checkFile(field: FileField, errors: FieldError[]): CheckedFile | undefined {
  const refuse = (reason: string, path = field.path) => {
    errors.push({ location: 'body', path, reason });
    return undefined;
  };
  let fileName: string | undefined;
  if (field.fileName !== undefined) {
    fileName = safeFileName(field.fileName);
    if (fileName === undefined) refuse('must end with a file name, not a directory separator, "." or ".."', field.fileNamePath);
  }
  const bytes = decodeBase64(field.base64);
  if (bytes === undefined) return refuse('must be standard base64 (RFC 4648, padded; line breaks allowed; no data: prefix)');
  if (bytes.length > field.sizeMaxBytes) return refuse(`decodes to ${bytes.length} bytes; the limit is ${field.sizeMaxBytes} bytes`);
  const detected = detectMimeType(bytes);
  if (detected === undefined) {
    const expected = field.declaredMimeType ? `, so it cannot be ${field.declaredMimeType}` : '';
    return refuse(`content is not a PDF, JPEG or PNG file${expected}`);
  }
  if (field.declaredMimeType !== undefined && detected !== field.declaredMimeType) return refuse(`content is ${detected}, not ${field.declaredMimeType}`);
  if (field.fileName !== undefined && fileName === undefined) return undefined;
  return { bytes, mimeType: detected, fileName: fileName ?? `${field.defaultName}.${extensionByMimeType[detected]}` };
}
