/**
 * Strings a request may carry (docs/decisions/0005-request-input-rules.md), two rules:
 *
 * - Every string, keys of objects and free-form JSON included: well-formed Unicode without C0 control characters
 *   other than tab, CR and LF. A NUL cannot be stored in a PostgreSQL text column (it answered 500 there and was
 *   stored on SQLite), and a lone UTF-16 surrogate cannot be encoded as UTF-8, so one accepted value broke every
 *   later list response for strict JSON decoders. Checked for every part of every request, so both databases give
 *   the same answer.
 * - Every string field a request schema declares (names, references, descriptions, file names, addresses…) is also
 *   single-line visible text: no line breaks, no bidirectional controls, no invisible characters. These values end
 *   up in lists, statements, dashboards and Content-Disposition headers, where a right-to-left override shows
 *   "photo" U+202E "gpj.exe" as "photoexe.jpg", a zero-width space makes two names look alike, and a CR/LF in a file
 *   name starts a new header line. The schema keyword of validation.ts applies it (request-schema.ts marks the
 *   strings).
 */

// One character class each: the scan runs over report strings of several megabytes. A control character is one of
// Unicode's Cc other than tab, LF, CR and U+007F-U+009F, i.e. U+0000-U+0008, U+000B, U+000C and U+000E-U+001F.
const controlCharacter = /[^\P{Cc}\t\n\r\u007F-\u009F]/u;
const loneSurrogate = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export interface TextProblem {
  /** JSON pointer of the value (for a bad key, of the object holding it). */
  path: string;
  reason: string;
}

const controlCharacterText = 'control characters (U+0000-U+001F other than tab, CR and LF)';
const loneSurrogateText = 'a lone UTF-16 surrogate (not well-formed Unicode)';

/** What is wrong with the text, as a noun phrase; undefined when nothing is. */
function problemOf(text: string): string | undefined {
  if (controlCharacter.test(text)) return controlCharacterText;
  if (loneSurrogate.test(text)) return loneSurrogateText;
  return undefined;
}

/** Characters a single-line field may not carry, checked in one scan; joiners are looked at more closely. */
const notSingleLine = /[\n\r\u0085\u061C\u200B-\u200F\u2028-\u202E\u2060-\u206F\uFEFF]/g;
const lineBreak = /[\n\r\u0085\u2028\u2029]/;
const bidirectionalControl = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;
const joiner = /[\u200C\u200D]/;
/**
 * ZERO WIDTH (NON-)JOINER where writing needs it: between letters or marks of scripts that shape with it (Persian
 * and other Arabic-script languages, the Indic scripts) and inside emoji sequences (👩‍💻, 🏳️‍🌈). Latin, Greek and
 * Cyrillic never need one, and between their letters it only makes "admin" and "ad\u200Dmin" look alike.
 */
const joinable = '(?![\\p{Script=Latin}\\p{Script=Greek}\\p{Script=Cyrillic}])[\\p{L}\\p{M}\\p{Extended_Pictographic}\\p{Emoji_Modifier}]';
const joinerInWord = new RegExp(`(?<=${joinable})[\\u200C\\u200D](?=${joinable})`, 'uy');

function codePointName(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}

/** Why `text` is not single-line visible text, as a reason; undefined when it is. */
export function singleLineProblem(text: string): string | undefined {
  for (const match of text.matchAll(notSingleLine)) {
    const character = match[0];
    if (joiner.test(character)) {
      joinerInWord.lastIndex = match.index;
      if (joinerInWord.test(text)) continue;
      return `must not contain ${codePointName(character)} (a zero-width joiner or non-joiner) outside an emoji sequence or a word of a script that is written with it`;
    }
    const kind = lineBreak.test(character) ? 'a line break' : bidirectionalControl.test(character) ? 'a bidirectional control character' : 'an invisible character';
    return `must not contain ${codePointName(character)} (${kind}): text fields are a single line of visible characters`;
  }
  return undefined;
}

function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/**
 * Every string (and object key) of a parsed request part that is not acceptable text. Walks with an explicit stack:
 * a body of 64 KiB can nest thousands of arrays deep, which would overflow a recursive walk.
 */
export function textProblems(value: unknown): TextProblem[] {
  const problems: TextProblem[] = [];
  const pending: Array<{ value: unknown; path: string }> = [{ value, path: '' }];
  while (pending.length > 0) {
    const { value: current, path } = pending.pop()!;
    if (typeof current === 'string') {
      const problem = problemOf(current);
      if (problem) problems.push({ path, reason: `must not contain ${problem}` });
    } else if (Array.isArray(current)) {
      current.forEach((item, index) => pending.push({ value: item, path: `${path}/${index}` }));
    } else if (current !== null && typeof current === 'object') {
      for (const [key, item] of Object.entries(current)) {
        const problem = problemOf(key);
        if (problem) problems.push({ path, reason: `must not have a key containing ${problem}` });
        else pending.push({ value: item, path: `${path}/${pointerSegment(key)}` });
      }
    }
  }
  return problems.reverse();
}
