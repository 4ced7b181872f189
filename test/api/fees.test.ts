import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDecimal } from '../../src/ledger/money.js';
import { feeScheduleCacheTtlMs } from '../../src/config/limits.js';
import { FeeService } from '../../src/modules/fees/service.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createPayee, deposit, failingPaths, pay } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** docs/spec.md §2 fee preview result. */
const resultFields = ['fee_amount', 'fee_currency', 'schedule_id', 'schedule_name', 'umbrella_link_id', 'goat_member_code', 'breakdown'].sort();
const breakdownFields = ['flat_fee', 'percentage_fee', 'percentage_amount', 'raw_total', 'min_applied', 'max_applied'].sort();

/** The default schedule of docs/fees.md, seeded by migration 0004 with these ids. */
const defaults = {
  SEPA_EUR: 'd01ef137-c089-4eba-8638-3959ca06af98',
  SWIFT_EUR: 'ffc0e33e-ca6d-43ef-bc3a-8c2f93f2f8f0',
  INTERNAL_GBP: '223ef066-c94a-40f9-850c-1d29f9e4479d',
};

describe('fees', () => {
  let t: TestApp;
  let fees: FeeService;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let carol: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    fees = new FeeService(t.storage, t.clock, t.app.caches);
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    carol = await t.createCustomer('Carol SA');
  });
  afterAll(async () => t.close());

  const preview = (customer: TestCustomer, body: unknown, url = '/fees/preview') =>
    t.request({ method: 'POST', url, key: customer.key, csrf: true, body });
  const previewOk = async (customer: TestCustomer, body: Record<string, unknown>) => {
    const response = await preview(customer, body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  };

  describe('POST /fees/preview', () => {
    it('returns every field of the spec §2 result, typed as the spec says, from the default schedule', async () => {
      const response = await preview(alice, { amount: 100, currency: 'EUR', transactionType: 'payment', paymentScheme: 'SEPA' });
      expect(response.statusCode).toBe(200);
      const result = response.json().data;
      expect(Object.keys(response.json())).toEqual(['data']);
      expect(Object.keys(result).sort()).toEqual(resultFields);
      expect(Object.keys(result.breakdown).sort()).toEqual(breakdownFields);
      expect(result).toEqual({
        fee_amount: 0.2,
        fee_currency: 'EUR',
        schedule_id: defaults.SEPA_EUR,
        schedule_name: 'Default SEPA EUR',
        umbrella_link_id: null,
        goat_member_code: null,
        breakdown: { flat_fee: 0.2, percentage_fee: 0, percentage_amount: 0, raw_total: 0.2, min_applied: false, max_applied: false },
      });
      expect(result.schedule_id).toMatch(uuidPattern);
      for (const field of ['flat_fee', 'percentage_fee', 'percentage_amount', 'raw_total']) expect(typeof result.breakdown[field], field).toBe('number');
      for (const field of ['min_applied', 'max_applied']) expect(typeof result.breakdown[field], field).toBe('boolean');
      expect(typeof result.fee_amount).toBe('number');
      expect(typeof result.fee_currency).toBe('string');
      expect(typeof result.schedule_name).toBe('string');
      // Money is a plain JSON number in major units, never a string or an exponent.
      expect(response.body).toContain('"fee_amount":0.2,');
    });

    it.each([
      // scheme, currency, amount, fee, flat, percentage, percentage amount, raw total, min applied, max applied
      ['SEPA', 'EUR', 1000, 0.2, 0.2, 0, 0, 0.2, false, false],
      ['SEPA_INSTANT', 'EUR', 1000, 0.5, 0.5, 0, 0, 0.5, false, false],
      ['FASTER_PAYMENTS', 'GBP', 1000, 0.2, 0.2, 0, 0, 0.2, false, false],
      ['ACH', 'USD', 1000, 0.25, 0.25, 0, 0, 0.25, false, false],
      ['SWIFT', 'EUR', 1000, 5, 0, 0.1, 1, 1, true, false],
      ['SWIFT', 'GBP', 20000, 20, 0, 0.1, 20, 20, false, false],
      ['SWIFT', 'USD', 60000, 50, 0, 0.1, 60, 60, false, true],
      ['INTERNAL', 'EUR', 1000, 0, 0, 0, 0, 0, false, false],
      ['INTERNAL', 'GBP', 1000, 0, 0, 0, 0, 0, false, false],
      ['INTERNAL', 'USD', 1000, 0, 0, 0, 0, 0, false, false],
    ])('prices %s %s per the documented default schedule', async (scheme, currency, amount, fee, flat, percentage, percentageAmount, rawTotal, minApplied, maxApplied) => {
      const result = await previewOk(alice, { amount, currency, transactionType: 'payment', paymentScheme: scheme });
      expect(result).toMatchObject({
        fee_amount: fee,
        fee_currency: currency,
        schedule_name: `Default ${scheme} ${currency}`,
        breakdown: { flat_fee: flat, percentage_fee: percentage, percentage_amount: percentageAmount, raw_total: rawTotal, min_applied: minApplied, max_applied: maxApplied },
      });
    });

    it('raises a SWIFT fee below the minimum to 5.00 and says so', async () => {
      const result = await previewOk(alice, { amount: 100, currency: 'EUR', paymentScheme: 'SWIFT' });
      expect(result.schedule_id).toBe(defaults.SWIFT_EUR);
      expect(result.fee_amount).toBe(5);
      expect(result.breakdown).toEqual({ flat_fee: 0, percentage_fee: 0.1, percentage_amount: 0.1, raw_total: 0.1, min_applied: true, max_applied: false });
    });

    it('caps a SWIFT fee above the maximum at 50.00 and says so', async () => {
      const result = await previewOk(alice, { amount: 10_000_000, currency: 'EUR', paymentScheme: 'SWIFT' });
      expect(result.fee_amount).toBe(50);
      expect(result.breakdown).toEqual({ flat_fee: 0, percentage_fee: 0.1, percentage_amount: 10_000, raw_total: 10_000, min_applied: false, max_applied: true });
    });

    it('applies neither bound at exactly the minimum or the maximum', async () => {
      const atMin = await previewOk(alice, { amount: 5000, currency: 'EUR', paymentScheme: 'SWIFT' });
      expect(atMin).toMatchObject({ fee_amount: 5, breakdown: { raw_total: 5, min_applied: false, max_applied: false } });
      const atMax = await previewOk(alice, { amount: 50_000, currency: 'EUR', paymentScheme: 'SWIFT' });
      expect(atMax).toMatchObject({ fee_amount: 50, breakdown: { raw_total: 50, min_applied: false, max_applied: false } });
    });

    it('takes transactionType as optional, defaulting to payment', async () => {
      const without = await previewOk(alice, { amount: 12.34, currency: 'GBP', paymentScheme: 'FASTER_PAYMENTS' });
      const withType = await previewOk(alice, { amount: 12.34, currency: 'GBP', paymentScheme: 'FASTER_PAYMENTS', transactionType: 'payment' });
      expect(without).toEqual(withType);
    });

    it('defaults the scheme when none is given, as a payment does: the currency’s first rail', async () => {
      expect(await previewOk(alice, { amount: 100, currency: 'EUR', transactionType: 'payment' })).toMatchObject({ schedule_name: 'Default SEPA EUR', fee_amount: 0.2 });
      expect(await previewOk(alice, { amount: 100, currency: 'GBP' })).toMatchObject({ schedule_name: 'Default FASTER_PAYMENTS GBP' });
      expect(await previewOk(alice, { amount: 100, currency: 'USD' })).toMatchObject({ schedule_name: 'Default ACH USD' });
    });

    describe('the same body previews the fee the payment is charged', () => {
      const setup = async () => {
        const from = await createFiatAccount(t, carol, { accountName: 'Source', currency: 'EUR' });
        const to = await createFiatAccount(t, carol, { accountName: 'Target', currency: 'EUR' });
        await deposit(t, carol, from.id, 100_000);
        const sepaPayee = await createPayee(t, carol, 'EUR');
        const swiftPayee = (
          await t.request({
            method: 'POST',
            url: '/payees',
            key: carol.key,
            csrf: true,
            body: { name: 'Ankara Ltd', address: { line1: 'x', city: 'Ankara', country: 'TR' }, bankDetails: { iban: 'TR330006100519786457841326', bic: 'AKBKTRIS' } },
          })
        ).json<{ data: { id: string } }>().data;
        return { from, to, sepaPayee, swiftPayee };
      };
      type Fixture = Awaited<ReturnType<typeof setup>>;

      it.each([
        ['a SEPA payee without a scheme', (f: Fixture) => ({ payeeId: f.sepaPayee.id }), 0.2],
        ['a SEPA payee with SEPA_INSTANT', (f: Fixture) => ({ payeeId: f.sepaPayee.id, paymentScheme: 'sepa_instant' }), 0.5],
        ['a payee outside SEPA (SWIFT only)', (f: Fixture) => ({ payeeId: f.swiftPayee.id }), 12.35],
        ['one of your own accounts (INTERNAL)', (f: Fixture) => ({ toAccountId: f.to.id }), 0],
      ])('%s', async (_label, target, expectedFee) => {
        const fixture = await setup();
        const body = { fromAccountId: fixture.from.id, amount: 12_345.67, currency: 'EUR', reference: 'parity', ...target(fixture) };
        const previewed = await previewOk(carol, body);
        expect(previewed.fee_amount).toBe(expectedFee);
        const paid = await pay(t, carol, body);
        const payment = (await t.request({ url: `/payments/${paid.id}`, key: carol.key })).json().data;
        expect(Number(payment.fee)).toBe(previewed.fee_amount);
      });
    });

    it('refuses a scheme the payee has no rail for, and another customer’s payee as unknown', async () => {
      const payee = await createPayee(t, bob, 'EUR');
      const wrongRail = await preview(bob, { amount: 10, currency: 'EUR', payeeId: payee.id, paymentScheme: 'INTERNAL' });
      expect(wrongRail.statusCode).toBe(400);
      expect(failingPaths(wrongRail)).toEqual(['/paymentScheme']);
      const foreign = await preview(alice, { amount: 10, currency: 'EUR', payeeId: payee.id });
      expect(foreign.statusCode).toBe(404);
      const both = await preview(bob, { amount: 10, currency: 'EUR', payeeId: payee.id, toAccountId: payee.id });
      expect(both.statusCode).toBe(400);
      expect(failingPaths(both).sort()).toEqual(['/payeeId', '/toAccountId']);
      const mismatch = await preview(bob, { amount: 10, currency: 'GBP', payeeId: payee.id });
      expect(mismatch.statusCode).toBe(422);
      expect(mismatch.json().error.code).toBe('CURRENCY_MISMATCH');
    });

    it('answers the same under /v1 and /v2', async () => {
      const body = { amount: 250, currency: 'USD', paymentScheme: 'ACH' };
      const plain = await previewOk(alice, body);
      for (const url of ['/v1/fees/preview', '/v2/fees/preview']) {
        const response = await preview(alice, body, url);
        expect(response.statusCode).toBe(200);
        expect(response.json().data).toEqual(plain);
      }
    });
  });

  describe('the schedule cache', () => {
    it('applies a schedule set through this process at once, and one set by another process within 5 s', async () => {
      const dana = await t.createCustomer('Dana Ltd');
      const quote = async () => (await previewOk(dana, { amount: 100, currency: 'EUR', paymentScheme: 'SEPA' })).fee_amount;
      expect(await quote()).toBe(0.2);
      await fees.setSchedule({ customerId: dana.id, paymentScheme: 'SEPA', currency: 'EUR', flat: '0.30' });
      expect(await quote()).toBe(0.3);
      // What `customer-api fees set` does from its own process: the row changes, this process is not told.
      await t.storage.db.updateTable('fee_schedules').set({ flat_fee_minor: 40n }).where('customer_id', '=', dana.id).execute();
      expect(await quote()).toBe(0.3);
      t.clock.advance(feeScheduleCacheTtlMs);
      expect(await quote()).toBe(0.4);
    });
  });

  describe('customer schedules', () => {
    it("prices a customer by its own schedule row, and every other customer still by the default", async () => {
      const set = await fees.setSchedule({
        customerId: alice.id,
        paymentScheme: 'SEPA',
        currency: 'EUR',
        flat: '0.10',
        percentage: '0.05',
        min: '0.15',
        max: '2.00',
        name: 'Alice SEPA',
        umbrellaLinkId: '7A3C1E2B-9F4D-4E6A-8B1C-2D3E4F5A6B7C',
      });
      expect(set).toMatchObject({ scope: 'customer', customer_id: alice.id, flat_fee: '0.10', percentage: '0.05', min_fee: '0.15', max_fee: '2.00' });

      const own = await previewOk(alice, { amount: 1000, currency: 'EUR', paymentScheme: 'SEPA' });
      expect(own).toEqual({
        fee_amount: 0.6,
        fee_currency: 'EUR',
        schedule_id: set.id,
        schedule_name: 'Alice SEPA',
        umbrella_link_id: '7a3c1e2b-9f4d-4e6a-8b1c-2d3e4f5a6b7c',
        goat_member_code: null,
        breakdown: { flat_fee: 0.1, percentage_fee: 0.05, percentage_amount: 0.5, raw_total: 0.6, min_applied: false, max_applied: false },
      });
      expect(own.schedule_id).not.toBe(defaults.SEPA_EUR);
      expect((await previewOk(alice, { amount: 1, currency: 'EUR', paymentScheme: 'SEPA' })).breakdown).toMatchObject({ raw_total: 0.1, min_applied: true });
      expect((await previewOk(alice, { amount: 10_000, currency: 'EUR', paymentScheme: 'SEPA' })).fee_amount).toBe(2);

      const other = await previewOk(bob, { amount: 1000, currency: 'EUR', paymentScheme: 'SEPA' });
      expect(other).toMatchObject({ fee_amount: 0.2, schedule_id: defaults.SEPA_EUR, schedule_name: 'Default SEPA EUR', umbrella_link_id: null });
      // Alice's other schemes keep the default.
      expect((await previewOk(alice, { amount: 1000, currency: 'EUR', paymentScheme: 'SEPA_INSTANT' })).schedule_name).toBe('Default SEPA_INSTANT EUR');
    });

    it("replaces a customer's row in place when set again: same schedule_id, new terms, omitted terms reset", async () => {
      const first = await fees.setSchedule({ customerId: bob.id, paymentScheme: 'SWIFT', currency: 'USD', percentage: '0.2', min: '10', max: '100' });
      t.clock.advance(1000);
      const second = await fees.setSchedule({ customerId: bob.id, paymentScheme: 'swift', currency: 'usd', flat: '1.5' });
      expect(second.id).toBe(first.id);
      expect(second.created_at).toBe(first.created_at);
      expect(second.updated_at > first.updated_at).toBe(true);
      expect(second).toMatchObject({ name: 'Custom SWIFT USD', flat_fee: '1.50', percentage: '0', min_fee: null, max_fee: null });
      const rows = await t.storage.db.selectFrom('fee_schedules').selectAll().where('customer_id', '=', bob.id).execute();
      expect(rows).toHaveLength(1);
      expect(await previewOk(bob, { amount: 1_000_000, currency: 'USD', paymentScheme: 'SWIFT' })).toMatchObject({ fee_amount: 1.5, schedule_id: first.id });
    });

    it("lists a customer's effective schedule: its own rows where it has them, the default elsewhere", async () => {
      const defaultList = await fees.listSchedules();
      expect(defaultList).toHaveLength(10);
      expect(defaultList.every((row) => row.scope === 'default' && row.customer_id === null)).toBe(true);
      const aliceList = await fees.listSchedules(alice.id);
      expect(aliceList).toHaveLength(10);
      const sepa = aliceList.find((row) => row.payment_scheme === 'SEPA' && row.currency === 'EUR');
      expect(sepa).toMatchObject({ scope: 'customer', customer_id: alice.id, name: 'Alice SEPA' });
      expect(aliceList.filter((row) => row.scope === 'customer')).toHaveLength(1);
    });

    it('refuses schedules an operator could not have meant', async () => {
      const base = { customerId: carol.id, paymentScheme: 'SWIFT', currency: 'EUR' };
      await expect(fees.setSchedule({ ...base, min: '10', max: '5' })).rejects.toThrow('--min 10 must not be above --max 5');
      await expect(fees.setSchedule({ ...base, flat: '0.001' })).rejects.toThrow('--flat "0.001" must have at most 2 decimal places (EUR)');
      await expect(fees.setSchedule({ ...base, flat: '-1' })).rejects.toThrow('--flat');
      await expect(fees.setSchedule({ ...base, percentage: '100.01' })).rejects.toThrow('--percentage');
      await expect(fees.setSchedule({ ...base, paymentScheme: 'SEPA', currency: 'USD' })).rejects.toThrow('--scheme SEPA carries EUR only, not USD');
      await expect(fees.setSchedule({ ...base, customerId: '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f' })).rejects.toThrow('no customer with id');
      expect(await t.storage.db.selectFrom('fee_schedules').selectAll().where('customer_id', '=', carol.id).execute()).toEqual([]);
    });
  });

  describe('exact arithmetic', () => {
    beforeAll(async () => {
      await fees.setSchedule({ customerId: carol.id, paymentScheme: 'INTERNAL', currency: 'EUR', percentage: '0.25' });
      await fees.setSchedule({ customerId: carol.id, paymentScheme: 'ACH', currency: 'USD', percentage: '0.1' });
      await fees.setSchedule({ customerId: carol.id, paymentScheme: 'SWIFT', currency: 'GBP', percentage: '0.3333', flat: '0.01' });
    });

    it.each([
      // 0.25 % of 0.02 EUR is 0.00005 EUR: rounds to 0.
      [0.02, 0],
      // 0.25 % of 1.98 is 0.495 cent → 0; of 2.00 exactly half a cent → 1 cent (half-up); of 2.02 0.505 → 1.
      [1.98, 0],
      [2, 0.01],
      [2.02, 0.01],
      [5.99, 0.01],
      [6, 0.02],
    ])('rounds 0.25 %% of %s EUR half-up to %s', async (amount, expected) => {
      const result = await previewOk(carol, { amount, currency: 'EUR', paymentScheme: 'INTERNAL' });
      expect(result.breakdown.percentage_amount).toBe(expected);
      expect(result.fee_amount).toBe(expected);
    });

    it('rounds where doubles would not: 0.1 % of 5.05 USD is 0.505 cent → 0.01', async () => {
      const result = await previewOk(carol, { amount: 5.05, currency: 'USD', paymentScheme: 'ACH' });
      expect(result).toMatchObject({ fee_amount: 0.01, breakdown: { percentage_fee: 0.1, percentage_amount: 0.01, raw_total: 0.01 } });
    });

    it('is exact at the largest amount', async () => {
      // 0.3333 % of 9,999,999.99 = 33,329.99996667 → 33,330.00; plus 0.01 flat.
      const result = await previewOk(carol, { amount: 9_999_999.99, currency: 'GBP', paymentScheme: 'SWIFT' });
      expect(result).toMatchObject({ fee_amount: 33_330.01, breakdown: { percentage_fee: 0.3333, percentage_amount: 33_330, raw_total: 33_330.01 } });
    });

    it('quotes a payment exactly the fee its preview shows (FeeService.quote, the code payments call)', async () => {
      for (const [customer, amount, currency, paymentScheme] of [
        [carol, 9_999_999.99, 'GBP', 'SWIFT'],
        [alice, 1234.56, 'EUR', 'SEPA'],
        [bob, 77.7, 'EUR', 'SWIFT'],
      ] as const) {
        const shown = await previewOk(customer, { amount, currency, paymentScheme });
        const quote = await fees.quote({ customerId: customer.id, amountMinor: BigInt(Math.round(amount * 100)), currency, transactionType: 'payment', paymentScheme });
        expect(formatDecimal(quote.feeMinor, currency)).toBe(shown.fee_amount.toFixed(2));
        expect(quote.scheduleId).toBe(shown.schedule_id);
      }
    });
  });

  describe('validation', () => {
    const valid = { amount: 10, currency: 'EUR', transactionType: 'payment', paymentScheme: 'SEPA' };

    it.each([[0.01], [1], [10_000_000], [9_999_999.99]])('accepts the amount %s', async (amount) => {
      expect((await preview(alice, { ...valid, amount })).statusCode).toBe(200);
    });

    it.each([
      ['0', 0],
      ['10000000.01', 10_000_000.01],
      ['1.234', 1.234],
      ['0.001', 0.001],
      ['1e-7', 1e-7],
      ['0.1 + 0.2', 0.1 + 0.2],
      ['-1', -1],
      ['-0.01', -0.01],
      ['the string "10"', '10'],
      ['null', null],
      ['true', true],
      ['an object', { value: 10 }],
    ])('refuses the amount %s with 400 on /amount', async (_label, amount) => {
      const response = await preview(alice, { ...valid, amount });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'body', path: '/amount' })]);
    });

    it('explains an amount with too many decimals', async () => {
      const response = await preview(alice, { ...valid, amount: 1.234 });
      expect(response.json().error.details.fields).toEqual([{ location: 'body', path: '/amount', reason: 'must have at most 2 decimal places (EUR)' }]);
    });

    it.each([
      ['currency', 'CHF'],
      ['paymentScheme', 'BACS'],
      ['transactionType', 'refund'],
      ['currency', 1],
    ])('refuses %s %j with 400 naming the field', async (field, value) => {
      const response = await preview(alice, { ...valid, [field]: value });
      expect(response.statusCode).toBe(400);
      expect(failingPaths(response)).toEqual([`/${field}`]);
    });

    it.each([
      ['SEPA', 'USD'],
      ['SEPA_INSTANT', 'GBP'],
      ['FASTER_PAYMENTS', 'EUR'],
      ['ACH', 'EUR'],
    ])('refuses %s in %s, a currency the scheme does not carry', async (paymentScheme, currency) => {
      const response = await preview(alice, { ...valid, paymentScheme, currency });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields).toEqual([expect.objectContaining({ path: '/paymentScheme', reason: expect.stringContaining(`not ${currency}`) })]);
    });

    it('lists every missing required field at once, and refuses unknown fields', async () => {
      const empty = await preview(alice, {});
      expect(empty.statusCode).toBe(400);
      expect(failingPaths(empty).sort()).toEqual(['/amount', '/currency']);
      const extra = await preview(alice, { ...valid, feeCurrency: 'EUR' });
      expect(extra.statusCode).toBe(400);
      expect(failingPaths(extra)).toEqual(['/feeCurrency']);
    });

    it('reports a bad amount and a bad scheme-currency pair together', async () => {
      const response = await preview(alice, { ...valid, amount: 1.234, paymentScheme: 'ACH' });
      expect(failingPaths(response).sort()).toEqual(['/amount', '/paymentScheme']);
    });
  });

  describe('authentication', () => {
    const body = { amount: 10, currency: 'EUR', paymentScheme: 'SEPA' };

    it('answers 401 without a key', async () => {
      const response = await t.request({ method: 'POST', url: '/fees/preview', body });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe('UNAUTHENTICATED');
    });

    it('answers 401 with an unknown key', async () => {
      const response = await t.request({ method: 'POST', url: '/fees/preview', key: 'sk_test_unknown', body });
      expect(response.statusCode).toBe(401);
    });

    it('answers 403 without a CSRF token, although the preview changes nothing', async () => {
      const response = await t.request({ method: 'POST', url: '/fees/preview', key: alice.key, body });
      expect(response.statusCode).toBe(403);
      expect(response.json().error.code).toBe('CSRF_TOKEN_INVALID');
    });

    it('answers 403 with a CSRF token fetched by another key', async () => {
      const response = await t.request({ method: 'POST', url: '/fees/preview', key: alice.key, csrf: await t.csrfToken(bob.key), body });
      expect(response.statusCode).toBe(403);
      expect(response.json().error.code).toBe('CSRF_TOKEN_INVALID');
    });

    it('needs scope fees:read, which fees:write also grants', async () => {
      for (const scope of ['fees:read', 'fees:write'] as const) {
        const { key } = await t.createKey(alice.id, { scopes: [scope] });
        const response = await t.request({ method: 'POST', url: '/fees/preview', key, csrf: true, body });
        expect(response.statusCode, scope).toBe(200);
      }
      const { key } = await t.createKey(alice.id, { scopes: ['payments:write'] });
      const refused = await t.request({ method: 'POST', url: '/fees/preview', key, csrf: true, body });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'fees:read' } });
    });
  });

  it('documents the operation in the OpenAPI document, with 200 and 422', async () => {
    const doc = (await t.request({ url: '/openapi.json' })).json();
    const operation = doc.paths['/fees/preview'].post;
    for (const status of ['200', '400', '401', '403', '422', '429']) expect(operation.responses[status], status).toBeDefined();
    const schemaName = String(operation.requestBody.content['application/json'].schema.$ref).split('/').pop()!;
    expect([...doc.components.schemas[schemaName].required].sort()).toEqual(['amount', 'currency']);
  });

  // Last: it removes a default row from this test database.
  it('answers 422 FEE_SCHEDULE_NOT_FOUND when neither the customer nor the default schedule has a row', async () => {
    await t.storage.db.deleteFrom('fee_schedules').where('id', '=', defaults.INTERNAL_GBP).execute();
    const response = await preview(bob, { amount: 10, currency: 'GBP', paymentScheme: 'INTERNAL' });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toEqual({
      code: 'FEE_SCHEDULE_NOT_FOUND',
      message: 'No fee schedule prices a payment over INTERNAL in GBP.',
      details: { transaction_type: 'payment', payment_scheme: 'INTERNAL', currency: 'GBP' },
    });
    // A customer's own row needs no default row.
    await fees.setSchedule({ customerId: bob.id, paymentScheme: 'INTERNAL', currency: 'GBP', flat: '0.05' });
    expect((await previewOk(bob, { amount: 10, currency: 'GBP', paymentScheme: 'INTERNAL' })).fee_amount).toBe(0.05);
  });
});
