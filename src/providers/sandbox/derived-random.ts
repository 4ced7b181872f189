import { createHash } from 'node:crypto';

/** Bytes below this (25 times 10) give each decimal digit equally often. */
const uniformDigitByteRange = 250;

/**
 * Pseudo-random digits and hex derived from a seed (the idempotency key of a provider call): the sandbox answers a
 * repeated call with the same object, as a real provider does for a repeated idempotency key, without keeping
 * state. SHA-256 of `seed:counter`, consumed as a stream.
 */
export class DerivedRandom {
  private buffer = Buffer.alloc(0);
  private offset = 0;
  private counter = 0;

  constructor(private readonly seed: string) {}

  private byte(): number {
    if (this.offset >= this.buffer.length) {
      this.buffer = createHash('sha256').update(`${this.seed}:${this.counter}`).digest();
      this.counter += 1;
      this.offset = 0;
    }
    return this.buffer[this.offset++]!;
  }

  /** `count` decimal digits, uniformly distributed (bytes of 250 and above are skipped so 0-9 stay equally likely). */
  digits(count: number): string {
    let digits = '';
    while (digits.length < count) {
      const byte = this.byte();
      if (byte < uniformDigitByteRange) digits += String(byte % 10);
    }
    return digits;
  }

  bytes(count: number): Uint8Array {
    return Uint8Array.from({ length: count }, () => this.byte());
  }

  hex(bytes: number): string {
    return Buffer.from(this.bytes(bytes)).toString('hex');
  }
}
