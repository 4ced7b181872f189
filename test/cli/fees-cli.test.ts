import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { FeeService } from '../../src/modules/fees/service.js';
import { openStorage } from '../../src/storage/database.js';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, lines, processTestTimeoutMs, run, stackFrame, type ProcessResult } from '../e2e/support.js';
import type { FeeScheduleView } from '../../src/modules/fees/presenter.js';
import { ReadCaches } from '../../src/storage/cache.js';

/** `customer-api fees set|list` (DESIGN §3, docs/fees.md) run as an operator runs them: a child process on a DATA_DIR. */

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type ScheduleOutput = FeeScheduleView;

/** The documented default schedule (docs/fees.md), in `fees list` order. */
const defaultSchedule = [
  ['SEPA', 'EUR', '0.20', '0', null, null],
  ['SEPA_INSTANT', 'EUR', '0.50', '0', null, null],
  ['FASTER_PAYMENTS', 'GBP', '0.20', '0', null, null],
  ['SWIFT', 'EUR', '0.00', '0.1', '5.00', '50.00'],
  ['SWIFT', 'GBP', '0.00', '0.1', '5.00', '50.00'],
  ['SWIFT', 'USD', '0.00', '0.1', '5.00', '50.00'],
  ['ACH', 'USD', '0.25', '0', null, null],
  ['INTERNAL', 'EUR', '0.00', '0', null, null],
  ['INTERNAL', 'GBP', '0.00', '0', null, null],
  ['INTERNAL', 'USD', '0.00', '0', null, null],
] as const;

