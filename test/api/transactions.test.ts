import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TransactionPage } from '../../src/modules/transactions/schemas.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import {
  createPayee,
  createVirtualAccount,
  deposit,
  failingPaths,
  pay,
  settle,
  timestampPattern,
  transactionFields,
  uuidPattern,
} from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const start = Date.parse('2025-03-01T00:00:00.000Z');
const minute = 60_000;
const at = (minutes: number) => new Date(start + minutes * minute).toISOString();

/** A docs/spec.md §2 transaction record: the fields these tests compute with typed, the rest checked by expectRecordTypes. */
type Record_ = {
  id: string;
  account_id: string;
  virtual_account_id: string | null;
  direction: string;
  reference: string | null;
  amount: number;
  fee_amount: number;
  balance_before: number;
  balance_after: number;
  created_at: string;
  [field: string]: unknown;
};

/** docs/spec.md §2 transaction record: every field with the JSON type the spec gives it (uuid/string/number/timestamp). */
function expectRecordTypes(record: Record_) {
  expect(Object.keys(record).sort()).toEqual(transactionFields);
  expect(record.id).toMatch(uuidPattern);
  expect(record.fr_transaction_id).toMatch(/^txn_[0-9a-f]+$/);
  for (const field of ['transaction_type', 'currency', 'status', 'fee_currency', 'fr_owner_business_id', 'direction']) expect(typeof record[field], field).toBe('string');
  for (const field of ['amount', 'fee_amount', 'balance_before', 'balance_after'] as const) {
    expect(typeof record[field], field).toBe('number');
    expect(Number.isFinite(record[field])).toBe(true);
    // At most the currency's 2 decimals, printed exactly.
    expect(Math.round(record[field] * 100) / 100, field).toBe(record[field]);
  }
  for (const field of ['from_account_id', 'to_account_id', 'virtual_account_id', 'payee_id', 'payment_id']) {
    if (record[field] !== null) expect(record[field], field).toMatch(uuidPattern);
  }
  expect(record.account_id).toMatch(uuidPattern);
  for (const field of ['from_account_type', 'to_account_type', 'description', 'reference', 'counterparty_name', 'counterparty_account']) {
    if (record[field] !== null) expect(typeof record[field], field).toBe('string');
  }
  expect(record.created_at).toMatch(timestampPattern);
  if (record.completed_at !== null) expect(record.completed_at).toMatch(timestampPattern);
  expect(['incoming', 'outgoing']).toContain(record.direction);
  expect(['pending', 'completed', 'failed']).toContain(record.status);
}

