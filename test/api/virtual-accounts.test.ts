import { extractIBAN, isValidBIC, isValidIBAN } from 'ibantools';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import * as outbox from '../../src/events/outbox.js';
import { createBusiness, createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

// The outbox append is wrapped so one test can make it fail after writing, and prove the row rolls back with it.
vi.mock('../../src/events/outbox.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../src/events/outbox.js')>();
  return { ...actual, appendEvent: vi.fn(actual.appendEvent) };
});

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const unknownId = '6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';
const unknownId2 = '7b2e1d3f-4c5e-4f60-9b0c-1d2e3f4a5b6c';

/** Every field of the docs/spec.md §2 virtual account record, plus the additive `balance`. */
const recordFields = [
  'id', 'end_user_id', 'master_fiat_account_id', 'fr_virtual_account_id', 'account_name', 'currency', 'status',
  'fr_owner_business_id', 'iban', 'bic', 'bank_name', 'account_holder_name', 'bank_country', 'account_number',
  'sort_code', 'created_at', 'updated_at', 'balance',
].sort();

type Account = Awaited<ReturnType<typeof createFiatAccount>>;

describe('virtual accounts', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let eurMaster: Account;
  let gbpMaster: Account;
  let usdMaster: Account;
  let luEurMaster: Account;
  let nonMaster: Account;
  let bobsMaster: Account;
  let bobsNonMasterGbp: Account;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    eurMaster = await createFiatAccount(t, alice, { accountName: 'EUR master', currency: 'EUR', ibanCountry: 'DE' });
    gbpMaster = await createFiatAccount(t, alice, { accountName: 'GBP master', currency: 'GBP', ibanCountry: 'GB' });
    usdMaster = await createFiatAccount(t, alice, { accountName: 'USD master', currency: 'USD' });
    luEurMaster = await createFiatAccount(t, alice, { accountName: 'EUR master in LU', currency: 'EUR', ibanCountry: 'LU' });
    const business = await createBusiness(t, alice);
    nonMaster = await createFiatAccount(t, alice, { accountName: 'Linked', currency: 'EUR', linkedBusinessId: business.id });
    bobsMaster = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    const bobsBusiness = await createBusiness(t, bob);
    bobsNonMasterGbp = await createFiatAccount(t, bob, { accountName: 'Bob linked', currency: 'GBP', linkedBusinessId: bobsBusiness.id });
  });
  afterAll(async () => t.close());

  const create = (customer: TestCustomer, body: unknown) =>
    t.request({ method: 'POST', url: '/virtual-accounts', key: customer.key, csrf: true, body });
  const eurBody = (overrides: Record<string, unknown> = {}) => ({ accountName: 'Collections', masterFiatAccountId: eurMaster.id, currency: 'EUR', ...overrides });
  const countRows = async () => Number((await t.storage.db.selectFrom('virtual_accounts').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
  const countEvents = async () =>
    Number(
      (await t.storage.db.selectFrom('outbox_events').select((eb) => eb.fn.countAll().as('n')).where('event_type', '=', 'virtual_account.created').executeTakeFirstOrThrow()).n,
    );

  describe('POST /virtual-accounts', () => {
    it('creates a virtual account with every field of the spec §2 record, typed as the spec says', async () => {
      const response = await create(alice, eurBody({ accountName: 'Customer collections' }));
      expect(response.statusCode).toBe(201);
      const account = response.json().data;
      expect(Object.keys(account).sort()).toEqual(recordFields);
      expect(account.id).toMatch(uuidPattern);
      expect(account.end_user_id).toBeNull();
      expect(account.master_fiat_account_id).toBe(eurMaster.id);
      expect(account.fr_virtual_account_id).toMatch(/^vacc_[0-9a-f]+$/);
      expect(account.account_name).toBe('Customer collections');
      expect(account.currency).toBe('EUR');
      expect(account.status).toBe('active');
      expect(account.fr_owner_business_id).toBe(alice.frOwnerBusinessId);
      expect(typeof account.iban).toBe('string');
      expect(isValidIBAN(account.iban)).toBe(true);
      expect(account.iban).not.toBe(eurMaster.iban);
      expect(isValidBIC(account.bic)).toBe(true);
      expect(typeof account.bank_name).toBe('string');
      expect(account.bank_name.length).toBeGreaterThan(0);
      expect(account.account_holder_name).toBe('Alice Ltd');
      expect(account.bank_country).toMatch(/^[A-Z]{2}$/);
      expect(account.bank_country).toBe(account.iban.slice(0, 2));
      expect(typeof account.account_number).toBe('string');
      expect(account.account_number).toMatch(/^\d+$/);
      expect(account.sort_code).toBeNull();
      expect(account.balance).toBe(0);
      expect(typeof account.balance).toBe('number');
      expect(account.created_at).toMatch(timestampPattern);
      expect(account.updated_at).toBe(account.created_at);
    });

    it('holds the account in an individual end user’s full name', async () => {
      const person = await createIndividual(t, alice, { firstName: 'Ada', middleName: 'King', lastName: 'Lovelace' });
      const response = await create(alice, eurBody({ endUserId: person.id }));
      expect(response.statusCode).toBe(201);
      const account = response.json().data;
      expect(account.end_user_id).toBe(person.id);
      expect(account.end_user_id).toMatch(uuidPattern);
      expect(account.account_holder_name).toBe('Ada King Lovelace');
    });

    it('holds the account in a business end user’s company name', async () => {
      const business = await createBusiness(t, alice, {}, { companyName: 'Difference Engines plc' });
      const response = await create(alice, eurBody({ endUserId: business.id }));
      expect(response.statusCode).toBe(201);
      expect(response.json().data.end_user_id).toBe(business.id);
      expect(response.json().data.account_holder_name).toBe('Difference Engines plc');
    });

    it('accepts ids in upper case and stores them in canonical lower case', async () => {
      const person = await createIndividual(t, alice);
      const response = await create(alice, eurBody({ masterFiatAccountId: eurMaster.id.toUpperCase(), endUserId: person.id.toUpperCase() }));
      expect(response.statusCode).toBe(201);
      expect(response.json().data.master_fiat_account_id).toBe(eurMaster.id);
      expect(response.json().data.end_user_id).toBe(person.id);
    });

    it('defaults ibanCountry to the country of the master account’s IBAN', async () => {
      const de = (await create(alice, eurBody())).json().data;
      expect(de.iban.slice(0, 2)).toBe('DE');
      expect(de.bank_country).toBe('DE');
      const lu = (await create(alice, eurBody({ masterFiatAccountId: luEurMaster.id }))).json().data;
      expect(lu.iban.slice(0, 2)).toBe('LU');
      expect(lu.bank_country).toBe('LU');
      const usd = (await create(alice, { accountName: 'Dollars', masterFiatAccountId: usdMaster.id, currency: 'USD' })).json().data;
      expect(usd.iban.slice(0, 2)).toBe(String(usdMaster.iban).slice(0, 2));
    });

    it.each(['DE', 'DK', 'GB', 'LU'] as const)('issues an IBAN of %s with valid ISO 13616 check digits and a matching BIC', async (country) => {
      const response = await create(alice, eurBody({ accountName: `IBAN ${country}`, ibanCountry: country }));
      expect(response.statusCode).toBe(201);
      const { iban, bic, bank_country } = response.json().data;
      expect(iban.slice(0, 2)).toBe(country);
      expect(isValidIBAN(iban)).toBe(true);
      expect(extractIBAN(iban).valid).toBe(true);
      expect(isValidBIC(bic)).toBe(true);
      expect(bic.slice(4, 6)).toBe(country);
      expect(bank_country).toBe(country);
    });

    it('gives GBP virtual accounts a 6-digit sort code and 8-digit account number matching their GB IBAN', async () => {
      const response = await create(alice, { accountName: 'Sterling', masterFiatAccountId: gbpMaster.id, currency: 'GBP' });
      expect(response.statusCode).toBe(201);
      const account = response.json().data;
      expect(account.currency).toBe('GBP');
      expect(account.bank_country).toBe('GB');
      expect(account.sort_code).toMatch(/^\d{6}$/);
      expect(account.account_number).toMatch(/^\d{8}$/);
      expect(account.iban).toContain(`${account.sort_code}${account.account_number}`);
      expect(isValidIBAN(account.iban)).toBe(true);
    });

    it('gives USD virtual accounts an IBAN and account number but no sort code', async () => {
      const response = await create(alice, { accountName: 'Dollars', masterFiatAccountId: usdMaster.id, currency: 'USD' });
      expect(response.statusCode).toBe(201);
      const account = response.json().data;
      expect(account.currency).toBe('USD');
      expect(account.sort_code).toBeNull();
      expect(account.account_number).toMatch(/^\d+$/);
      expect(isValidIBAN(account.iban)).toBe(true);
    });

    it('presents the stored balance as a JSON number in major units', async () => {
      const account = (await create(alice, eurBody({ accountName: 'Balance' }))).json().data;
      await t.storage.db.updateTable('virtual_accounts').set({ balance_minor: 1234n }).where('id', '=', account.id).execute();
      const read = (await t.request({ url: `/virtual-accounts/${account.id}`, key: alice.key })).json().data;
      expect(read.balance).toBe(12.34);
      expect(typeof read.balance).toBe('number');
    });
  });

  describe('business rules', () => {
    it('refuses a fiat account that is not a master with 422 ACCOUNT_NOT_MASTER', async () => {
      const response = await create(alice, eurBody({ masterFiatAccountId: nonMaster.id }));
      expect(response.statusCode).toBe(422);
      expect(response.json().error.code).toBe('ACCOUNT_NOT_MASTER');
    });

    it.each([
      ['GBP', 'EUR master', () => eurMaster.id],
      ['EUR', 'GBP master', () => gbpMaster.id],
      ['EUR', 'USD master', () => usdMaster.id],
    ])('refuses currency %s under a %s with 422 CURRENCY_MISMATCH', async (currency, _label, masterId) => {
      const response = await create(alice, { accountName: 'x', masterFiatAccountId: masterId(), currency });
      expect(response.statusCode).toBe(422);
      expect(response.json().error).toMatchObject({ code: 'CURRENCY_MISMATCH', details: { currency } });
    });

    it('answers ACCOUNT_NOT_MASTER before CURRENCY_MISMATCH when both apply', async () => {
      const response = await create(alice, { accountName: 'x', masterFiatAccountId: nonMaster.id, currency: 'GBP' });
      expect(response.statusCode).toBe(422);
      expect(response.json().error.code).toBe('ACCOUNT_NOT_MASTER');
    });

    it('answers an unknown end user with 404 before any rule about the master account', async () => {
      const response = await create(alice, { accountName: 'x', masterFiatAccountId: nonMaster.id, currency: 'GBP', endUserId: unknownId });
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    });

    it('answers an unknown master account with 404 NOT_FOUND', async () => {
      const response = await create(alice, eurBody({ masterFiatAccountId: unknownId }));
      expect(response.statusCode).toBe(404);
      expect(response.json().error.code).toBe('NOT_FOUND');
    });

    it('writes nothing, no row and no event, when a rule refuses the request', async () => {
      const [rows, events] = [await countRows(), await countEvents()];
      expect((await create(alice, eurBody({ masterFiatAccountId: nonMaster.id }))).statusCode).toBe(422);
      expect((await create(alice, eurBody({ currency: 'USD' }))).statusCode).toBe(422);
      expect((await create(alice, eurBody({ masterFiatAccountId: unknownId }))).statusCode).toBe(404);
      expect((await create(alice, eurBody({ endUserId: unknownId }))).statusCode).toBe(404);
      expect([await countRows(), await countEvents()]).toEqual([rows, events]);
    });
  });

  describe('validation boundaries', () => {
    it.each([
      ['accountName of 1 character', { accountName: 'a' }],
      ['accountName of 200 characters', { accountName: 'a'.repeat(200) }],
      ['accountName of 200 non-ASCII characters', { accountName: 'é'.repeat(200) }],
      ['each ibanCountry: DK', { ibanCountry: 'DK' }],
      ['umbrellaLinkId as a UUID', { umbrellaLinkId: '0b7c3c3e-1f7a-4b9e-8d2a-5c6e7f8a9b0c' }],
    ])('accepts %s', async (_label, overrides) => {
      const response = await create(alice, eurBody(overrides));
      expect(response.statusCode).toBe(201);
      if ('accountName' in overrides) expect(response.json().data.account_name).toBe(overrides.accountName);
    });

    it.each([
      ['accountName of 0 characters', { accountName: '' }, '/accountName'],
      ['accountName of 201 characters', { accountName: 'a'.repeat(201) }, '/accountName'],
      ['accountName missing', { accountName: undefined }, '/accountName'],
      ['accountName as a number', { accountName: 42 }, '/accountName'],
      ['currency JPY', { currency: 'JPY' }, '/currency'],
      ['currency missing', { currency: undefined }, '/currency'],
      ['ibanCountry FR', { ibanCountry: 'FR' }, '/ibanCountry'],
      ['masterFiatAccountId missing', { masterFiatAccountId: undefined }, '/masterFiatAccountId'],
      ['a non-UUID masterFiatAccountId', { masterFiatAccountId: 'account-1' }, '/masterFiatAccountId'],
      ['a masterFiatAccountId one character short', { masterFiatAccountId: unknownId.slice(0, -1) }, '/masterFiatAccountId'],
      ['masterFiatAccountId as a number', { masterFiatAccountId: 1 }, '/masterFiatAccountId'],
      ['a non-UUID endUserId', { endUserId: 'user-1' }, '/endUserId'],
      ['a non-UUID umbrellaLinkId', { umbrellaLinkId: '123' }, '/umbrellaLinkId'],
      ['an unknown field', { balance: 100 }, '/balance'],
    ])('refuses %s with 400 naming the field', async (_label, overrides, path) => {
      const body = Object.fromEntries(Object.entries(eurBody(overrides)).filter(([, value]) => value !== undefined));
      const response = await create(alice, body);
      expect(response.statusCode).toBe(400);
      const { error } = response.json();
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', path })]));
    });

    it('lists every failing field at once', async () => {
      const response = await create(alice, { accountName: '', masterFiatAccountId: 'x', currency: 'JPY', ibanCountry: 'FR', endUserId: 'y', extra: true });
      expect(response.statusCode).toBe(400);
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(paths).toEqual(['/accountName', '/currency', '/endUserId', '/extra', '/ibanCountry', '/masterFiatAccountId']);
    });

    it('refuses a body that is not an object', async () => {
      for (const body of [[], 'text', 42, null]) {
        const response = await t.request({
          method: 'POST', url: '/virtual-accounts', key: alice.key, csrf: true, body: JSON.stringify(body), headers: { 'content-type': 'application/json' },
        });
        expect(response.statusCode).toBe(400);
        expect(response.json().error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('validates the body before looking anything up', async () => {
      // A foreign master with an invalid name is a 400, so validation cannot be used to probe other customers' ids.
      const response = await create(alice, eurBody({ masterFiatAccountId: bobsMaster.id, accountName: '' }));
      expect(response.statusCode).toBe(400);
    });

    it('writes nothing when validation fails', async () => {
      const [rows, events] = [await countRows(), await countEvents()];
      await create(alice, eurBody({ accountName: 'a'.repeat(201) }));
      await create(alice, eurBody({ currency: 'JPY' }));
      expect([await countRows(), await countEvents()]).toEqual([rows, events]);
    });
  });

  describe('another customer’s ids', () => {
    it('answers another customer’s master account exactly like an unknown id', async () => {
      const foreign = await create(alice, eurBody({ masterFiatAccountId: bobsMaster.id }));
      const unknown = await create(alice, eurBody({ masterFiatAccountId: unknownId }));
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
    });

    it('answers 404, not 422, for another customer’s non-master account in another currency', async () => {
      const foreign = await create(alice, eurBody({ masterFiatAccountId: bobsNonMasterGbp.id }));
      const unknown = await create(alice, eurBody({ masterFiatAccountId: unknownId2 }));
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
    });

    it('answers another customer’s end user exactly like an unknown id', async () => {
      const bobsPerson = await createIndividual(t, bob);
      const foreign = await create(alice, eurBody({ endUserId: bobsPerson.id }));
      const unknown = await create(alice, eurBody({ endUserId: unknownId }));
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
    });

    it('answers another customer’s virtual account id exactly like a random UUID', async () => {
      const alices = (await create(alice, eurBody({ accountName: 'Private' }))).json().data;
      const foreign = await t.request({ url: `/virtual-accounts/${alices.id}`, key: bob.key });
      const unknown = await t.request({ url: `/virtual-accounts/${unknownId}`, key: bob.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
    });

    it('never lists another customer’s virtual accounts', async () => {
      const bobs = (await create(bob, { accountName: 'Bob VA', masterFiatAccountId: bobsMaster.id, currency: 'EUR' })).json().data;
      const alicesList = (await t.request({ url: '/virtual-accounts', key: alice.key })).json().data;
      expect(alicesList.map((account: { id: string }) => account.id)).not.toContain(bobs.id);
      const bobsList = (await t.request({ url: '/virtual-accounts', key: bob.key })).json().data;
      expect(bobsList).toEqual([bobs]);
    });
  });

  describe('GET /virtual-accounts and /virtual-accounts/{id}', () => {
    it('lists only the caller’s accounts, oldest first, as a data array', async () => {
      t.clock.advance(1000);
      const latest = (await create(alice, eurBody({ accountName: 'Latest' }))).json().data;
      const response = await t.request({ url: '/virtual-accounts', key: alice.key });
      expect(response.statusCode).toBe(200);
      const accounts = response.json().data;
      expect(Array.isArray(accounts)).toBe(true);
      expect(accounts.length).toBeGreaterThan(1);
      expect(accounts.every((account: { fr_owner_business_id: string }) => account.fr_owner_business_id === alice.frOwnerBusinessId)).toBe(true);
      expect(accounts.every((account: object) => Object.keys(account).sort().join() === recordFields.join())).toBe(true);
      const created = accounts.map((account: { created_at: string }) => account.created_at);
      expect([...created].sort()).toEqual(created);
      expect(accounts.at(-1)).toEqual(latest);
    });

    it('gets one account by id, through every version prefix and in upper case', async () => {
      const created = (await create(alice, eurBody({ accountName: 'By id' }))).json().data;
      for (const url of [`/virtual-accounts/${created.id}`, `/v1/virtual-accounts/${created.id}`, `/v2/virtual-accounts/${created.id}`, `/virtual-accounts/${created.id.toUpperCase()}`]) {
        const response = await t.request({ url, key: alice.key });
        expect(response.statusCode).toBe(200);
        expect(response.json().data).toEqual(created);
      }
    });

    it.each(['not-a-uuid', '123', `${unknownId}0`])('refuses the malformed account id %s with 400', async (id) => {
      const response = await t.request({ url: `/virtual-accounts/${id}`, key: alice.key });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields[0]).toMatchObject({ location: 'params', path: '/id' });
    });
  });

  describe('events', () => {
    it('writes a virtual_account.created event to the outbox with the account', async () => {
      const account = (await create(alice, { accountName: 'Evented', masterFiatAccountId: gbpMaster.id, currency: 'GBP' })).json().data;
      const rows = await t.storage.db.selectFrom('outbox_events').selectAll().where('event_type', '=', 'virtual_account.created').execute();
      const row = rows.find((candidate) => JSON.parse(candidate.payload).data.id === account.id);
      expect(row).toBeDefined();
      expect(row?.customer_id).toBe(alice.id);
      const event = JSON.parse(row?.payload ?? '{}');
      expect(event.type).toBe('virtual_account.created');
      expect(event.id).toMatch(uuidPattern);
      expect(event.data).toEqual(account);
    });

    it('writes the event in the same transaction as the account: a failing append leaves neither', async () => {
      const appendEvent = vi.mocked(outbox.appendEvent);
      const real = await vi.importActual<typeof import('../../src/events/outbox.js')>('../../src/events/outbox.js');
      const [rows, events] = [await countRows(), await countEvents()];
      // The event row is written, then the append fails: both the event and the account must roll back.
      appendEvent.mockImplementationOnce(async (trx, event) => {
        await real.appendEvent(trx, event);
        throw new Error('outbox unavailable');
      });
      const response = await create(alice, eurBody({ accountName: 'Doomed' }));
      expect(response.statusCode).toBe(500);
      expect(response.json().error.code).toBe('INTERNAL_ERROR');
      expect([await countRows(), await countEvents()]).toEqual([rows, events]);
      const doomed = await t.storage.db.selectFrom('virtual_accounts').select('id').where('account_name', '=', 'Doomed').execute();
      expect(doomed).toEqual([]);
      // And the next request goes through as usual.
      expect((await create(alice, eurBody({ accountName: 'After' }))).statusCode).toBe(201);
      expect([await countRows(), await countEvents()]).toEqual([rows + 1, events + 1]);
    });
  });

  describe('authentication and scopes', () => {
    it('needs a key', async () => {
      expect((await t.request({ url: '/virtual-accounts' })).statusCode).toBe(401);
      expect((await t.request({ method: 'POST', url: '/virtual-accounts', body: eurBody() })).statusCode).toBe(401);
    });

    it('needs a CSRF token to create', async () => {
      const response = await t.request({ method: 'POST', url: '/virtual-accounts', key: alice.key, body: eurBody() });
      expect(response.statusCode).toBe(403);
      expect(response.json().error.code).toBe('CSRF_TOKEN_INVALID');
    });

    it('needs virtual-accounts:write to create and virtual-accounts:read to read', async () => {
      const readOnly = await t.createKey(alice.id, { scopes: ['virtual-accounts:read'] });
      expect((await t.request({ url: '/virtual-accounts', key: readOnly.key })).statusCode).toBe(200);
      const write = await t.request({ method: 'POST', url: '/virtual-accounts', key: readOnly.key, csrf: true, body: eurBody() });
      expect(write.statusCode).toBe(403);
      expect(write.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'virtual-accounts:write' } });

      const writer = await t.createKey(alice.id, { scopes: ['virtual-accounts:write'] });
      const created = await t.request({ method: 'POST', url: '/virtual-accounts', key: writer.key, csrf: true, body: eurBody() });
      expect(created.statusCode).toBe(201);
      expect((await t.request({ url: `/virtual-accounts/${created.json().data.id}`, key: writer.key })).statusCode).toBe(200);

      const fiatOnly = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
      const list = await t.request({ url: '/virtual-accounts', key: fiatOnly.key });
      expect(list.statusCode).toBe(403);
      expect(list.json().error.details.required_scope).toBe('virtual-accounts:read');
      const post = await t.request({ method: 'POST', url: '/virtual-accounts', key: fiatOnly.key, csrf: true, body: eurBody() });
      expect(post.statusCode).toBe(403);
    });
  });
});