describe('customer-api fees', { timeout: processTestTimeoutMs }, () => {
  const dataDir = temporaryDirectory('customer-api-fees-cli-');
  const env = { DATA_DIR: dataDir };
  let alice: { id: string };
  let bob: { id: string };

  const cli = (args: string[]): Promise<ProcessResult> => run(process.execPath, ['bin/customer-api.js', ...args], { env: childEnv(env) });
  async function cliJson<T>(args: string[]): Promise<T> {
    const result = await cli(args);
    expect(result.stderr, `stderr of ${args.join(' ')}`).toBe('');
    expect(result.code, `exit code of ${args.join(' ')}`).toBe(0);
    return JSON.parse(result.stdout) as T;
  }
  /** A refused command: exit 1 (2 for usage errors), nothing on stdout, one line on stderr, no stack trace. */
  async function failure(args: string[], code = 1): Promise<string> {
    const result = await cli(args);
    expect(result.code, result.stderr).toBe(code);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).not.toContain(stackFrame);
    return result.stderr.trim();
  }

  beforeAll(async () => {
    await ensureBuilt();
    alice = await cliJson(['customers', 'create', '--name', 'Alice Ltd']);
    bob = await cliJson(['customers', 'create', '--name', 'Bob GmbH']);
  }, processTestTimeoutMs);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('lists the documented default schedule as one JSON object', async () => {
    const { data } = await cliJson<{ data: ScheduleOutput[] }>(['fees', 'list']);
    expect(data.map((row) => [row.payment_scheme, row.currency, row.flat_fee, row.percentage, row.min_fee, row.max_fee])).toEqual(defaultSchedule);
    for (const row of data) {
      expect(row.id).toMatch(uuidPattern);
      expect(row).toMatchObject({ scope: 'default', customer_id: null, transaction_type: 'payment', name: `Default ${row.payment_scheme} ${row.currency}`, umbrella_link_id: null });
    }
  });

  it("sets a customer's schedule, which its quotes then use while other customers keep the default", async () => {
    const set = await cliJson<ScheduleOutput>([
      'fees', 'set', '--customer', alice.id, '--scheme', 'SWIFT', '--currency', 'EUR', '--transaction-type', 'payment',
      '--flat', '1', '--percentage', '0.05', '--min', '2.50', '--max', '25', '--name', 'Alice SWIFT',
    ]);
    expect(set).toMatchObject({
      scope: 'customer',
      customer_id: alice.id,
      name: 'Alice SWIFT',
      transaction_type: 'payment',
      payment_scheme: 'SWIFT',
      currency: 'EUR',
      flat_fee: '1.00',
      percentage: '0.05',
      min_fee: '2.50',
      max_fee: '25.00',
      umbrella_link_id: null,
    });
    expect(set.id).toMatch(uuidPattern);

    const aliceList = await cliJson<{ data: ScheduleOutput[] }>(['fees', 'list', '--customer', alice.id]);
    expect(aliceList.data).toHaveLength(defaultSchedule.length);
    expect(aliceList.data.find((row) => row.payment_scheme === 'SWIFT' && row.currency === 'EUR')).toEqual(set);
    const bobList = await cliJson<{ data: ScheduleOutput[] }>(['fees', 'list', '--customer', bob.id]);
    expect(bobList.data.every((row) => row.scope === 'default')).toBe(true);

    // The rows the CLI wrote are the ones the server's quote (preview and payment) reads.
    const storage = await openStorage({ dataDir, databaseUrl: undefined, databasePoolSize: 1 });
    try {
      const fees = new FeeService(storage, systemClock, new ReadCaches(systemClock));
      const input = { amountMinor: 10_000_00n, currency: 'EUR', transactionType: 'payment', paymentScheme: 'SWIFT' } as const;
      const own = await fees.quote({ ...input, customerId: alice.id });
      // 1.00 flat + 0.05 % of 10,000.00 = 6.00.
      expect(own).toMatchObject({ feeMinor: 600n, scheduleId: set.id, scheduleName: 'Alice SWIFT', breakdown: { minApplied: false, maxApplied: false } });
      const other = await fees.quote({ ...input, customerId: bob.id });
      // The default: 0.1 % of 10,000.00 = 10.00.
      expect(other).toMatchObject({ feeMinor: 1000n, scheduleName: 'Default SWIFT EUR' });
    } finally {
      await storage.close();
    }
  });

  it('replaces the same row when set again, matching scheme and currency in any case', async () => {
    const first = await cliJson<ScheduleOutput>(['fees', 'set', '--customer', bob.id, '--scheme', 'ach', '--currency', 'usd', '--flat', '0.10']);
    const second = await cliJson<ScheduleOutput>(['fees', 'set', '--customer', bob.id, '--scheme', 'ACH', '--currency', 'USD', '--percentage', '1.5', '--umbrella-link-id', '7a3c1e2b-9f4d-4e6a-8b1c-2d3e4f5a6b7c']);
    expect(second.id).toBe(first.id);
    expect(first).toMatchObject({ name: 'Custom ACH USD', payment_scheme: 'ACH', currency: 'USD', flat_fee: '0.10', percentage: '0' });
    expect(second).toMatchObject({ flat_fee: '0.00', percentage: '1.5', min_fee: null, max_fee: null, umbrella_link_id: '7a3c1e2b-9f4d-4e6a-8b1c-2d3e4f5a6b7c' });
  });

  it.each([
    [['--flat', '0.001'], '--flat "0.001" must have at most 2 decimal places (EUR)'],
    [['--flat', '-1'], '--flat "-1" must not be negative'],
    [['--flat', '1e2'], '--flat "1e2" must be a decimal number'],
    [['--flat', '10000000.01'], '--flat "10000000.01" must be at most 10000000'],
    [['--min', 'abc'], '--min "abc" must be a decimal number'],
    [['--percentage', '0.00001'], '--percentage "0.00001" must be a percent from 0 to 100 with at most 4 decimals'],
    [['--percentage', '101'], '--percentage "101" must be a percent from 0 to 100'],
    [['--min', '10', '--max', '5'], '--min 10 must not be above --max 5'],
    [['--scheme', 'BACS'], '--scheme "BACS" must be one of SEPA, SEPA_INSTANT, FASTER_PAYMENTS, SWIFT, ACH, INTERNAL'],
    [['--currency', 'CHF'], '--currency "CHF" must be one of USD, EUR, GBP'],
    [['--currency', 'USD'], '--scheme SEPA carries EUR only, not USD'],
    [['--transaction-type', 'refund'], '--transaction-type "refund" must be one of payment'],
    [['--name', ' '], '--name must be 1-100 characters'],
    [['--umbrella-link-id', 'nope'], '--umbrella-link-id "nope" is not a UUID'],
  ])('refuses %j with one line on stderr and exit code 1', async (extra, message) => {
    const options: Record<string, string> = { '--customer': alice.id, '--scheme': 'SEPA', '--currency': 'EUR' };
    for (let index = 0; index < extra.length; index += 2) options[extra[index] as string] = extra[index + 1] as string;
    const args = ['fees', 'set', ...Object.entries(options).flat()];
    expect(await failure(args)).toContain(message);
  });

  it('refuses an unknown customer, and leaves the schedule unchanged after every refusal', async () => {
    expect(await failure(['fees', 'set', '--customer', '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f', '--scheme', 'SEPA', '--currency', 'EUR'])).toContain('no customer with id');
    expect(await failure(['fees', 'list', '--customer', 'nobody'])).toContain('no customer with id nobody');
    const { data } = await cliJson<{ data: ScheduleOutput[] }>(['fees', 'list', '--customer', alice.id]);
    expect(data.filter((row) => row.scope === 'customer').map((row) => `${row.payment_scheme} ${row.currency}`)).toEqual(['SWIFT EUR']);
  });

  it('refuses a missing required option as a usage error', async () => {
    expect(await failure(['fees', 'set', '--customer', alice.id, '--currency', 'EUR'], 2)).toContain("required option '--scheme <scheme>'");
  });
});
