import { describe, expect, it } from 'vitest';
import { AmountError, parseAmount } from '../../src/ledger/amounts.js';
import { computeFee, formatPercentage, parsePercentage, percentageAmountMinor } from '../../src/modules/fees/calculation.js';

/** Exact money (docs/architecture.md, Stack): amounts become bigint minor units without float arithmetic; fees are bigint too. */

describe('parseAmount', () => {
  it.each([
    [12.34, 1234n],
    [0.01, 1n],
    [0.1, 10n],
    [0.2, 20n],
    [1.1, 110n],
    [1.15, 115n],
    [1.005e2, 10050n],
    [10, 1000n],
    [10_000_000, 1_000_000_000n],
    [10_000_000.01, 1_000_000_001n],
    [9_007_199_254_740.99, 900_719_925_474_099n],
    [0, 0n],
    [-0, 0n],
    [1e21, 10n ** 23n],
  ])('reads the JSON number %s exactly as %s minor units', (value, minor) => {
    expect(parseAmount(value, 'EUR')).toBe(minor);
  });

  it('reads numbers whose float products are inexact (1.15 × 100 is 114.99999999999999 as a double) from their digits', () => {
    expect(1.15 * 100).not.toBe(115);
    expect(parseAmount(1.15, 'USD')).toBe(115n);
    expect(parseAmount(4.35, 'GBP')).toBe(435n);
    // A float product is not the number the client meant, and is refused rather than rounded: 1004.9999999999999.
    expect(() => parseAmount(1.005 * 1000, 'EUR')).toThrow(AmountError);
  });

  it.each([
    [1.234, 'must have at most 2 decimal places (EUR)'],
    [0.001, 'must have at most 2 decimal places (EUR)'],
    [1e-7, 'must have at most 2 decimal places (EUR)'],
    [1.5e-10, 'must have at most 2 decimal places (EUR)'],
    [0.1 + 0.2, 'must have at most 2 decimal places (EUR)'],
    [10_000_000.001, 'must have at most 2 decimal places (EUR)'],
    [-1, 'must not be negative'],
    [-0.01, 'must not be negative'],
    [Number.NaN, 'must be a finite number'],
    [Number.POSITIVE_INFINITY, 'must be a finite number'],
  ])('refuses the JSON number %s: %s', (value, reason) => {
    expect(() => parseAmount(value, 'EUR')).toThrow(new AmountError(reason));
  });

  it.each([
    ['12.34', 1234n],
    ['0.20', 20n],
    ['0.2', 20n],
    ['7', 700n],
    ['0', 0n],
    ['0.200', 20n],
    ['00.50', 50n],
    ['10000000.00', 1_000_000_000n],
    ['123456789012345678901234567890', 12_345_678_901_234_567_890_123_456_789_000n],
  ])('reads the decimal string "%s" as %s minor units', (value, minor) => {
    expect(parseAmount(value, 'GBP')).toBe(minor);
  });

  it.each(['', ' 1.00', '1.00 ', '-1', '+1', '1e2', '1,000.00', '1.', '.5', '0x10', 'ten', 'Infinity', '1.2.3'])('refuses the string "%s"', (value) => {
    expect(() => parseAmount(value, 'EUR')).toThrow(AmountError);
  });

  it('says why a negative string is refused', () => {
    expect(() => parseAmount('-1.00', 'EUR')).toThrow('must not be negative');
  });

  it('refuses a string with more decimals than the currency unless they are zeros', () => {
    expect(() => parseAmount('1.234', 'USD')).toThrow('must have at most 2 decimal places (USD)');
    expect(() => parseAmount('1.001', 'USD')).toThrow(AmountError);
    expect(parseAmount('1.230000', 'USD')).toBe(123n);
  });

  it('refuses an overlong string before reading its digits', () => {
    expect(() => parseAmount('1'.repeat(41), 'EUR')).toThrow('is too long');
  });
});

