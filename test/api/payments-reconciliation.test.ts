import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createPayee, deposit, pay, payRequest } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * GET /payments filtered by reference and creation time, and the reconciliation of a POST /payments whose answer
 * the client never received (docs/payments.md "Reconciling a payment without an answer").
 */

const start = Date.parse('2025-06-01T08:00:00.000Z');
const minute = 60_000;
const at = (minutes: number) => new Date(start + minutes * minute).toISOString();

/** A payment record (docs/spec.md §2): the fields these tests compute with typed. */
type Payment = { id: string; createdAt: string; [field: string]: unknown };

describe('GET /payments filters and reconciliation', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let main: { id: string };
  let savings: { id: string };
  let payee: { id: string };
  /** Alice's payments, newest first, as GET /payments lists them. */
  let everything: Payment[];
  let bobsPayment: Payment;

  const list = (query = '', customer = alice) => t.request({ url: `/payments${query}`, key: customer.key });
  const ids = (payments: Payment[]) => payments.map((payment) => payment.id);

  const expectFilter = async (query: string, expected: Payment[]) => {
    const response = await list(`${query}&limit=100`);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().meta.pagination.total).toBe(expected.length);
    expect(ids(response.json().data)).toEqual(ids(expected));
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    t.clock.set(at(0));
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    main = await createFiatAccount(t, alice, { accountName: 'Main', currency: 'EUR' });
    savings = await createFiatAccount(t, alice, { accountName: 'Savings', currency: 'EUR' });
    payee = await createPayee(t, alice, 'EUR');
    await deposit(t, alice, main.id, 10_000);
    const toPayee = (reference: string) => ({ fromAccountId: main.id, payeeId: payee.id, amount: 1, currency: 'EUR', reference });

    // One payment a minute: INV-1 (minute 1), INV-2 (2), inv-1 (3), INV-1 again (4), Batch ×5 (5-9), a
    // 200-character reference (10), one with characters a query string must encode (11).
    const references = ['INV-1', 'INV-2', 'inv-1', 'INV-1', 'Batch', 'Batch', 'Batch', 'Batch', 'Batch', 'r'.repeat(200), 'Facture n°7 & co + TVA'];
    for (const [index, reference] of references.entries()) {
      t.clock.set(at(index + 1));
      if (reference === 'INV-2') await pay(t, alice, { fromAccountId: main.id, toAccountId: savings.id, amount: 1, currency: 'EUR', reference });
      else await pay(t, alice, toPayee(reference));
    }

    const bobsAccount = await createFiatAccount(t, bob, { accountName: 'Bob', currency: 'EUR' });
    const bobsPayee = await createPayee(t, bob, 'EUR');
    await deposit(t, bob, bobsAccount.id, 100);
    t.clock.set(at(3));
    bobsPayment = await pay(t, bob, { fromAccountId: bobsAccount.id, payeeId: bobsPayee.id, amount: 1, currency: 'EUR', reference: 'INV-1' });

    everything = (await list('?limit=100')).json().data as Payment[];
    expect(everything.map((payment) => payment.reference)).toEqual([...references].reverse());
  });
  afterAll(async () => t.close());

  describe('reference', () => {
    it('matches exactly and case-sensitively, newest first', async () => {
      const byReference = (reference: string) => everything.filter((payment) => payment.reference === reference);
      await expectFilter('?reference=INV-1', byReference('INV-1'));
      expect(byReference('INV-1').map((payment) => payment.createdAt)).toEqual([at(4), at(1)]);
      await expectFilter('?reference=inv-1', byReference('inv-1'));
      await expectFilter('?reference=INV-2', byReference('INV-2'));
      await expectFilter('?reference=INV', []);
      await expectFilter('?reference=INV-1%20', []);
      await expectFilter('?reference=Batch', byReference('Batch'));
      // Percent-encoded, any character matches; a bare `+` is a space in a query string, so it finds nothing.
      await expectFilter(`?reference=${encodeURIComponent('Facture n°7 & co + TVA')}`, [everything[0]!]);
      await expectFilter(`?reference=${encodeURIComponent('Facture n°7 & co')}+%2B+TVA`, [everything[0]!]);
      await expectFilter('?reference=Facture%20n%C2%B07%20%26%20co%20+%20TVA', []);
    });

    it('takes 1-200 characters of one line, like the payment’s reference; 400 naming the query parameter otherwise', async () => {
      await expectFilter(`?reference=${'r'.repeat(200)}`, [everything[1]!]);
      for (const reference of ['', 'r'.repeat(201), 'INV-1%0A', 'INV-1%E2%80%8B', 'INV-1&reference=INV-2']) {
        const response = await list(`?reference=${reference}`);
        expect(response.statusCode, reference).toBe(400);
        expect(response.json().error.code).toBe('VALIDATION_ERROR');
        expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'query', path: '/reference' })]);
      }
    });

    it('never shows another customer’s payment with the same reference', async () => {
      const alices = (await list('?reference=INV-1')).json().data as Payment[];
      expect(ids(alices)).not.toContain(bobsPayment.id);
      const bobs = await list('?reference=INV-1', bob);
      expect(bobs.json().meta.pagination.total).toBe(1);
      expect(ids(bobs.json().data)).toEqual([bobsPayment.id]);
      expect((await list('?reference=Batch', bob)).json()).toEqual({ data: [], meta: { pagination: { page: 1, limit: 50, total: 0 } } });
    });
  });

  describe('created_from (inclusive) and created_to (exclusive)', () => {
    it('bound the creation time alone or together, in any offset', async () => {
      const createdIn = (from: string, to: string) => everything.filter((payment) => payment.createdAt >= from && payment.createdAt < to);
      await expectFilter(`?created_from=${at(4)}`, createdIn(at(4), at(99)));
      expect(createdIn(at(4), at(99))).toHaveLength(8);
      await expectFilter(`?created_to=${at(3)}`, createdIn(at(0), at(3)));
      expect(createdIn(at(0), at(3))).toHaveLength(2);
      await expectFilter(`?created_from=${at(2)}&created_to=${at(5)}`, createdIn(at(2), at(5)));
      await expectFilter(`?created_from=${encodeURIComponent('2025-06-01T10:02:00+02:00')}&created_to=${encodeURIComponent('2025-06-01T10:05:00+02:00')}`, createdIn(at(2), at(5)));
      // Inclusive to the millisecond, exclusive to the millisecond.
      const oneMsAfter = new Date(start + 4 * minute + 1).toISOString();
      await expectFilter(`?created_from=${at(4)}&created_to=${oneMsAfter}`, [everything.find((payment) => payment.createdAt === at(4))!]);
      await expectFilter(`?created_from=${oneMsAfter}&created_to=${at(5)}`, []);
      await expectFilter(`?created_from=${at(5)}&created_to=${at(5)}`, []);
    });

    it.each([
      ['a created_from that is not a timestamp', '?created_from=yesterday', '/created_from'],
      ['a date without a time', '?created_from=2025-06-01', '/created_from'],
      ['a month 13', '?created_to=2025-13-01T00:00:00Z', '/created_to'],
      ['a timestamp without an offset', '?created_to=2025-06-01T08:00:00', '/created_to'],
    ])('refuses %s with 400 naming the parameter', async (_name, query, path) => {
      const response = await list(query);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'query', path })]);
    });
  });

  describe('combined', () => {
    it('reference and a creation window together', async () => {
      const inv1 = everything.filter((payment) => payment.reference === 'INV-1');
      await expectFilter(`?reference=INV-1&created_from=${at(2)}`, [inv1[0]!]);
      await expectFilter(`?reference=INV-1&created_to=${at(2)}`, [inv1[1]!]);
      await expectFilter(`?reference=INV-1&created_from=${at(1)}&created_to=${at(5)}`, inv1);
      await expectFilter(`?reference=INV-2&created_from=${at(3)}`, []);
    });

    it('paginate with the filtered total, and clamp the limit to 100', async () => {
      const batch = everything.filter((payment) => payment.reference === 'Batch');
      const second = await list(`?reference=Batch&created_from=${at(5)}&limit=2&page=2`);
      expect(second.json().meta.pagination).toEqual({ page: 2, limit: 2, total: 5 });
      expect(ids(second.json().data)).toEqual(ids(batch.slice(2, 4)));
      const last = await list(`?reference=Batch&limit=2&page=3`);
      expect(ids(last.json().data)).toEqual(ids(batch.slice(4)));
      expect((await list('?reference=Batch&page=4&limit=2')).json()).toEqual({ data: [], meta: { pagination: { page: 4, limit: 2, total: 5 } } });
      const clamped = await list('?reference=Batch&limit=500');
      expect(clamped.json().meta.pagination).toEqual({ page: 1, limit: 100, total: 5 });
    });

    it('ignore unknown parameters, as every list does', async () => {
      const known = (await list('?reference=INV-1')).json();
      const withUnknown = await list('?reference=INV-1&createdAfter=whenever&_=1700000000');
      expect(withUnknown.statusCode).toBe(200);
      expect(withUnknown.json()).toEqual(known);
    });
  });

  describe('reconciling a payment whose answer was lost', () => {
    it('finds with one call whether it committed (1: its id and status) or not (0: safe to retry with the same reference)', async () => {
      // Last month's payment with the reference the client now reuses: created_from keeps it out of the search.
      t.clock.set(at(-30 * 24 * 60));
      await pay(t, alice, { fromAccountId: main.id, payeeId: payee.id, amount: 3, currency: 'EUR', reference: 'rent-2025-06' });

      // The client notes the time before its attempts (here a minute early, for clock skew) and sends two payments.
      t.clock.set(at(100));
      const searchFrom = at(99);
      // The first commits, but its answer never reaches the client (a timeout, a reset): the client never reads it.
      // The test keeps it only to check that the payment found is this one.
      const lost = await payRequest(t, alice, { fromAccountId: main.id, payeeId: payee.id, amount: 25, currency: 'EUR', reference: 'order-7781' });
      expect(lost.statusCode).toBe(201);
      // The second never reached the server (the connection failed before the request was sent).

      const found = await list(`?reference=order-7781&created_from=${searchFrom}`);
      expect(found.statusCode).toBe(200);
      expect(found.json().meta.pagination.total).toBe(1);
      const [payment] = found.json().data as Payment[];
      expect(payment).toMatchObject({ id: lost.json().data.id, reference: 'order-7781', amount: '25.00', status: 'pending' });
      expect(payment).toEqual((await t.request({ url: `/payments/${payment!.id}`, key: alice.key })).json().data);

      // GET /transactions answers it too: the payment's outgoing record, with payment_id.
      const records = await t.request({ url: `/transactions?reference=order-7781&direction=outgoing&created_from=${searchFrom}`, key: alice.key });
      expect(records.json().meta.pagination.total).toBe(1);
      expect(records.json().data[0]).toMatchObject({ payment_id: payment!.id, reference: 'order-7781', amount: 25, status: 'pending' });

      const notFound = await list(`?reference=rent-2025-07&created_from=${searchFrom}`);
      expect(notFound.json()).toEqual({ data: [], meta: { pagination: { page: 1, limit: 50, total: 0 } } });
      // Last month's payment with the reused reference is outside the window.
      expect((await list(`?reference=rent-2025-06&created_from=${searchFrom}`)).json().meta.pagination.total).toBe(0);
      expect((await list('?reference=rent-2025-06')).json().meta.pagination.total).toBe(1);

      // 0: the retry, with the same reference, is the only payment of that reference.
      t.clock.set(at(102));
      const retried = await pay(t, alice, { fromAccountId: main.id, payeeId: payee.id, amount: 3, currency: 'EUR', reference: 'rent-2025-07' });
      const afterRetry = await list(`?reference=rent-2025-07&created_from=${searchFrom}`);
      expect(afterRetry.json().meta.pagination.total).toBe(1);
      expect(ids(afterRetry.json().data)).toEqual([retried.id]);
    });
  });
});
