/**
 * Strings a request may carry (docs/decisions/0005-request-input-rules.md): well-formed Unicode without C0 control
 * characters other than tab, CR and LF. A NUL cannot be stored in a PostgreSQL text column (it answered 500 there
 * and was stored on SQLite), and a lone UTF-16 surrogate cannot be encoded as UTF-8, so one accepted value broke
 * every later list response for strict JSON decoders. Checked at the edge for every part of every request, keys of
 * objects included, so both databases give the same answer.
 */

// One character class each: the scan runs over report strings of several megabytes.
const controlCharacter = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/;
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
