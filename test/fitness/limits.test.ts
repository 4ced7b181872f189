import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isLimitsFile, isScanned, sourceFiles, strayLimitsIn } from './stray-limits.js';

/** Every numeric limit is a named constant in src/config/limits.ts or a module's limits.ts re-exported there. */

const root = path.resolve(import.meta.dirname, '../..');

/** Code with a stray limit on each line that says `stray`, and the allowed numbers on the others. */
const fixture = `
const Name = Type.String({ minLength: 1, maxLength: 200 }); // stray
const Page = Type.Integer({ minimum: 1, maximum: pageMax, default: 50 }); // stray
const Items = Type.Array(Item, { maxItems: 2 * 10 }); // stray
const retryWindowMs = 60_000; // stray
function wait(timeoutMs = 5000) {} // stray
const options = { ttlMs: 30 * 60 * 1000, limit: query.limit ?? 20 }; // stray
if (name.length > 100) refuse(); // stray
if (attempt >= 3) giveUp(); // stray
setTimeout(retry, 250); // stray
socket.setTimeout(10_000); // stray
const token = randomBytes(24); // stray
const rows = await db.selectFrom('t').selectAll().limit(500).execute(); // stray
const size = Math.min(requested, 100); // stray
const nameLengthMax = strict ? 40 : limitMax; // stray
if (name.length > nameLengthMax + 5) refuse(); // stray
const expiresAtMs = nowMs + ttlSeconds * 1000;
const seconds = Math.max(1, Math.ceil(ttlMs / 1000));
const twiceMs = baseMs * 2;
if (items.length === 0 || items.length > limitMax || index === -1) refuse();
if (reply.statusCode >= 500) log();
if (response.status === 404) missing();
const isLeap = year % 4 === 0;
const minor = amount * 10n ** BigInt(scale);
const backoffMs = Math.min(maxMs, baseMs * 2 ** (attempt - 1));
const isSpace = byte === 0x20;
const responses = { 201: Created, 404: NotFound };
const third = parts[2];
const padded = text.padStart(2, '0');
`;

describe('numeric limits', () => {
  it('finds a stray literal in every kind of limit position, and nothing in the allowed ones', () => {
    const found = strayLimitsIn('fixture.ts', fixture);
    const lines = fixture.split('\n');
    const strayLines = lines.flatMap((line, index) => (line.endsWith('// stray') ? [index + 1] : []));
    expect([...new Set(found.map((stray) => stray.line))]).toEqual(strayLines);
    expect(found.find((stray) => stray.line === strayLines[3])).toMatchObject({ why: '`retryWindowMs`', text: 'retryWindowMs = 60_000' });
  });

  it('holds no stray literal in src outside the limits files', () => {
    const strays = sourceFiles(root)
      .filter(isScanned)
      .flatMap((file) => strayLimitsIn(file, fs.readFileSync(path.join(root, file), 'utf8')));
    expect(strays.map((stray) => `${stray.file}:${stray.line} (${stray.why}) ${stray.text}`)).toEqual([]);
  });

  it('has every module limits file re-exported by src/config/limits.ts', () => {
    const limits = fs.readFileSync(path.join(root, 'src/config/limits.ts'), 'utf8');
    const moduleLimits = sourceFiles(root).filter((file) => isLimitsFile(file) && file !== 'src/config/limits.ts');
    expect(moduleLimits.length).toBeGreaterThan(0);
    for (const file of moduleLimits) {
      expect(limits, file).toContain(`export * from '../${file.slice('src/'.length).replace(/\.ts$/, '.js')}';`);
    }
  });
});
