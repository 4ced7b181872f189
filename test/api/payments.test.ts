import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { FeeService } from '../../src/modules/fees/service.js';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import {
  createPayee,
  createVirtualAccount,
  deposit,
  failingPaths,
  fiatBalance,
  moneySnapshot,
  outboxEvents,
  pay,
  payRequest,
  paymentCreatedFields,
  settle,
  settleRequest,
  timestampPattern,
  transactionFields,
  uuidPattern,
  virtualBalance,
} from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '3c9e1b7a-5d2f-4e8c-9a1b-2c3d4e5f6a7b';

type Account = Awaited<ReturnType<typeof createFiatAccount>>;

/** Every field GET /payments/{id} answers: the spec §2 creation fields and the additive ones (docs/payments.md). */
const paymentFields = [
  ...paymentCreatedFields, 'fee', 'paymentScheme', 'fromAccountId', 'fromAccountType', 'toAccountId', 'payeeId',
  'transactionId', 'failureReason', 'completedAt', 'updatedAt',
].sort();

async function transaction(t: TestApp, customer: TestCustomer, id: string) {
  const response = await t.request({ url: `/transactions/${id}`, key: customer.key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as Record<string, any>;
}

async function payment(t: TestApp, customer: TestCustomer, id: string) {
  const response = await t.request({ url: `/payments/${id}`, key: customer.key });
  expect(response.statusCode, response.body).toBe(200);
  return response.json().data as Record<string, any>;
}

async function incomingRecordsOf(t: TestApp, paymentId: string) {
  return t.storage.db.selectFrom('transactions').selectAll().where('payment_id', '=', paymentId).where('direction', '=', 'incoming').execute();
}

async function expectLedgerVerifies(t: TestApp) {
  const report = await verifyLedger(t.storage);
  expect(report.problems).toEqual([]);
  expect(report.ok).toBe(true);
  return report;
}

describe('payments', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  /** Alice: a funded EUR account, a second EUR account, GBP and USD accounts, and a payee per currency. */
  let eur: Account;
  let eur2: Account;
  let gbp: Account;
  let usd: Account;
  let eurPayee: { id: string };
  let gbpPayee: { id: string };
  let usdPayee: { id: string };
  let bobsEur: Account;
  let bobsPayee: { id: string };

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    eur = await createFiatAccount(t, alice, { accountName: 'Main EUR', currency: 'EUR' });
    eur2 = await createFiatAccount(t, alice, { accountName: 'Second EUR', currency: 'EUR' });
    gbp = await createFiatAccount(t, alice, { accountName: 'Sterling', currency: 'GBP', ibanCountry: 'GB' });
    usd = await createFiatAccount(t, alice, { accountName: 'Dollars', currency: 'USD' });
    eurPayee = await createPayee(t, alice, 'EUR');
    gbpPayee = await createPayee(t, alice, 'GBP');
    usdPayee = await createPayee(t, alice, 'USD');
    bobsEur = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    bobsPayee = await createPayee(t, bob, 'EUR');
    await deposit(t, alice, eur.id, 5_000_000);
    await deposit(t, alice, gbp.id, 100_000);
    await deposit(t, alice, usd.id, 100_000);
    await deposit(t, bob, bobsEur.id, 1_000);
  });
  afterAll(async () => t.close());

  const toPayee = (overrides: Record<string, unknown> = {}) => ({ fromAccountId: eur.id, payeeId: eurPayee.id, amount: 10.5, currency: 'EUR', reference: 'Invoice 42', ...overrides });
  const internal = (overrides: Record<string, unknown> = {}) => ({ fromAccountId: eur.id, toAccountId: eur2.id, amount: 10, currency: 'EUR', reference: 'Sweep', ...overrides });

  describe('POST /payments', () => {
    it('gives the payment and its history record time-ordered ids: UUID version 7 stamped with the creation time', async () => {
      const before = Date.now();
      const response = await payRequest(t, alice, internal({ amount: 1 }));
      const after = Date.now();
      expect(response.statusCode).toBe(201);
      const { id: paymentId } = response.json().data;
      const { transactionId } = (await t.request({ url: `/payments/${paymentId}`, key: alice.key })).json().data;
      for (const id of [paymentId, transactionId] as string[]) {
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        const stampedMs = Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
        expect(stampedMs).toBeGreaterThanOrEqual(before);
        expect(stampedMs).toBeLessThanOrEqual(after);
      }
    });

    it('answers 201 with exactly the spec §2 payment record: camelCase, amount a decimal string, status pending', async () => {
      const response = await payRequest(t, alice, toPayee());
      expect(response.statusCode).toBe(201);
      expect(Object.keys(response.json())).toEqual(['data']);
      const created = response.json().data;
      expect(Object.keys(created).sort()).toEqual(paymentCreatedFields);
      expect(created.id).toMatch(uuidPattern);
      expect(created.frPaymentId).toMatch(/^pmt_[0-9a-f]+$/);
      expect(created.status).toBe('pending');
      expect(created.amount).toBe('10.50');
      expect(created.currency).toBe('EUR');
      expect(created.reference).toBe('Invoice 42');
      expect(created.transactionType).toBe('payment');
      expect(created.createdAt).toMatch(timestampPattern);
      expect(created.createdAt).toBe(t.clock.now().toISOString());
    });

    it.each([
      [10, '10.00'],
      [0.01, '0.01'],
      [0.1, '0.10'],
      [1234567.89, '1234567.89'],
    ])('formats the amount %s as the decimal string %s', async (amount, text) => {
      const created = await pay(t, alice, internal({ amount }));
      expect(created.amount).toBe(text);
    });

    it('reserves amount plus fee at creation and writes the outgoing, pending transaction record', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const created = await pay(t, alice, toPayee({ amount: 100, reference: 'Reserved' }));
      // Default SEPA EUR fee: 0.20 (docs/fees.md).
      expect(await fiatBalance(t, alice, eur.id)).toBe(Math.round((before - 100.2) * 100) / 100);

      const full = await payment(t, alice, created.id);
      expect(Object.keys(full).sort()).toEqual(paymentFields);
      expect(full).toMatchObject({
        ...created,
        fee: '0.20',
        paymentScheme: 'SEPA',
        fromAccountId: eur.id,
        fromAccountType: 'FIAT_ACCOUNT',
        toAccountId: null,
        payeeId: eurPayee.id,
        failureReason: null,
        completedAt: null,
        updatedAt: created.createdAt,
      });
      expect(full.transactionId).toMatch(uuidPattern);

      const record = await transaction(t, alice, full.transactionId);
      expect(Object.keys(record).sort()).toEqual(transactionFields);
      expect(record).toMatchObject({
        transaction_type: 'payment',
        amount: 100,
        currency: 'EUR',
        status: 'pending',
        direction: 'outgoing',
        from_account_id: eur.id,
        from_account_type: 'fiat_account',
        to_account_id: eurPayee.id,
        to_account_type: 'payee',
        reference: 'Reserved',
        counterparty_name: 'Erika Mustermann',
        counterparty_account: 'DE89370400440532013000',
        fee_amount: 0.2,
        fee_currency: 'EUR',
        fr_owner_business_id: alice.frOwnerBusinessId,
        virtual_account_id: null,
        payee_id: eurPayee.id,
        balance_before: before,
        balance_after: Math.round((before - 100.2) * 100) / 100,
        completed_at: null,
        created_at: created.createdAt,
        account_id: eur.id,
        payment_id: created.id,
      });
      expect(record.fr_transaction_id).toMatch(/^txn_[0-9a-f]+$/);
    });

    it('writes payment.created and fiat_account.balance_updated to the outbox in the same transaction', async () => {
      const before = (await outboxEvents(t, alice.id)).length;
      const balance = await fiatBalance(t, alice, eur.id);
      const created = await pay(t, alice, internal({ amount: 5, reference: 'Evented' }));
      const events = (await outboxEvents(t, alice.id)).slice(before);
      expect(events.map((event) => event.type)).toEqual(['payment.created', 'fiat_account.balance_updated']);
      expect(events[0]!.data).toEqual(await payment(t, alice, created.id));
      const full = await payment(t, alice, created.id);
      // The account's record as GET answers it after the change, like every event's data, and two additive fields.
      const account = (await t.request({ url: `/fiat-accounts/${eur.id}`, key: alice.key })).json().data;
      expect(account).toMatchObject({ id: eur.id, balance: balance - 5, status: 'active', updated_at: created.createdAt });
      expect(events[1]!.data).toEqual({ ...account, previous_balance: balance, transaction_id: full.transactionId });
    });

    describe('validation (spec §4 table; 400 VALIDATION_ERROR naming the field, nothing moves)', () => {
      it.each([
        ['amount 0', { amount: 0 }, '/amount'],
        ['a negative amount', { amount: -1 }, '/amount'],
        ['an amount above 10,000,000', { amount: 10_000_000.01 }, '/amount'],
        ['an amount with 3 decimals', { amount: 10.001 }, '/amount'],
        ['an amount of 0.001', { amount: 0.001 }, '/amount'],
        ['an amount of 1e-7', { amount: 1e-7 }, '/amount'],
        ['an amount as a string', { amount: '10.00' }, '/amount'],
        ['a missing amount', { amount: undefined }, '/amount'],
        ['a missing fromAccountId', { fromAccountId: undefined }, '/fromAccountId'],
        ['a fromAccountId that is not a UUID', { fromAccountId: 'acc_1' }, '/fromAccountId'],
        ['a missing currency', { currency: undefined }, '/currency'],
        ['an unknown currency', { currency: 'CHF' }, '/currency'],
        ['a missing reference', { reference: undefined }, '/reference'],
        ['an empty reference', { reference: '' }, '/reference'],
        ['a 201-character reference', { reference: 'r'.repeat(201) }, '/reference'],
        ['an unknown fromAccountType', { fromAccountType: 'SAVINGS' }, '/fromAccountType'],
        ['a payeeId that is not a UUID', { payeeId: 'payee' }, '/payeeId'],
        ['a 51-character paymentScheme', { paymentScheme: 'S'.repeat(51) }, '/paymentScheme'],
        ['a 50-character unknown paymentScheme', { paymentScheme: 'S'.repeat(50) }, '/paymentScheme'],
        ['an unknown paymentScheme', { paymentScheme: 'CHEQUE' }, '/paymentScheme'],
        ['a scheme the payee’s currency has no rail for', { paymentScheme: 'ACH' }, '/paymentScheme'],
        ['an empty payeeVerificationId', { payeeVerificationId: '' }, '/payeeVerificationId'],
        ['an umbrellaLinkId that is not a UUID', { umbrellaLinkId: 'umbrella' }, '/umbrellaLinkId'],
        ['an unknown field', { memo: 'hi' }, '/memo'],
      ])('refuses %s', async (_name, overrides, path) => {
        const before = await moneySnapshot(t, alice.id);
        const body: Record<string, unknown> = toPayee(overrides);
        for (const [field, value] of Object.entries(body)) if (value === undefined) delete body[field];
        const response = await payRequest(t, alice, body);
        expect(response.statusCode, response.body).toBe(400);
        expect(response.json().error.code).toBe('VALIDATION_ERROR');
        expect(failingPaths(response)).toContain(path);
        expect(await moneySnapshot(t, alice.id)).toEqual(before);
      });

      it('requires exactly one of toAccountId and payeeId, naming both', async () => {
        const before = await moneySnapshot(t, alice.id);
        const neither = await payRequest(t, alice, { fromAccountId: eur.id, amount: 1, currency: 'EUR', reference: 'x' });
        const both = await payRequest(t, alice, { fromAccountId: eur.id, toAccountId: eur2.id, payeeId: eurPayee.id, amount: 1, currency: 'EUR', reference: 'x' });
        for (const response of [neither, both]) {
          expect(response.statusCode).toBe(400);
          expect(response.json().error.code).toBe('VALIDATION_ERROR');
          expect(failingPaths(response).sort()).toEqual(['/payeeId', '/toAccountId']);
        }
        expect(await moneySnapshot(t, alice.id)).toEqual(before);
      });

      it('refuses a transfer to the source account itself, and a scheme other than INTERNAL between own accounts', async () => {
        const self = await payRequest(t, alice, internal({ toAccountId: eur.id }));
        expect(self.statusCode).toBe(400);
        expect(failingPaths(self)).toEqual(['/toAccountId']);
        const sepa = await payRequest(t, alice, internal({ paymentScheme: 'SEPA' }));
        expect(sepa.statusCode).toBe(400);
        expect(failingPaths(sepa)).toEqual(['/paymentScheme']);
        expect((await payRequest(t, alice, internal({ paymentScheme: 'INTERNAL' }))).statusCode).toBe(201);
      });

      it('accepts each boundary just inside: 0.01, 10,000,000, a 1- and a 200-character reference, a 2-decimal amount', async () => {
        const big = await createFiatAccount(t, alice, { accountName: 'Big', currency: 'EUR' });
        await deposit(t, alice, big.id, 10_000_000);
        const max = await payRequest(t, alice, internal({ fromAccountId: big.id, toAccountId: eur2.id, amount: 10_000_000 }));
        expect(max.statusCode, max.body).toBe(201);
        expect(max.json().data.amount).toBe('10000000.00');
        expect(await fiatBalance(t, alice, big.id)).toBe(0);
        expect((await payRequest(t, alice, internal({ amount: 0.01 }))).statusCode).toBe(201);
        expect((await payRequest(t, alice, internal({ amount: 12.34 }))).statusCode).toBe(201);
        expect((await payRequest(t, alice, internal({ reference: 'r' }))).statusCode).toBe(201);
        const long = await payRequest(t, alice, internal({ reference: 'r'.repeat(200) }));
        expect(long.statusCode).toBe(201);
        expect(long.json().data.reference).toBe('r'.repeat(200));
      });

      it('accepts the optional fields: fromAccountType, paymentScheme up to 50 characters when known, payeeVerificationId, umbrellaLinkId', async () => {
        const response = await payRequest(
          t,
          alice,
          toPayee({ fromAccountType: 'FIAT_ACCOUNT', paymentScheme: 'SEPA_INSTANT', payeeVerificationId: 'vop_123', umbrellaLinkId: '0f0e0d0c-0b0a-4988-8776-655443322110' }),
        );
        expect(response.statusCode, response.body).toBe(201);
        const full = await payment(t, alice, response.json().data.id);
        expect(full.paymentScheme).toBe('SEPA_INSTANT');
        expect(full.fee).toBe('0.50');
      });
    });

    it('refuses Idempotency-Key with 400 IDEMPOTENCY_KEY_NOT_SUPPORTED, pointing to reference and GET /transactions, and moves nothing', async () => {
      const before = await moneySnapshot(t, alice.id);
      for (const key of ['6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b', 'not-a-uuid']) {
        const response = await payRequest(t, alice, toPayee(), { 'idempotency-key': key });
        expect(response.statusCode).toBe(400);
        const { error } = response.json();
        expect(error.code).toBe('IDEMPOTENCY_KEY_NOT_SUPPORTED');
        expect(error.message).toContain('reference');
        expect(error.message).toContain('GET /transactions');
      }
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
      // Authentication, CSRF and scope are checked first.
      const reader = await t.createKey(alice.id, { scopes: ['payments:read'] });
      const unauthorised = await t.request({ method: 'POST', url: '/payments', key: reader.key, csrf: true, body: toPayee(), headers: { 'idempotency-key': '6f1c2b3a-4d5e-4f60-8a7b-9c0d1e2f3a4b' } });
      expect(unauthorised.statusCode).toBe(403);
    });

    describe('currencies must agree (422 CURRENCY_MISMATCH, nothing moves)', () => {
      it.each([
        ['the payment and the source account', () => internal({ currency: 'GBP', toAccountId: gbp.id })],
        ['the source and the target account', () => internal({ toAccountId: gbp.id })],
        ['the source account and the payee', () => toPayee({ payeeId: gbpPayee.id })],
        ['the payment and the payee', () => ({ fromAccountId: gbp.id, payeeId: eurPayee.id, amount: 1, currency: 'GBP', reference: 'x' })],
      ])('differ: %s', async (_name, body) => {
        const before = await moneySnapshot(t, alice.id);
        const response = await payRequest(t, alice, body());
        expect(response.statusCode, response.body).toBe(422);
        expect(response.json().error.code).toBe('CURRENCY_MISMATCH');
        expect(await moneySnapshot(t, alice.id)).toEqual(before);
      });
    });

    describe('insufficient funds', () => {
      it('refuses amount plus fee above the balance with 422 INSUFFICIENT_FUNDS: balance, transactions and outbox unchanged', async () => {
        const account = await createFiatAccount(t, alice, { accountName: 'Thin', currency: 'EUR' });
        await deposit(t, alice, account.id, 100);
        const before = await moneySnapshot(t, alice.id);
        // 100.00 + the 0.20 SEPA fee is 0.20 more than the balance.
        const response = await payRequest(t, alice, toPayee({ fromAccountId: account.id, amount: 100 }));
        expect(response.statusCode).toBe(422);
        expect(response.json().error.code).toBe('INSUFFICIENT_FUNDS');
        expect(response.json().error.details).toEqual({ account_id: account.id });
        expect(await moneySnapshot(t, alice.id)).toEqual(before);
        expect(await fiatBalance(t, alice, account.id)).toBe(100);

        // Exactly covered: 99.80 + 0.20.
        expect((await payRequest(t, alice, toPayee({ fromAccountId: account.id, amount: 99.8 }))).statusCode).toBe(201);
        expect(await fiatBalance(t, alice, account.id)).toBe(0);
        const empty = await payRequest(t, alice, internal({ fromAccountId: account.id, amount: 0.01 }));
        expect(empty.statusCode).toBe(422);
        expect(empty.json().error.code).toBe('INSUFFICIENT_FUNDS');
      });

      it('refuses a payment from an account that was never funded', async () => {
        const account = await createFiatAccount(t, alice, { accountName: 'Empty', currency: 'EUR' });
        const response = await payRequest(t, alice, internal({ fromAccountId: account.id, amount: 0.01 }));
        expect(response.statusCode).toBe(422);
        expect(response.json().error.code).toBe('INSUFFICIENT_FUNDS');
      });
    });

    describe('another customer’s ids answer 404 exactly as unknown ones, and nothing moves', () => {
      it.each([
        ['source account', () => toPayee({ fromAccountId: bobsEur.id }), () => toPayee({ fromAccountId: unknownId })],
        ['target account', () => internal({ toAccountId: bobsEur.id }), () => internal({ toAccountId: unknownId })],
        ['payee', () => toPayee({ payeeId: bobsPayee.id }), () => toPayee({ payeeId: unknownId })],
      ])('%s', async (_name, foreignBody, unknownBody) => {
        const aliceBefore = await moneySnapshot(t, alice.id);
        const bobBefore = await moneySnapshot(t, bob.id);
        const foreign = await payRequest(t, alice, foreignBody());
        const unknown = await payRequest(t, alice, unknownBody());
        expect(foreign.statusCode).toBe(404);
        expect(unknown.statusCode).toBe(404);
        expect(foreign.json()).toEqual(unknown.json());
        expect(foreign.json().error.code).toBe('NOT_FOUND');
        expect(await moneySnapshot(t, alice.id)).toEqual(aliceBefore);
        expect(await moneySnapshot(t, bob.id)).toEqual(bobBefore);
      });
    });

    it('needs a key, a CSRF token and the payments:write scope', async () => {
      expect((await t.request({ method: 'POST', url: '/payments', body: toPayee() })).statusCode).toBe(401);
      const noCsrf = await t.request({ method: 'POST', url: '/payments', key: alice.key, body: toPayee() });
      expect(noCsrf.statusCode).toBe(403);
      const reader = await t.createKey(alice.id, { scopes: ['payments:read'] });
      const refused = await t.request({ method: 'POST', url: '/payments', key: reader.key, csrf: true, body: toPayee() });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
      const writer = await t.createKey(alice.id, { scopes: ['payments:write'] });
      expect((await t.request({ method: 'POST', url: '/payments', key: writer.key, csrf: true, body: toPayee() })).statusCode).toBe(201);
    });
  });

  describe('fees: a payment charges exactly what POST /fees/preview shows', () => {
    let carol: TestCustomer;
    let carolsAccounts: Record<'EUR' | 'GBP' | 'USD', Account>;
    let carolsPayees: Record<'EUR' | 'GBP' | 'USD', { id: string }>;

    beforeAll(async () => {
      carol = await t.createCustomer('Carol SA');
      carolsAccounts = {
        EUR: await createFiatAccount(t, carol, { accountName: 'EUR', currency: 'EUR' }),
        GBP: await createFiatAccount(t, carol, { accountName: 'GBP', currency: 'GBP', ibanCountry: 'GB' }),
        USD: await createFiatAccount(t, carol, { accountName: 'USD', currency: 'USD' }),
      };
      carolsPayees = { EUR: await createPayee(t, carol, 'EUR'), GBP: await createPayee(t, carol, 'GBP'), USD: await createPayee(t, carol, 'USD') };
      for (const account of Object.values(carolsAccounts)) await deposit(t, carol, account.id, 1_000_000);
      // An operator's schedule of Carol's own, with a percentage that needs rounding.
      await new FeeService(t.storage, t.clock, t.app.caches).setSchedule({ customerId: carol.id, paymentScheme: 'SEPA_INSTANT', currency: 'EUR', flat: '0.07', percentage: '0.333' });
    });

    it.each([
      ['EUR', 'SEPA', 100],
      ['EUR', 'SEPA_INSTANT', 123.45],
      ['EUR', 'SEPA_INSTANT', 0.01],
      ['EUR', 'SWIFT', 10],
      ['EUR', 'SWIFT', 12_345.67],
      ['EUR', 'SWIFT', 500_000],
      ['GBP', 'FASTER_PAYMENTS', 250],
      ['GBP', 'SWIFT', 7_777.77],
      ['USD', 'ACH', 99.99],
      ['USD', 'SWIFT', 60_000],
    ] as const)('%s over %s, amount %s', async (currency, scheme, amount) => {
      const previewResponse = await t.request({
        method: 'POST',
        url: '/fees/preview',
        key: carol.key,
        csrf: true,
        body: { amount, currency, transactionType: 'payment', paymentScheme: scheme },
      });
      expect(previewResponse.statusCode, previewResponse.body).toBe(200);
      const preview = previewResponse.json().data;
      const before = await fiatBalance(t, carol, carolsAccounts[currency].id);
      const reportBefore = await verifyLedger(t.storage);

      const created = await pay(t, carol, { fromAccountId: carolsAccounts[currency].id, payeeId: carolsPayees[currency].id, amount, currency, reference: `${scheme} ${amount}`, paymentScheme: scheme });
      const full = await payment(t, carol, created.id);
      expect(Number(full.fee)).toBe(preview.fee_amount);
      expect(full.fee).toBe(preview.fee_amount.toFixed(2));
      const record = await transaction(t, carol, full.transactionId);
      expect(record.fee_amount).toBe(preview.fee_amount);
      expect(record.fee_currency).toBe(preview.fee_currency);
      const feeMinor = Math.round(preview.fee_amount * 100);
      const amountMinor = Math.round(amount * 100);
      expect(Math.round(record.balance_before * 100) - Math.round(record.balance_after * 100)).toBe(amountMinor + feeMinor);
      expect(Math.round((await fiatBalance(t, carol, carolsAccounts[currency].id)) * 100)).toBe(Math.round(before * 100) - amountMinor - feeMinor);
      const stored = await t.storage.db.selectFrom('payments').select(['fee_minor', 'fee_schedule_id']).where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(stored.fee_schedule_id).toBe(preview.schedule_id);

      // The fee becomes fee income when the payment completes, not before.
      const feeIncome = (report: Awaited<ReturnType<typeof verifyLedger>>) => BigInt(report.system_balances_minor[`fee_income:${currency}`] ?? '0');
      expect(feeIncome(await verifyLedger(t.storage))).toBe(feeIncome(reportBefore));
      await settle(t, carol, created.id, 'completed');
      expect(feeIncome(await expectLedgerVerifies(t))).toBe(feeIncome(reportBefore) + BigInt(feeMinor));
    });
  });

  describe('settlement (POST /sandbox/payments/{id}/settle)', () => {
    it('completed: credits the target account with an incoming payment record, completes the outgoing one, emits the events', async () => {
      const targetBefore = await fiatBalance(t, alice, eur2.id);
      const created = await pay(t, alice, internal({ amount: 25.5, reference: 'To second' }));
      expect(await fiatBalance(t, alice, eur2.id)).toBe(targetBefore);
      const eventsBefore = (await outboxEvents(t, alice.id)).length;
      t.clock.advance(1000);

      const response = await settleRequest(t, alice, created.id, 'completed');
      expect(response.statusCode, response.body).toBe(200);
      const settled = response.json().data;
      expect(Object.keys(settled).sort()).toEqual(paymentFields);
      expect(settled.status).toBe('completed');
      expect(settled.completedAt).toBe(t.clock.now().toISOString());
      expect(settled.updatedAt).toBe(settled.completedAt);
      expect(settled.failureReason).toBeNull();
      expect(settled.toAccountId).toBe(eur2.id);
      expect(await payment(t, alice, created.id)).toEqual(settled);

      expect(await fiatBalance(t, alice, eur2.id)).toBe(targetBefore + 25.5);
      const outgoing = await transaction(t, alice, settled.transactionId);
      expect(outgoing.status).toBe('completed');
      expect(outgoing.completed_at).toBe(settled.completedAt);
      const [incoming] = await incomingRecordsOf(t, created.id);
      const record = await transaction(t, alice, incoming!.id);
      expect(record).toMatchObject({
        transaction_type: 'payment',
        direction: 'incoming',
        status: 'completed',
        amount: 25.5,
        fee_amount: 0,
        from_account_id: eur.id,
        from_account_type: 'fiat_account',
        to_account_id: eur2.id,
        to_account_type: 'fiat_account',
        account_id: eur2.id,
        payment_id: created.id,
        balance_before: targetBefore,
        balance_after: targetBefore + 25.5,
        completed_at: settled.completedAt,
      });

      const events = (await outboxEvents(t, alice.id)).slice(eventsBefore);
      expect(events.map((event) => event.type)).toEqual(['payment.status_updated', 'payment.completed', 'fiat_account.balance_updated']);
      expect(events[0]!.data).toEqual(settled);
      expect(events[1]!.data).toEqual(settled);
      const target = (await t.request({ url: `/fiat-accounts/${eur2.id}`, key: alice.key })).json().data;
      expect(target).toMatchObject({ balance: targetBefore + 25.5, updated_at: settled.completedAt });
      expect(events[2]!.data).toEqual({ ...target, previous_balance: targetBefore, transaction_id: record.id });
      await expectLedgerVerifies(t);
    });

    it('completed to a payee: the money leaves the platform, no incoming record', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const created = await pay(t, alice, toPayee({ amount: 40 }));
      const settled = await settle(t, alice, created.id, 'completed');
      expect(settled.status).toBe('completed');
      expect(await incomingRecordsOf(t, created.id)).toEqual([]);
      expect(await fiatBalance(t, alice, eur.id)).toBe(Math.round((before - 40.2) * 100) / 100);
      await expectLedgerVerifies(t);
    });

    it('failed: returns amount and fee with an incoming payment_return record, fails the outgoing one, emits the events', async () => {
      const before = await fiatBalance(t, alice, eur.id);
      const created = await pay(t, alice, toPayee({ amount: 60, reference: 'Will bounce' }));
      expect(await fiatBalance(t, alice, eur.id)).toBe(Math.round((before - 60.2) * 100) / 100);
      const eventsBefore = (await outboxEvents(t, alice.id)).length;

      const settled = await settle(t, alice, created.id, 'failed');
      expect(settled.status).toBe('failed');
      expect(typeof settled.failureReason).toBe('string');
      expect(settled.failureReason.length).toBeGreaterThan(0);
      expect(settled.completedAt).toBeNull();
      expect(await fiatBalance(t, alice, eur.id)).toBe(before);

      const outgoing = await transaction(t, alice, settled.transactionId);
      expect(outgoing.status).toBe('failed');
      expect(outgoing.completed_at).toBeNull();
      const [returned] = await incomingRecordsOf(t, created.id);
      const record = await transaction(t, alice, returned!.id);
      expect(record).toMatchObject({
        transaction_type: 'payment_return',
        direction: 'incoming',
        status: 'completed',
        amount: 60.2,
        to_account_id: eur.id,
        account_id: eur.id,
        payment_id: created.id,
        payee_id: eurPayee.id,
        balance_before: Math.round((before - 60.2) * 100) / 100,
        balance_after: before,
      });

      const events = (await outboxEvents(t, alice.id)).slice(eventsBefore);
      expect(events.map((event) => event.type)).toEqual(['payment.status_updated', 'payment.failed', 'fiat_account.balance_updated']);
      expect(events[1]!.data).toEqual(settled);
      expect(events[2]!.data).toMatchObject({ id: eur.id, balance: before, transaction_id: record.id });
      await expectLedgerVerifies(t);
    });

    it.each(['completed', 'failed'] as const)('refuses to settle a %s payment again with 422, and moves nothing', async (first) => {
      const created = await pay(t, alice, internal({ amount: 3 }));
      await settle(t, alice, created.id, first);
      const before = await moneySnapshot(t, alice.id);
      for (const outcome of ['completed', 'failed']) {
        const again = await settleRequest(t, alice, created.id, outcome);
        expect(again.statusCode).toBe(422);
        expect(again.json().error.code).toBe('INVALID_STATUS_TRANSITION');
      }
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
      expect((await payment(t, alice, created.id)).status).toBe(first);
    });

    it('settles a payment once when both outcomes race', async () => {
      const created = await pay(t, alice, internal({ amount: 4 }));
      const responses = await Promise.all([settleRequest(t, alice, created.id, 'completed'), settleRequest(t, alice, created.id, 'failed')]);
      expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 422]);
      expect(await incomingRecordsOf(t, created.id)).toHaveLength(1);
      await expectLedgerVerifies(t);
    });

    it('answers 404 for another customer’s payment exactly as for an unknown one; 400 for an unknown outcome', async () => {
      const bobs = await pay(t, bob, { fromAccountId: bobsEur.id, payeeId: bobsPayee.id, amount: 1, currency: 'EUR', reference: 'Bob' });
      const foreign = await settleRequest(t, alice, bobs.id, 'completed');
      const unknown = await settleRequest(t, alice, unknownId, 'completed');
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect((await payment(t, bob, bobs.id)).status).toBe('pending');
      const created = await pay(t, alice, internal({ amount: 1 }));
      const bad = await settleRequest(t, alice, created.id, 'settled');
      expect(bad.statusCode).toBe(400);
      expect(failingPaths(bad)).toContain('/outcome');
    });
  });

  describe('GET /payments/{id} and GET /payments', () => {
    it('answers 404 for another customer’s payment exactly as for an unknown one, 400 for a malformed id', async () => {
      const bobs = await pay(t, bob, { fromAccountId: bobsEur.id, payeeId: bobsPayee.id, amount: 1, currency: 'EUR', reference: 'Bob' });
      const foreign = await t.request({ url: `/payments/${bobs.id}`, key: alice.key });
      const unknown = await t.request({ url: `/payments/${unknownId}`, key: alice.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect((await t.request({ url: '/payments/nope', key: alice.key })).statusCode).toBe(400);
      const upper = await t.request({ url: `/payments/${bobs.id.toUpperCase()}`, key: bob.key });
      expect(upper.statusCode).toBe(200);
    });

    it('lists the customer’s own payments newest first, paginated like GET /transactions', async () => {
      const dave = await t.createCustomer('Dave');
      const a = await createFiatAccount(t, dave, { accountName: 'A', currency: 'EUR' });
      const b = await createFiatAccount(t, dave, { accountName: 'B', currency: 'EUR' });
      await deposit(t, dave, a.id, 100);
      const ids: string[] = [];
      for (let index = 0; index < 5; index += 1) {
        t.clock.advance(1);
        ids.push((await pay(t, dave, { fromAccountId: a.id, toAccountId: b.id, amount: 1, currency: 'EUR', reference: `P${index}` })).id);
      }
      const all = await t.request({ url: '/payments', key: dave.key });
      expect(all.statusCode).toBe(200);
      expect(all.json().meta.pagination).toEqual({ page: 1, limit: 50, total: 5 });
      expect(all.json().data.map((row: { id: string }) => row.id)).toEqual([...ids].reverse());
      for (const row of all.json().data) expect(Object.keys(row).sort()).toEqual(paymentFields);
      const second = await t.request({ url: '/payments?page=2&limit=2', key: dave.key });
      expect(second.json().meta.pagination).toEqual({ page: 2, limit: 2, total: 5 });
      expect(second.json().data.map((row: { id: string }) => row.id)).toEqual([ids[2], ids[1]]);
      expect((await t.request({ url: '/payments?limit=500', key: dave.key })).json().meta.pagination.limit).toBe(100);
      expect((await t.request({ url: '/payments?limit=5000000000', key: dave.key })).json().meta.pagination.limit).toBe(100);
      const past = await t.request({ url: '/payments?page=9', key: dave.key });
      expect(past.json()).toEqual({ data: [], meta: { pagination: { page: 9, limit: 50, total: 5 } } });
      expect((await t.request({ url: '/payments?page=0', key: dave.key })).statusCode).toBe(400);
      expect((await t.request({ url: '/payments?limit=0', key: dave.key })).statusCode).toBe(400);
    });
  });

  describe('virtual accounts', () => {
    let master: Account;
    let other: Account;
    let virtual: Awaited<ReturnType<typeof createVirtualAccount>>;

    beforeAll(async () => {
      master = await createFiatAccount(t, alice, { accountName: 'VA master', currency: 'EUR' });
      other = await createFiatAccount(t, alice, { accountName: 'VA other', currency: 'EUR' });
      virtual = await createVirtualAccount(t, alice, master.id);
      await deposit(t, alice, master.id, 100);
      await deposit(t, alice, virtual.id, 50);
    });

    it('a payment from a virtual account debits the virtual account and its master, with both balance events', async () => {
      expect(await fiatBalance(t, alice, master.id)).toBe(150);
      expect(await virtualBalance(t, alice, virtual.id)).toBe(50);
      const eventsBefore = (await outboxEvents(t, alice.id)).length;

      const created = await pay(t, alice, internal({ fromAccountId: virtual.id, toAccountId: other.id, amount: 20, reference: 'From VA' }));
      expect(await virtualBalance(t, alice, virtual.id)).toBe(30);
      expect(await fiatBalance(t, alice, master.id)).toBe(130);
      const full = await payment(t, alice, created.id);
      expect(full.fromAccountId).toBe(virtual.id);
      expect(full.fromAccountType).toBe('VIRTUAL_ACCOUNT');
      const record = await transaction(t, alice, full.transactionId);
      expect(record).toMatchObject({
        direction: 'outgoing',
        from_account_id: virtual.id,
        from_account_type: 'virtual_account',
        virtual_account_id: virtual.id,
        account_id: master.id,
        balance_before: 50,
        balance_after: 30,
      });
      const events = (await outboxEvents(t, alice.id)).slice(eventsBefore);
      expect(events.map((event) => event.type).sort()).toEqual(['fiat_account.balance_updated', 'payment.created', 'virtual_account.balance_updated']);
      const masterRecord = (await t.request({ url: `/fiat-accounts/${master.id}`, key: alice.key })).json().data;
      const virtualRecord = (await t.request({ url: `/virtual-accounts/${virtual.id}`, key: alice.key })).json().data;
      expect(events.find((event) => event.type === 'fiat_account.balance_updated')!.data).toEqual({ ...masterRecord, balance: 130, previous_balance: 150, transaction_id: full.transactionId });
      expect(events.find((event) => event.type === 'virtual_account.balance_updated')!.data).toEqual({ ...virtualRecord, balance: 30, previous_balance: 50, transaction_id: full.transactionId });
      await settle(t, alice, created.id, 'completed');
      expect(await fiatBalance(t, alice, other.id)).toBe(20);
      await expectLedgerVerifies(t);
    });

    it('a virtual account cannot spend beyond its own balance, even when its master has free money', async () => {
      const before = await moneySnapshot(t, alice.id);
      const response = await payRequest(t, alice, internal({ fromAccountId: virtual.id, toAccountId: other.id, amount: 30.01 }));
      expect(response.statusCode).toBe(422);
      expect(response.json().error.code).toBe('INSUFFICIENT_FUNDS');
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
    });

    it('a master cannot spend its virtual accounts’ money', async () => {
      // Master 130 of which 30 belong to the virtual account: 100 is free.
      const before = await moneySnapshot(t, alice.id);
      const over = await payRequest(t, alice, internal({ fromAccountId: master.id, toAccountId: other.id, amount: 100.01 }));
      expect(over.statusCode).toBe(422);
      expect(over.json().error.code).toBe('INSUFFICIENT_FUNDS');
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
      expect((await payRequest(t, alice, internal({ fromAccountId: master.id, toAccountId: other.id, amount: 100 }))).statusCode).toBe(201);
      expect(await fiatBalance(t, alice, master.id)).toBe(30);
      const none = await payRequest(t, alice, internal({ fromAccountId: master.id, toAccountId: other.id, amount: 0.01 }));
      expect(none.statusCode).toBe(422);
      // The virtual account's money is still its own to spend.
      expect(await virtualBalance(t, alice, virtual.id)).toBe(30);
      expect((await payRequest(t, alice, internal({ fromAccountId: virtual.id, toAccountId: other.id, amount: 30 }))).statusCode).toBe(201);
      expect(await fiatBalance(t, alice, master.id)).toBe(0);
      await expectLedgerVerifies(t);
    });

    it('fromAccountType narrows the lookup: a virtual account id as FIAT_ACCOUNT (and the reverse) is unknown', async () => {
      const asFiat = await payRequest(t, alice, internal({ fromAccountId: virtual.id, fromAccountType: 'FIAT_ACCOUNT', toAccountId: other.id, amount: 1 }));
      expect(asFiat.statusCode).toBe(404);
      const asVirtual = await payRequest(t, alice, internal({ fromAccountId: master.id, fromAccountType: 'VIRTUAL_ACCOUNT', toAccountId: other.id, amount: 1 }));
      expect(asVirtual.statusCode).toBe(404);
    });

    it('a failed payment from a virtual account returns the money to the virtual account', async () => {
      await deposit(t, alice, virtual.id, 10);
      const created = await pay(t, alice, toPayee({ fromAccountId: virtual.id, amount: 9.8, fromAccountType: 'VIRTUAL_ACCOUNT' }));
      expect(await virtualBalance(t, alice, virtual.id)).toBe(0);
      await settle(t, alice, created.id, 'failed');
      expect(await virtualBalance(t, alice, virtual.id)).toBe(10);
      expect(await fiatBalance(t, alice, master.id)).toBe(10);
      const [returned] = await incomingRecordsOf(t, created.id);
      expect(returned!.virtual_account_id).toBe(virtual.id);
      expect(returned!.transaction_type).toBe('payment_return');
      await expectLedgerVerifies(t);
    });

    it('a completed transfer to a virtual account credits it and its master', async () => {
      await deposit(t, alice, other.id, 5);
      const eventsBefore = (await outboxEvents(t, alice.id)).length;
      const created = await pay(t, alice, internal({ fromAccountId: other.id, toAccountId: virtual.id, amount: 5 }));
      await settle(t, alice, created.id, 'completed');
      expect(await virtualBalance(t, alice, virtual.id)).toBe(15);
      expect(await fiatBalance(t, alice, master.id)).toBe(15);
      const [incoming] = await incomingRecordsOf(t, created.id);
      expect(incoming!.virtual_account_id).toBe(virtual.id);
      expect(incoming!.to_account_type).toBe('virtual_account');
      const types = (await outboxEvents(t, alice.id)).slice(eventsBefore).map((event) => event.type);
      expect(types).toContain('virtual_account.balance_updated');
      await expectLedgerVerifies(t);
    });
  });
});