describe('transactions', () => {
  let t: TestApp;
  let tina: TestCustomer;
  let bob: TestCustomer;
  let a: { id: string };
  let b: { id: string };
  let master: { id: string };
  let virtual: { id: string };
  let bobsRecord: Awaited<ReturnType<typeof deposit>>;
  /** Tina's whole history, newest first, as GET /transactions must return it. */
  let everything: Record_[];

  const list = (query = '', customer = tina) => t.request({ url: `/transactions${query}`, key: customer.key });

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    t.clock.set(at(0));
    tina = await t.createCustomer('Tina Ltd');
    bob = await t.createCustomer('Bob GmbH');
    a = await createFiatAccount(t, tina, { accountName: 'A', currency: 'EUR' });
    b = await createFiatAccount(t, tina, { accountName: 'B', currency: 'EUR' });
    master = await createFiatAccount(t, tina, { accountName: 'Master', currency: 'EUR' });
    virtual = await createVirtualAccount(t, tina, master.id);
    const payee = await createPayee(t, tina, 'EUR');

    // Records 1-100: deposits of 1.00 … 100.00 into A, one a minute (minute 1 … 100).
    for (let index = 1; index <= 100; index += 1) {
      t.clock.set(at(index));
      await deposit(t, tina, a.id, index, { reference: `D${index}` });
    }
    t.clock.set(at(200));
    const transfer = await pay(t, tina, { fromAccountId: a.id, toAccountId: b.id, amount: 10, currency: 'EUR', reference: 'Transfer' }); // 101
    t.clock.set(at(201));
    await settle(t, tina, transfer.id, 'completed'); // 102: incoming on B
    t.clock.set(at(202));
    await pay(t, tina, { fromAccountId: a.id, payeeId: payee.id, amount: 5, currency: 'EUR', reference: 'Pending' }); // 103
    t.clock.set(at(203));
    const bounced = await pay(t, tina, { fromAccountId: a.id, payeeId: payee.id, amount: 7, currency: 'EUR', reference: 'Bounced' }); // 104
    t.clock.set(at(204));
    await settle(t, tina, bounced.id, 'failed'); // 105: payment_return on A
    t.clock.set(at(205));
    await deposit(t, tina, virtual.id, 20, { reference: 'Into VA' }); // 106

    const bobsAccount = await createFiatAccount(t, bob, { accountName: 'Bob', currency: 'EUR' });
    // The same reference as one of Tina's: a reference filter must never show it to her.
    bobsRecord = await deposit(t, bob, bobsAccount.id, 1, { reference: 'D42' });

    const first = (await list('?limit=100')).json().data as Record_[];
    const second = (await list('?limit=100&page=2')).json().data as Record_[];
    everything = [...first, ...second];
  });
  afterAll(async () => t.close());

  describe('GET /transactions', () => {
    it('defaults to page 1 and limit 50, reporting meta.pagination { page, limit, total } with the exact total', async () => {
      const response = await list();
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(Object.keys(body).sort()).toEqual(['data', 'meta']);
      expect(body.meta).toEqual({ pagination: { page: 1, limit: 50, total: 106 } });
      expect(body.data).toHaveLength(50);
      for (const value of Object.values(body.meta.pagination)) expect(Number.isInteger(value)).toBe(true);
    });

    it('writes a page byte for byte as the serializer of the page schema does: field order, types, nothing more', async () => {
      // The page is answered with JSON.stringify (http/plain-json.ts); the reference is Fastify's serializer of the
      // route's 200 schema given the same values, which writes the schema's order whatever order the page has.
      let values: unknown;
      const reference = Fastify();
      reference.get('/', { schema: { response: { 200: TransactionPage } } }, async () => values);
      try {
        for (const query of ['?limit=100', '?limit=100&page=2', '?limit=3&direction=outgoing', '?page=99']) {
          const response = await list(query);
          expect(response.statusCode).toBe(200);
          values = JSON.parse(response.body);
          const expected = await reference.inject({ url: '/' });
          expect(response.body, query).toBe(expected.body);
          expect(response.headers['content-type']).toBe(expected.headers['content-type']);
          expect(response.headers['content-length']).toBe(expected.headers['content-length']);
        }
      } finally {
        await reference.close();
      }
    });

    it('returns newest first, every record with every spec §2 field typed as the spec says', async () => {
      expect(everything).toHaveLength(106);
      expect(new Set(everything.map((record) => record.id)).size).toBe(106);
      for (const record of everything) expectRecordTypes(record);
      for (let index = 1; index < everything.length; index += 1) {
        expect(everything[index - 1]!.created_at >= everything[index]!.created_at).toBe(true);
      }
      expect(everything.map((record) => record.reference).slice(0, 6)).toEqual(['Into VA', 'Bounced', 'Bounced', 'Pending', 'Transfer', 'Transfer']);
      expect(everything.slice(0, 6).map((record) => [record.transaction_type, record.direction, record.status])).toEqual([
        ['deposit', 'incoming', 'completed'],
        ['payment_return', 'incoming', 'completed'],
        ['payment', 'outgoing', 'failed'],
        ['payment', 'outgoing', 'pending'],
        ['payment', 'incoming', 'completed'],
        ['payment', 'outgoing', 'completed'],
      ]);
      expect(everything.slice(6).map((record) => record.reference)).toEqual(Array.from({ length: 100 }, (_, index) => `D${100 - index}`));
      expect(everything.every((record) => record.fr_owner_business_id === tina.frOwnerBusinessId)).toBe(true);
    });

    it('chains balance_before to the previous balance_after on every account', async () => {
      const oldestFirst = [...everything].reverse();
      const lastAfter = new Map<string, number>();
      for (const record of oldestFirst) {
        const key = record.virtual_account_id ?? record.account_id;
        expect(record.balance_before, `${record.reference}`).toBe(lastAfter.get(key) ?? 0);
        const change = record.direction === 'incoming' ? record.amount : -(record.amount + record.fee_amount);
        expect(Math.round((record.balance_after - record.balance_before) * 100)).toBe(Math.round(change * 100));
        lastAfter.set(key, record.balance_after);
      }
    });

    it('clamps limit to 100 and reports the limit applied: limit=500 → 100', async () => {
      const response = await list('?limit=500');
      expect(response.statusCode).toBe(200);
      expect(response.json().meta.pagination).toEqual({ page: 1, limit: 100, total: 106 });
      expect(response.json().data).toHaveLength(100);
      const page2 = (await list('?limit=500&page=2')).json();
      expect(page2.meta.pagination).toEqual({ page: 2, limit: 100, total: 106 });
      expect(page2.data.map((record: Record_) => record.id)).toEqual(everything.slice(100).map((record) => record.id));
      expect((await list('?limit=101')).json().meta.pagination.limit).toBe(100);
      // Any larger limit is clamped, however large, never refused.
      for (const huge of ['5000000000', '99999999999999999999']) {
        const clamped = await list(`?limit=${huge}`);
        expect(clamped.statusCode, clamped.body).toBe(200);
        expect(clamped.json().meta.pagination).toEqual({ page: 1, limit: 100, total: 106 });
      }
      expect((await list('?limit=100')).json().data).toHaveLength(100);
      expect((await list('?limit=1')).json().data.map((record: Record_) => record.id)).toEqual([everything[0]!.id]);
    });

    it('pages through the history without gaps or repeats', async () => {
      for (const limit of [7, 50]) {
        const pages: Record_[] = [];
        for (let page = 1; page <= Math.ceil(106 / limit); page += 1) {
          const body = (await list(`?page=${page}&limit=${limit}`)).json();
          expect(body.meta.pagination).toEqual({ page, limit, total: 106 });
          pages.push(...body.data);
        }
        expect(pages.map((record) => record.id)).toEqual(everything.map((record) => record.id));
      }
      expect((await list('?page=3')).json().data).toHaveLength(6);
    });

    it.each([['?page=4'], ['?page=1000000'], ['?page=3&limit=100&status=completed'], ['?page=4&account_id=PLACEHOLDER']])(
      'answers a page beyond the end (%s) with an empty data array and the right total',
      async (query) => {
        const response = await list(query.replace('PLACEHOLDER', a.id));
        expect(response.statusCode).toBe(200);
        expect(response.json().data).toEqual([]);
        const expectedTotal = query.includes('status') ? 104 : query.includes('account_id') ? 104 : 106;
        expect(response.json().meta.pagination.total).toBe(expectedTotal);
      },
    );

    it.each([
      ['page 0', '?page=0', '/page'],
      ['limit 0', '?limit=0', '/limit'],
      ['a negative limit', '?limit=-1', '/limit'],
      ['a fractional page', '?page=1.5', '/page'],
      ['a page that is not a number', '?page=abc', '/page'],
      ['an unknown status', '?status=settled', '/status'],
      ['an unknown direction', '?direction=sideways', '/direction'],
      ['an account_id that is not a UUID', '?account_id=acc_1', '/account_id'],
      ['a created_from that is not a timestamp', '?created_from=yesterday', '/created_from'],
      ['a created_to that is not a timestamp', '?created_to=2025-13-01', '/created_to'],
    ])('refuses %s with 400 on the query field', async (_name, query, path) => {
      const response = await list(query);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      const fields = response.json().error.details.fields as { location: string; path: string }[];
      expect(fields.map((field) => field.path)).toContain(path);
      expect(fields.every((field) => field.location === 'query')).toBe(true);
    });

    describe('filters (additive, docs/transactions.md)', () => {
      const expectFilter = async (query: string, expected: Record_[]) => {
        const response = await list(query.includes('limit') ? query : `${query}&limit=100`);
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json().meta.pagination.total).toBe(expected.length);
        expect(response.json().data.map((record: Record_) => record.id)).toEqual(expected.slice(0, 100).map((record) => record.id));
      };

      it('account_id: a fiat account’s records, including its virtual accounts’; or one virtual account’s', async () => {
        await expectFilter(`?account_id=${a.id}`, everything.filter((record) => record.account_id === a.id));
        expect(everything.filter((record) => record.account_id === a.id)).toHaveLength(104);
        await expectFilter(`?account_id=${b.id}`, everything.filter((record) => record.account_id === b.id));
        await expectFilter(`?account_id=${master.id}`, [everything[0]!]);
        await expectFilter(`?account_id=${virtual.id}`, [everything[0]!]);
        await expectFilter(`?account_id=${a.id.toUpperCase()}`, everything.filter((record) => record.account_id === a.id));
      });

      it('status and direction', async () => {
        await expectFilter('?status=pending', everything.filter((record) => record.status === 'pending'));
        await expectFilter('?status=failed', everything.filter((record) => record.status === 'failed'));
        await expectFilter('?status=completed', everything.filter((record) => record.status === 'completed'));
        expect(everything.filter((record) => record.status === 'completed')).toHaveLength(104);
        await expectFilter('?direction=outgoing', everything.filter((record) => record.direction === 'outgoing'));
        await expectFilter('?direction=incoming', everything.filter((record) => record.direction === 'incoming'));
        await expectFilter(`?direction=outgoing&status=pending&account_id=${a.id}`, [everything[3]!]);
      });

      it('created_from (inclusive) and created_to (exclusive), in any offset', async () => {
        const between = everything.filter((record) => record.created_at >= at(10) && record.created_at < at(20));
        expect(between.map((record) => record.reference)).toEqual(Array.from({ length: 10 }, (_, index) => `D${19 - index}`));
        await expectFilter(`?created_from=${at(10)}&created_to=${at(20)}`, between);
        await expectFilter(`?created_from=${encodeURIComponent('2025-03-01T01:10:00+01:00')}&created_to=${encodeURIComponent('2025-03-01T01:20:00+01:00')}`, between);
        await expectFilter(`?created_from=${at(200)}`, everything.slice(0, 6));
        await expectFilter(`?created_to=${at(2)}`, [everything[105]!]);
      });

      it('paginates a filtered list with the filtered total', async () => {
        const ofA = everything.filter((record) => record.account_id === a.id);
        const response = await list(`?account_id=${a.id}&limit=10&page=11`);
        expect(response.json().meta.pagination).toEqual({ page: 11, limit: 10, total: 104 });
        expect(response.json().data.map((record: Record_) => record.id)).toEqual(ofA.slice(100).map((record) => record.id));
        const clamped = await list(`?account_id=${a.id}&limit=500`);
        expect(clamped.json().meta.pagination).toEqual({ page: 1, limit: 100, total: 104 });
        expect(clamped.json().data).toHaveLength(100);
      });

      it('reference: exact and case-sensitive, one record or several, combined with the other filters', async () => {
        const byReference = (reference: string) => everything.filter((record) => record.reference === reference);
        await expectFilter('?reference=D42', byReference('D42'));
        expect(byReference('D42')).toHaveLength(1);
        // Not a prefix, not another case, not trimmed: the reference a client chose, exactly.
        await expectFilter('?reference=D', []);
        await expectFilter('?reference=d42', []);
        await expectFilter('?reference=D42%20', []);
        await expectFilter(`?reference=${encodeURIComponent('Into VA')}`, [everything[0]!]);
        // A transfer between own accounts: its outgoing record and, once completed, the incoming one on the target.
        await expectFilter('?reference=Transfer', [everything[4]!, everything[5]!]);
        await expectFilter('?reference=Transfer&direction=outgoing', [everything[5]!]);
        await expectFilter(`?reference=Transfer&account_id=${b.id}`, [everything[4]!]);
        await expectFilter('?reference=Bounced&status=failed', [everything[2]!]);
        await expectFilter(`?reference=Transfer&created_from=${at(201)}`, [everything[4]!]);
        await expectFilter(`?reference=Transfer&created_to=${at(201)}`, [everything[5]!]);
        await expectFilter(`?reference=D42&created_from=${at(43)}`, []);
      });

      it('reference: paginated with the filtered total', async () => {
        const first = await list('?reference=Transfer&limit=1');
        expect(first.json().meta.pagination).toEqual({ page: 1, limit: 1, total: 2 });
        expect(first.json().data.map((record: Record_) => record.id)).toEqual([everything[4]!.id]);
        const second = await list('?reference=Transfer&limit=1&page=2');
        expect(second.json().meta.pagination).toEqual({ page: 2, limit: 1, total: 2 });
        expect(second.json().data.map((record: Record_) => record.id)).toEqual([everything[5]!.id]);
        expect((await list('?reference=Transfer&limit=1&page=3')).json()).toEqual({ data: [], meta: { pagination: { page: 3, limit: 1, total: 2 } } });
      });

      it('reference: 1-200 characters of one line, like a payment’s (400 naming the query parameter otherwise)', async () => {
        const longest = await list(`?reference=${'r'.repeat(200)}`);
        expect(longest.statusCode, longest.body).toBe(200);
        expect(longest.json().meta.pagination.total).toBe(0);
        for (const reference of ['', 'r'.repeat(201), 'D42%0A', 'D42%E2%80%AE']) {
          const response = await list(`?reference=${reference}`);
          expect(response.statusCode, reference).toBe(400);
          expect(response.json().error.code).toBe('VALIDATION_ERROR');
          expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'query', path: '/reference' })]);
        }
      });

      it('shows nothing of another customer’s account or records, even with their reference', async () => {
        const response = await list(`?account_id=${bobsRecord.account_id}`);
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual({ data: [], meta: { pagination: { page: 1, limit: 50, total: 0 } } });
        const tinas = (await list('?reference=D42')).json().data as Record_[];
        expect(tinas.map((record) => record.id)).not.toContain(bobsRecord.id);
        expect((await list('?reference=D42', bob)).json()).toEqual({ data: [bobsRecord], meta: { pagination: { page: 1, limit: 50, total: 1 } } });
      });
    });

    it('shows each customer only its own history', async () => {
      const bobs = (await list('', bob)).json();
      expect(bobs.meta.pagination.total).toBe(1);
      expect(bobs.data).toEqual([bobsRecord]);
      expect(everything.some((record) => record.id === bobsRecord.id)).toBe(false);
    });

    it('answers a customer without transactions with an empty page and total 0', async () => {
      const empty = await t.createCustomer('Empty');
      expect((await list('', empty)).json()).toEqual({ data: [], meta: { pagination: { page: 1, limit: 50, total: 0 } } });
    });

    it('answers the same under /v1 and /v2', async () => {
      const plain = (await list('?limit=3')).json();
      for (const prefix of ['/v1', '/v2']) {
        const response = await t.request({ url: `${prefix}/transactions?limit=3`, key: tina.key });
        expect(response.statusCode).toBe(200);
        expect(response.json()).toEqual(plain);
      }
    });

    it('needs a key and the transactions:read scope', async () => {
      expect((await t.request({ url: '/transactions' })).statusCode).toBe(401);
      const other = await t.createKey(tina.id, { scopes: ['payments:read'] });
      const refused = await t.request({ url: '/transactions', key: other.key });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
      const reader = await t.createKey(tina.id, { scopes: ['transactions:read'] });
      expect((await t.request({ url: '/transactions', key: reader.key })).statusCode).toBe(200);
    });
  });

  describe('GET /transactions/{id}', () => {
    it('returns the record exactly as the list shows it', async () => {
      for (const record of everything.slice(0, 7)) {
        const response = await t.request({ url: `/transactions/${record.id}`, key: tina.key });
        expect(response.statusCode).toBe(200);
        expect(Object.keys(response.json())).toEqual(['data']);
        expect(response.json().data).toEqual(record);
      }
      const upper = await t.request({ url: `/transactions/${everything[0]!.id.toUpperCase()}`, key: tina.key });
      expect(upper.json().data).toEqual(everything[0]);
    });

    it('answers 404 for another customer’s record exactly as for an unknown one, 400 for a malformed id', async () => {
      const foreign = await t.request({ url: `/transactions/${bobsRecord.id}`, key: tina.key });
      const unknown = await t.request({ url: `/transactions/${unknownId}`, key: tina.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
      const malformed = await t.request({ url: '/transactions/123', key: tina.key });
      expect(malformed.statusCode).toBe(400);
      expect(failingPaths(malformed)).toEqual(['/id']);
    });
  });
});