describe('fee computation', () => {
  const rule = (overrides: Partial<Parameters<typeof computeFee>[1]> = {}) => ({
    flatFeeMinor: 0n,
    percentageMillionths: 0n,
    minFeeMinor: null,
    maxFeeMinor: null,
    ...overrides,
  });

  it('rounds the percentage amount half-up to the minor unit', () => {
    // 0.25 % of 2.00 is exactly half a cent → 1 cent; of 1.98 it is 0.495 cent → 0; of 2.02 0.505 → 1.
    expect(percentageAmountMinor(200n, 2500n)).toBe(1n);
    expect(percentageAmountMinor(198n, 2500n)).toBe(0n);
    expect(percentageAmountMinor(202n, 2500n)).toBe(1n);
    expect(percentageAmountMinor(599n, 2500n)).toBe(1n);
    expect(percentageAmountMinor(600n, 2500n)).toBe(2n);
    // 0.25 % of 0.02 is 0.005 cent → 0.
    expect(percentageAmountMinor(2n, 2500n)).toBe(0n);
    // 0.1 % of 5.05 is 0.505 cent → 1; as doubles 505 * 0.001 = 0.505 is 0.50499999… and would round to 0.
    expect(percentageAmountMinor(505n, 1000n)).toBe(1n);
    expect(Math.round(505 * 0.001 * 100) / 100).not.toBe(0.01);
  });

  it('computes exactly at the largest amounts, beyond the range of exact doubles', () => {
    // 100 % of 10,000,000.00 and 0.0001 % of it: products of 1e15 and 1e9 millionths.
    expect(percentageAmountMinor(1_000_000_000n, 1_000_000n)).toBe(1_000_000_000n);
    expect(percentageAmountMinor(1_000_000_000n, 1n)).toBe(1000n);
    // 9,999,999.99 × 0.3333 % = 33,329.99996667 → 33,330.00.
    expect(percentageAmountMinor(999_999_999n, 3333n)).toBe(3_333_000n);
    expect(percentageAmountMinor(2n ** 60n, 2500n)).toBe(2_882_303_761_517_117n);
  });

  it('adds the flat fee to the percentage amount, and applies no bound it does not reach', () => {
    expect(computeFee(10_000n, rule({ flatFeeMinor: 20n, percentageMillionths: 2500n, minFeeMinor: 10n, maxFeeMinor: 100n }))).toEqual({
      flatFeeMinor: 20n,
      percentageAmountMinor: 25n,
      rawTotalMinor: 45n,
      feeMinor: 45n,
      minApplied: false,
      maxApplied: false,
    });
  });

  it('raises a raw total below the minimum to the minimum', () => {
    const fee = computeFee(100_00n, rule({ percentageMillionths: 1000n, minFeeMinor: 500n, maxFeeMinor: 5000n }));
    expect(fee).toMatchObject({ percentageAmountMinor: 10n, rawTotalMinor: 10n, feeMinor: 500n, minApplied: true, maxApplied: false });
  });

  it('lowers a raw total above the maximum to the maximum', () => {
    const fee = computeFee(1_000_000_00n, rule({ percentageMillionths: 1000n, minFeeMinor: 500n, maxFeeMinor: 5000n }));
    expect(fee).toMatchObject({ percentageAmountMinor: 100_000n, rawTotalMinor: 100_000n, feeMinor: 5000n, minApplied: false, maxApplied: true });
  });

  it('applies neither bound when the raw total equals it', () => {
    expect(computeFee(500_000n, rule({ percentageMillionths: 1000n, minFeeMinor: 500n }))).toMatchObject({ feeMinor: 500n, minApplied: false });
    expect(computeFee(5_000_000n, rule({ percentageMillionths: 1000n, maxFeeMinor: 5000n }))).toMatchObject({ feeMinor: 5000n, maxApplied: false });
  });

  it('charges nothing on a zero schedule', () => {
    expect(computeFee(123_45n, rule())).toMatchObject({ feeMinor: 0n, rawTotalMinor: 0n, minApplied: false, maxApplied: false });
  });

  it('refuses negative operands rather than rounding them the wrong way', () => {
    expect(() => percentageAmountMinor(-1n, 2500n)).toThrow(RangeError);
  });
});

describe('percentages', () => {
  it.each([
    ['0.25', 2500n],
    ['0.1', 1000n],
    ['0', 0n],
    ['1', 10_000n],
    ['100', 1_000_000n],
    ['0.0001', 1n],
    ['2.5', 25_000n],
  ])('parses "%s" %% as %s millionths and prints it back', (text, millionths) => {
    expect(parsePercentage(text)).toBe(millionths);
    expect(formatPercentage(millionths)).toBe(text);
  });

  it.each(['0.00001', '-1', '1e-2', '', '.5', '1000', '0,25', '0.25%'])('refuses "%s"', (text) => {
    expect(parsePercentage(text)).toBeNull();
  });
});