describe('automatic sandbox settlement (SANDBOX_AUTO_SETTLE_MS)', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let worker: PollingWorker;
  let from: Account;
  let to: Account;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: '2000' } });
    alice = await t.createCustomer('Alice Ltd');
    const found = t.app.workers.find((candidate) => candidate.name === 'sandbox-payment-settlement');
    if (!found) throw new Error('no sandbox-payment-settlement worker');
    worker = found;
    from = await createFiatAccount(t, alice, { accountName: 'From', currency: 'EUR' });
    to = await createFiatAccount(t, alice, { accountName: 'To', currency: 'EUR' });
    await deposit(t, alice, from.id, 100);
  });
  afterAll(async () => t.close());

  it('completes a payment once the delay has passed, not before', async () => {
    const created = await pay(t, alice, { fromAccountId: from.id, toAccountId: to.id, amount: 10, currency: 'EUR', reference: 'Auto' });
    expect(await worker.runOnce()).toBe(0);
    t.clock.advance(1999);
    expect(await worker.runOnce()).toBe(0);
    expect((await t.request({ url: `/payments/${created.id}`, key: alice.key })).json().data.status).toBe('pending');
    t.clock.advance(1);
    expect(await worker.runOnce()).toBe(1);
    const settled = (await t.request({ url: `/payments/${created.id}`, key: alice.key })).json().data;
    expect(settled.status).toBe('completed');
    expect(settled.completedAt).toBe(t.clock.now().toISOString());
    expect(await fiatBalance(t, alice, to.id)).toBe(10);
    expect(await worker.runOnce()).toBe(0);
    const types = (await outboxEvents(t, alice.id)).map((event) => event.type);
    expect(types).toContain('payment.completed');
  });

  it('fails a payment whose reference starts with sandbox-fail, returning amount and fee', async () => {
    const before = await fiatBalance(t, alice, from.id);
    const created = await pay(t, alice, { fromAccountId: from.id, toAccountId: to.id, amount: 7, currency: 'EUR', reference: 'Sandbox-Fail please' });
    t.clock.advance(2000);
    expect(await worker.runOnce()).toBe(1);
    const settled = (await t.request({ url: `/payments/${created.id}`, key: alice.key })).json().data;
    expect(settled.status).toBe('failed');
    expect(await fiatBalance(t, alice, from.id)).toBe(before);
    expect((await outboxEvents(t, alice.id)).map((event) => event.type)).toContain('payment.failed');
  });

  it('leaves alone a payment settled by hand before its time', async () => {
    const created = await pay(t, alice, { fromAccountId: from.id, toAccountId: to.id, amount: 1, currency: 'EUR', reference: 'By hand' });
    await settle(t, alice, created.id, 'failed');
    t.clock.advance(2000);
    expect(await worker.runOnce()).toBe(0);
    expect((await t.request({ url: `/payments/${created.id}`, key: alice.key })).json().data.status).toBe('failed');
    const report = await verifyLedger(t.storage);
    expect(report.problems).toEqual([]);
  });
});
