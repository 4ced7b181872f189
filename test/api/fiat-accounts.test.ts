import { isValidIBAN, isValidBIC, extractIBAN } from 'ibantools';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBusiness, createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

function abaChecksumHolds(routing: string): boolean {
  const digits = [...routing].map(Number);
  const weights = [3, 7, 1, 3, 7, 1, 3, 7, 1];
  return digits.length === 9 && digits.reduce((sum, digit, index) => sum + digit * (weights[index] ?? 0), 0) % 10 === 0;
}

describe('fiat accounts', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
  });
  afterAll(async () => t.close());

  const create = (customer: TestCustomer, body: unknown) =>
    t.request({ method: 'POST', url: '/fiat-accounts', key: customer.key, csrf: true, body });

  it('creates a EUR account with every field of the spec §2 record, typed as the spec says', async () => {
    const response = await create(alice, { accountName: 'Operating EUR', currency: 'EUR', ibanCountry: 'DE' });
    expect(response.statusCode).toBe(201);
    const account = response.json().data;
    expect(Object.keys(account).sort()).toEqual(
      [
        'id', 'fr_account_id', 'account_name', 'currency', 'balance', 'status', 'is_master', 'linked_business_id',
        'fr_owner_business_id', 'iban', 'bic', 'account_number', 'sort_code', 'routing_number', 'created_at', 'updated_at',
      ].sort(),
    );
    expect(account.id).toMatch(uuidPattern);
    expect(account.fr_account_id).toMatch(/^facc_[0-9a-f]+$/);
    expect(account.account_name).toBe('Operating EUR');
    expect(account.currency).toBe('EUR');
    expect(account.balance).toBe(0);
    expect(typeof account.balance).toBe('number');
    expect(account.status).toBe('active');
    expect(account.is_master).toBe(true);
    expect(account.linked_business_id).toBeNull();
    expect(account.fr_owner_business_id).toBe(alice.frOwnerBusinessId);
    expect(account.iban.startsWith('DE')).toBe(true);
    expect(isValidIBAN(account.iban)).toBe(true);
    expect(isValidBIC(account.bic)).toBe(true);
    expect(typeof account.account_number).toBe('string');
    expect(account.created_at).toMatch(timestampPattern);
    expect(account.updated_at).toBe(account.created_at);
  });

  it.each(['DE', 'DK', 'GB', 'LU'] as const)('issues an IBAN of %s with valid ISO 13616 check digits', async (country) => {
    const response = await create(alice, { accountName: `IBAN ${country}`, currency: 'EUR', ibanCountry: country });
    expect(response.statusCode).toBe(201);
    const { iban } = response.json().data;
    expect(iban.slice(0, 2)).toBe(country);
    expect(isValidIBAN(iban)).toBe(true);
    expect(extractIBAN(iban).valid).toBe(true);
  });

  it('gives GBP accounts a 6-digit sort code and 8-digit account number matching their GB IBAN', async () => {
    const response = await create(alice, { accountName: 'Sterling', currency: 'GBP', ibanCountry: 'GB' });
    const account = response.json().data;
    expect(account.sort_code).toMatch(/^\d{6}$/);
    expect(account.account_number).toMatch(/^\d{8}$/);
    expect(account.routing_number).toBeNull();
    expect(account.iban).toContain(`${account.sort_code}${account.account_number}`);
    expect(isValidIBAN(account.iban)).toBe(true);
  });

  it('gives USD accounts an ABA routing number with a valid checksum and an account number', async () => {
    const response = await create(alice, { accountName: 'Dollars', currency: 'USD' });
    const account = response.json().data;
    expect(abaChecksumHolds(account.routing_number)).toBe(true);
    expect(account.account_number).toMatch(/^\d{6,17}$/);
    expect(account.sort_code).toBeNull();
    expect(isValidIBAN(account.iban)).toBe(true);
  });

  it('marks an account linked to a business end user as not master', async () => {
    const business = await createBusiness(t, alice);
    const response = await create(alice, { accountName: 'For a business', currency: 'EUR', linkedBusinessId: business.id });
    expect(response.statusCode).toBe(201);
    expect(response.json().data.is_master).toBe(false);
    expect(response.json().data.linked_business_id).toBe(business.id);
  });

  it('refuses a linkedBusinessId of another customer exactly like an unknown id', async () => {
    const bobsBusiness = await createBusiness(t, bob);
    const foreign = await create(alice, { accountName: 'x', currency: 'EUR', linkedBusinessId: bobsBusiness.id });
    const unknown = await create(alice, { accountName: 'x', currency: 'EUR', linkedBusinessId: '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f' });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(unknown.json());
  });

  it('refuses a linkedBusinessId that is an individual end user with 422', async () => {
    const individual = await createIndividual(t, alice);
    const response = await create(alice, { accountName: 'x', currency: 'EUR', linkedBusinessId: individual.id });
    expect(response.statusCode).toBe(422);
    expect(response.json().error.code).toBe('END_USER_NOT_BUSINESS');
  });

  describe('validation boundaries', () => {
    it.each([
      ['accountName of 1 character', { accountName: 'a', currency: 'EUR' }],
      ['accountName of 200 characters', { accountName: 'a'.repeat(200), currency: 'EUR' }],
      ['accountName of 200 non-ASCII characters', { accountName: 'é'.repeat(200), currency: 'EUR' }],
      ['each currency: USD', { accountName: 'x', currency: 'USD' }],
      ['each currency: GBP', { accountName: 'x', currency: 'GBP' }],
      ['umbrellaLinkId as a UUID', { accountName: 'x', currency: 'EUR', umbrellaLinkId: '0b7c3c3e-1f7a-4b9e-8d2a-5c6e7f8a9b0c' }],
    ])('accepts %s', async (_label, body) => {
      const response = await create(alice, body);
      expect(response.statusCode).toBe(201);
    });

    it.each([
      ['accountName of 0 characters', { accountName: '', currency: 'EUR' }, '/accountName'],
      ['accountName of 201 characters', { accountName: 'a'.repeat(201), currency: 'EUR' }, '/accountName'],
      ['accountName missing', { currency: 'EUR' }, '/accountName'],
      ['accountName as a number', { accountName: 42, currency: 'EUR' }, '/accountName'],
      ['currency JPY', { accountName: 'x', currency: 'JPY' }, '/currency'],
      ['currency missing', { accountName: 'x' }, '/currency'],
      ['ibanCountry FR', { accountName: 'x', currency: 'EUR', ibanCountry: 'FR' }, '/ibanCountry'],
      ['a non-UUID linkedBusinessId', { accountName: 'x', currency: 'EUR', linkedBusinessId: 'business-1' }, '/linkedBusinessId'],
      ['a non-UUID umbrellaLinkId', { accountName: 'x', currency: 'EUR', umbrellaLinkId: '123' }, '/umbrellaLinkId'],
      ['an unknown field', { accountName: 'x', currency: 'EUR', balance: 100 }, '/balance'],
    ])('refuses %s with 400 naming the field', async (_label, body, path) => {
      const response = await create(alice, body);
      expect(response.statusCode).toBe(400);
      const { error } = response.json();
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', path })]));
    });

    it('lists every failing field at once', async () => {
      const response = await create(alice, { accountName: '', currency: 'JPY', ibanCountry: 'FR', extra: true });
      expect(response.statusCode).toBe(400);
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(paths).toEqual(['/accountName', '/currency', '/extra', '/ibanCountry']);
    });

    it('refuses a body that is not an object', async () => {
      for (const body of [[], 'text', 42, null]) {
        const response = await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
        expect(response.statusCode).toBe(400);
        expect(response.json().error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('writes nothing when validation fails', async () => {
      const before = (await t.request({ url: '/fiat-accounts', key: alice.key })).json().data.length;
      await create(alice, { accountName: 'a'.repeat(201), currency: 'EUR' });
      const after = (await t.request({ url: '/fiat-accounts', key: alice.key })).json().data.length;
      expect(after).toBe(before);
    });
  });

  it('lists only the caller’s accounts, oldest first, as a data array', async () => {
    const response = await t.request({ url: '/fiat-accounts', key: alice.key });
    expect(response.statusCode).toBe(200);
    const accounts = response.json().data;
    expect(Array.isArray(accounts)).toBe(true);
    expect(accounts.length).toBeGreaterThan(0);
    expect(accounts.every((account: { fr_owner_business_id: string }) => account.fr_owner_business_id === alice.frOwnerBusinessId)).toBe(true);
    const created = accounts.map((account: { created_at: string }) => account.created_at);
    expect([...created].sort()).toEqual(created);
    expect((await t.request({ url: '/fiat-accounts', key: bob.key })).json().data).toEqual([]);
  });

  it('gets one account by id, through every version prefix', async () => {
    const created = (await create(alice, { accountName: 'By id', currency: 'EUR' })).json().data;
    for (const prefix of ['', '/v1', '/v2']) {
      const response = await t.request({ url: `${prefix}/fiat-accounts/${created.id}`, key: alice.key });
      expect(response.statusCode).toBe(200);
      expect(response.json().data).toEqual(created);
    }
  });

  it('answers another customer’s account id exactly like a random UUID', async () => {
    const alices = (await create(alice, { accountName: 'Private', currency: 'EUR' })).json().data;
    const foreign = await t.request({ url: `/fiat-accounts/${alices.id}`, key: bob.key });
    const unknown = await t.request({ url: '/fiat-accounts/3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b', key: bob.key });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(unknown.json());
    expect(foreign.json().error.code).toBe('NOT_FOUND');
  });

  it('refuses a malformed account id with 400', async () => {
    const response = await t.request({ url: '/fiat-accounts/not-a-uuid', key: alice.key });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.details.fields[0]).toMatchObject({ location: 'params', path: '/id' });
  });

  it('writes a fiat_account.created event to the outbox with the account', async () => {
    const account = (await create(alice, { accountName: 'Evented', currency: 'GBP' })).json().data;
    const events = await t.storage.db.selectFrom('outbox_events').selectAll().where('event_type', '=', 'fiat_account.created').execute();
    const event = events.map((row) => JSON.parse(row.payload)).find((payload) => payload.data.id === account.id);
    expect(event).toBeDefined();
    expect(event.type).toBe('fiat_account.created');
    expect(event.data).toEqual(account);
    expect(events.find((row) => JSON.parse(row.payload).data.id === account.id)?.customer_id).toBe(alice.id);
  });

  it('needs the fiat-accounts scope', async () => {
    const readOnly = await t.createKey(alice.id, { scopes: ['fiat-accounts:read'] });
    const list = await t.request({ url: '/fiat-accounts', key: readOnly.key });
    expect(list.statusCode).toBe(200);
    const write = await t.request({ method: 'POST', url: '/fiat-accounts', key: readOnly.key, csrf: true, body: { accountName: 'x', currency: 'EUR' } });
    expect(write.statusCode).toBe(403);
    expect(write.json().error.code).toBe('INSUFFICIENT_SCOPE');
    const other = await t.createKey(alice.id, { scopes: ['payments:write'] });
    expect((await t.request({ url: '/fiat-accounts', key: other.key })).statusCode).toBe(403);
  });
});
