/** The file types docs/spec.md §4 POST /documents accepts, recognised by their first bytes (magic numbers). */
export const documentMimeTypes = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type DocumentMimeType = (typeof documentMimeTypes)[number];

const signatures: Record<DocumentMimeType, number[]> = {
  'application/pdf': [0x25, 0x50, 0x44, 0x46, 0x2d], // %PDF-
  'image/jpeg': [0xff, 0xd8, 0xff],
  'image/png': [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
};

/** The extension a stored name gets when the client gave none (end-user reports may come without a filename). */
export const extensionByMimeType: Record<DocumentMimeType, string> = { 'application/pdf': 'pdf', 'image/jpeg': 'jpg', 'image/png': 'png' };

export function detectMimeType(bytes: Buffer): DocumentMimeType | undefined {
  return documentMimeTypes.find((type) => signatures[type].every((byte, index) => bytes[index] === byte));
}

// Single character classes with no groups: a grouped repetition over megabytes overflows V8's regex stack.
const base64Characters = /^[A-Za-z0-9+/]*={0,2}$/;
const lineBreaks = /\r?\n/g;

/**
 * Standard base64 (RFC 4648 §4, padded), optionally broken into lines by LF or CRLF as MIME, PEM, `base64`,
 * Python's `encodebytes` and Ruby's `encode64` write it; undefined when the text is not.
 */
export function decodeBase64(text: string): Buffer | undefined {
  const joined = text.includes('\n') ? text.replace(lineBreaks, '') : text;
  if (joined.length === 0 || joined.length % 4 !== 0 || !base64Characters.test(joined)) return undefined;
  return Buffer.from(joined, 'base64');
}

/**
 * The name a file is kept under, for display only (the stored file has a generated name): the last segment of a
 * path a browser or client may send (`C:\Users\ada\passport.pdf` → `passport.pdf`). Undefined when nothing usable
 * is left (`.`, `..`, a name ending in a separator).
 */
export function safeFileName(name: string): string | undefined {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1).trim();
  return base === '' || base === '.' || base === '..' ? undefined : base;
}
