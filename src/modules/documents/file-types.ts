/** The file types spec §4 POST /documents accepts, recognised by their first bytes (magic numbers). */
export const documentMimeTypes = ['application/pdf', 'image/jpeg', 'image/png'] as const;
export type DocumentMimeType = (typeof documentMimeTypes)[number];

const signatures: Record<DocumentMimeType, number[]> = {
  'application/pdf': [0x25, 0x50, 0x44, 0x46, 0x2d], // %PDF-
  'image/jpeg': [0xff, 0xd8, 0xff],
  'image/png': [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
};

export function detectMimeType(bytes: Buffer): DocumentMimeType | undefined {
  return documentMimeTypes.find((type) => signatures[type].every((byte, index) => bytes[index] === byte));
}

// A single character class with no groups: a grouped repetition over megabytes overflows V8's regex stack.
const base64Characters = /^[A-Za-z0-9+/]*={0,2}$/;

/** Strict standard base64 (RFC 4648 §4, padded, no whitespace); undefined when the text is not. */
export function decodeBase64(text: string): Buffer | undefined {
  if (text.length % 4 !== 0 || !base64Characters.test(text)) return undefined;
  return Buffer.from(text, 'base64');
}
