import { randomFillSync } from 'node:crypto';
import { v7 as uuidV7 } from 'uuid';

/**
 * Identifiers (docs/decisions/0006-time-ordered-ids.md). Every row id is a UUID version 7: its first 48 bits are the
 * creation time in milliseconds, so the ids of new rows sort after the existing ones and each insert lands on the
 * last page of a primary-key or foreign-key index instead of a random page of it. A payment writes six indexed ids;
 * with random (version 4) ids each commit wrote as many scattered index pages.
 *
 * Random bits are drawn from the kernel a few kilobytes at a time, as node:crypto's randomUUID does: a system call
 * per id cost several microseconds, and a payment draws about eight. None of these values is a secret.
 */

const randomPool = Buffer.alloc(4096);
let randomPoolOffset = randomPool.length;

function randomBytesFromPool(count: number): Buffer {
  if (count > randomPool.length) throw new RangeError(`at most ${randomPool.length} random bytes at a time`);
  if (randomPoolOffset + count > randomPool.length) {
    randomFillSync(randomPool);
    randomPoolOffset = 0;
  }
  const bytes = randomPool.subarray(randomPoolOffset, randomPoolOffset + count);
  randomPoolOffset += count;
  return bytes;
}

/** A new row id: a time-ordered UUID (version 7, RFC 9562), 73 random bits after the millisecond. */
export function newId(): string {
  return uuidV7({ random: randomBytesFromPool(16) });
}

/** `byteCount` random bytes as lowercase hex, for provider-side ids (`pmt_…`). */
export function randomHex(byteCount: number): string {
  return randomBytesFromPool(byteCount).toString('hex');
}
