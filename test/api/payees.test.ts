import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';

/** Real-world test identifiers: IBAN and BIC examples of the banks' own documentation, valid ABA numbers. */
const deIban = 'DE89370400440532013000';
const deIbanPrinted = 'DE89 3704 0044 0532 0130 00';
/** The longest IBAN in use (Russia, 33 characters), outside SEPA. */
const ruIban = 'RU0204452560040702810412345678901';
const ruIbanPrinted = 'RU02 0445 2560 0407 0281 0412 3456 7890 1';

const address = { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' };
const eurBankDetails = { iban: deIbanPrinted, bic: 'COBADEFFXXX', bankName: 'Commerzbank' };
const gbpBankDetails = { sortCode: '60-16-13', accountNumber: '31926819' };
const usdBankDetails = { routingNumber: '021000021', accountNumber: '123456789' };

function payeeBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { name: 'Erika Mustermann', address, bankDetails: eurBankDetails, ...overrides };
}
const withAddress = (fields: Record<string, unknown>) => payeeBody({ address: { ...address, ...fields } });
const withBank = (bankDetails: Record<string, unknown>) => payeeBody({ bankDetails });

const recordFields = [
  // docs/spec.md §2 payee record.
  'id', 'fr_payee_id', 'payee_name', 'currency', 'status', 'account_number', 'sort_code', 'swift', 'bank_name',
  'address_line1', 'address_line2', 'city', 'state_region', 'postal_code', 'country_code', 'end_user_id',
  'requires_vop', 'fr_owner_business_id', 'created_at',
  // Additive (docs/spec.md §9 rule 6, docs/payees.md).
  'iban', 'routing_number', 'account_holder_name', 'bank_address', 'intermediary_bank', 'updated_at',
].sort();

/** A routing number with the given first eight digits and the check digit that makes its ABA checksum hold. */
function routingNumber(firstEight: string): string {
  const weights = [3, 7, 1, 3, 7, 1, 3, 7];
  const sum = [...firstEight].reduce((total, digit, index) => total + Number(digit) * (weights[index] ?? 0), 0);
  return `${firstEight}${(10 - (sum % 10)) % 10}`;
}

describe('payees', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
  });
  afterAll(async () => t.close());

  const create = (customer: TestCustomer, body: unknown) => t.request({ method: 'POST', url: '/payees', key: customer.key, csrf: true, body });
  const payeeCount = async () => Number((await t.storage.db.selectFrom('payees').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  describe('POST /payees', () => {
    it('creates a EUR payee from an IBAN with every field of the spec §2 record, typed as the spec says', async () => {
      const response = await create(alice, payeeBody());
      expect(response.statusCode).toBe(201);
      const payee = response.json().data;
      expect(Object.keys(payee).sort()).toEqual(recordFields);
      expect(payee.id).toMatch(uuidPattern);
      expect(payee.fr_payee_id).toMatch(/^pay_[0-9a-f]+$/);
      expect(payee.payee_name).toBe('Erika Mustermann');
      expect(payee.currency).toBe('EUR');
      expect(payee.status).toBe('active');
      // An IBAN payee has no separate domestic details; the IBAN is stored in electronic form.
      expect(payee.account_number).toBeNull();
      expect(payee.sort_code).toBeNull();
      expect(payee.routing_number).toBeNull();
      expect(payee.iban).toBe(deIban);
      expect(payee.swift).toBe('COBADEFFXXX');
      expect(payee.bank_name).toBe('Commerzbank');
      expect(payee.address_line1).toBe('Hauptstraße 1');
      expect(payee.address_line2).toBeNull();
      expect(payee.city).toBe('Berlin');
      expect(payee.state_region).toBeNull();
      expect(payee.postal_code).toBe('10115');
      expect(payee.country_code).toBe('DE');
      expect(payee.end_user_id).toBeNull();
      expect(payee.requires_vop).toBe(true);
      expect(payee.fr_owner_business_id).toBe(alice.frOwnerBusinessId);
      expect(payee.account_holder_name).toBe('Erika Mustermann');
      expect(payee.bank_address).toBeNull();
      expect(payee.intermediary_bank).toBeNull();
      expect(payee.created_at).toMatch(timestampPattern);
      expect(payee.updated_at).toBe(payee.created_at);
      for (const field of ['fr_payee_id', 'payee_name', 'currency', 'status', 'swift', 'bank_name', 'address_line1', 'city', 'postal_code', 'country_code', 'fr_owner_business_id']) {
        expect(typeof payee[field], field).toBe('string');
      }
      expect(typeof payee.requires_vop).toBe('boolean');
    });

    it('creates a GBP payee from a sort code and account number, without Verification of Payee', async () => {
      const response = await create(alice, payeeBody({ name: 'Arthur Dent', address: { line1: '155 Country Lane', city: 'Cottington', postalCode: 'CT1 1AA', country: 'GB' }, bankDetails: gbpBankDetails }));
      expect(response.statusCode).toBe(201);
      const payee = response.json().data;
      expect(Object.keys(payee).sort()).toEqual(recordFields);
      expect(payee.currency).toBe('GBP');
      expect(payee.sort_code).toBe('601613');
      expect(payee.account_number).toBe('31926819');
      expect(payee.iban).toBeNull();
      expect(payee.routing_number).toBeNull();
      expect(payee.swift).toBeNull();
      expect(payee.bank_name).toBeNull();
      expect(payee.requires_vop).toBe(false);
      expect(payee.country_code).toBe('GB');
    });

    it('creates a USD payee from an ABA routing number and account number, without Verification of Payee', async () => {
      const response = await create(alice, payeeBody({ address: { line1: '1 Wall St', city: 'New York', postalCode: '10005', stateRegion: 'NY', country: 'US' }, bankDetails: usdBankDetails }));
      expect(response.statusCode).toBe(201);
      const payee = response.json().data;
      expect(payee.currency).toBe('USD');
      expect(payee.routing_number).toBe('021000021');
      expect(payee.account_number).toBe('123456789');
      expect(payee.sort_code).toBeNull();
      expect(payee.iban).toBeNull();
      expect(payee.state_region).toBe('NY');
      expect(payee.requires_vop).toBe(false);
    });

    it('creates a SWIFT payee outside the IBAN countries from an account number and a BIC, in USD unless told', async () => {
      const address = { line1: '1 Raffles Place', city: 'Singapore', postalCode: '048616', country: 'SG' };
      const usd = await create(alice, payeeBody({ address, bankDetails: { accountNumber: '0123456789', bic: 'DBSSSGSG', bankName: 'DBS Bank' } }));
      expect(usd.statusCode, usd.body).toBe(201);
      expect(usd.json().data).toMatchObject({ currency: 'USD', account_number: '0123456789', swift: 'DBSSSGSG', iban: null, sort_code: null, routing_number: null, requires_vop: false });
      const eur = await create(alice, payeeBody({ address, currency: 'eur', bankDetails: { accountNumber: 'SG12ABC0001', bic: 'dbsssgsgxxx' } }));
      expect(eur.statusCode, eur.body).toBe(201);
      expect(eur.json().data).toMatchObject({ currency: 'EUR', account_number: 'SG12ABC0001', swift: 'DBSSSGSGXXX' });
    });

    it('pays a SWIFT payee over SWIFT only, at the SWIFT fee the preview shows', async () => {
      const payee = (await create(alice, payeeBody({ bankDetails: { accountNumber: '998877', bic: 'DBSSSGSG' } }))).json().data;
      const account = (await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { accountName: 'USD', currency: 'USD' } })).json().data;
      await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${account.id}/deposits`, key: alice.key, csrf: true, body: { amount: 10000 } });
      const body = { fromAccountId: account.id, payeeId: payee.id, amount: 1000, currency: 'USD', reference: 'swift' };
      const preview = await t.request({ method: 'POST', url: '/fees/preview', key: alice.key, csrf: true, body });
      expect(preview.json().data).toMatchObject({ fee_amount: 5, schedule_name: 'Default SWIFT USD' });
      const paid = await t.request({ method: 'POST', url: '/payments', key: alice.key, csrf: true, body });
      expect(paid.statusCode, paid.body).toBe(201);
      const payment = (await t.request({ url: `/payments/${paid.json().data.id}`, key: alice.key })).json().data;
      expect(payment).toMatchObject({ paymentScheme: 'SWIFT', fee: '5.00' });
      const ach = await t.request({ method: 'POST', url: '/payments', key: alice.key, csrf: true, body: { ...body, paymentScheme: 'ACH' } });
      expect(ach.statusCode).toBe(400);
      expect(ach.json().error.details.fields[0]).toMatchObject({ path: '/paymentScheme', reason: 'must be one of SWIFT for this payee' });
    });

    it.each([
      ['an account number of 35 characters', { accountNumber: 'A'.repeat(35), bic: 'DBSSSGSG' }, '/bankDetails/accountNumber'],
      ['an account number with a hyphen', { accountNumber: '12-34', bic: 'DBSSSGSG' }, '/bankDetails/accountNumber'],
      ['an account number and an invalid BIC', { accountNumber: '123', bic: 'DBSS1GSG' }, '/bankDetails/bic'],
    ])('refuses a SWIFT payee with %s', async (_label, bankDetails, path) => {
      const response = await create(alice, payeeBody({ bankDetails }));
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields.map((field: { path: string }) => field.path)).toContain(path);
    });

    it('treats a GB IBAN as a EUR SEPA payee (the UK is in SEPA), with Verification of Payee', async () => {
      const response = await create(alice, withBank({ iban: 'GB29NWBK60161331926819' }));
      expect(response.statusCode).toBe(201);
      expect(response.json().data).toMatchObject({ currency: 'EUR', requires_vop: true, iban: 'GB29NWBK60161331926819', swift: null });
    });

    it('pays an IBAN outside SEPA in EUR over SWIFT: the BIC is required and Verification of Payee does not apply', async () => {
      const withBic = await create(alice, withBank({ iban: 'TR330006100519786457841326', bic: 'AKBKTRIS' }));
      expect(withBic.statusCode).toBe(201);
      expect(withBic.json().data).toMatchObject({ currency: 'EUR', requires_vop: false, swift: 'AKBKTRIS' });

      const withoutBic = await create(alice, withBank({ iban: 'TR330006100519786457841326' }));
      expect(withoutBic.statusCode).toBe(400);
      expect(withoutBic.json().error.details.fields).toEqual([expect.objectContaining({ location: 'body', path: '/bankDetails/bic' })]);
    });

    it('returns every optional detail it was given, normalised, and takes empty optional text as absent', async () => {
      const response = await create(alice, {
        name: 'Muster GmbH',
        address: { line1: 'Hauptstraße 1', line2: 'Hinterhaus', city: 'München', postalCode: '', stateRegion: 'Bayern', country: 'DE' },
        bankDetails: {
          iban: 'de89370400440532013000',
          bic: 'cobadeff',
          accountHolderName: 'Muster Holding GmbH',
          bankName: '',
          bankAddressLine1: 'Kaiserplatz',
          bankAddressCity: 'Frankfurt am Main',
          bankAddressPostalCode: '60311',
          bankAddressCountry: 'DE',
          intermediaryBicSwift: 'deutdeff500',
          intermediaryBankName: 'Deutsche Bank',
          intermediaryBankAddressLine1: 'Taunusanlage 12',
          intermediaryBankAddressCity: 'Frankfurt am Main',
          intermediaryBankAddressPostalCode: '60325',
          intermediaryBankAddressCountry: 'DE',
        },
        umbrellaLinkId: '0b7c3c3e-1f7a-4b9e-8d2a-5c6e7f8a9b0c',
      });
      expect(response.statusCode).toBe(201);
      const payee = response.json().data;
      expect(payee).toMatchObject({
        iban: deIban,
        swift: 'COBADEFF',
        account_holder_name: 'Muster Holding GmbH',
        bank_name: null,
        address_line2: 'Hinterhaus',
        postal_code: null,
        state_region: 'Bayern',
      });
      expect(payee.bank_address).toEqual({ line1: 'Kaiserplatz', city: 'Frankfurt am Main', postal_code: '60311', country_code: 'DE' });
      expect(payee.intermediary_bank).toEqual({
        swift: 'DEUTDEFF500',
        name: 'Deutsche Bank',
        address_line1: 'Taunusanlage 12',
        city: 'Frankfurt am Main',
        postal_code: '60325',
        country_code: 'DE',
      });
      expect((await t.request({ url: `/payees/${payee.id}`, key: alice.key })).json().data).toEqual(payee);
    });

    it('links the payee to one of the caller’s end users', async () => {
      const endUser = await createIndividual(t, alice);
      const response = await create(alice, payeeBody({ endUserId: endUser.id }));
      expect(response.statusCode).toBe(201);
      expect(response.json().data.end_user_id).toBe(endUser.id);
      const upper = await create(alice, payeeBody({ endUserId: endUser.id.toUpperCase() }));
      expect(upper.statusCode).toBe(201);
      expect(upper.json().data.end_user_id).toBe(endUser.id);
    });

    it('refuses an endUserId of another customer exactly like an unknown id, and writes nothing', async () => {
      const bobsEndUser = await createIndividual(t, bob);
      const before = await payeeCount();
      const foreign = await create(alice, payeeBody({ endUserId: bobsEndUser.id }));
      const unknown = await create(alice, payeeBody({ endUserId: unknownId }));
      expect(foreign.statusCode).toBe(404);
      expect(unknown.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
      expect(await payeeCount()).toBe(before);
    });
  });

  describe('validation boundaries', () => {
    it.each([
      ['name of 1 character', payeeBody({ name: 'a' })],
      ['name of 140 characters', payeeBody({ name: 'a'.repeat(140) })],
      ['name of 140 non-ASCII characters', payeeBody({ name: 'é'.repeat(140) })],
      ['address.line1 of 70 characters', withAddress({ line1: 'a'.repeat(70) })],
      ['address.line2 of 70 characters', withAddress({ line2: 'a'.repeat(70) })],
      ['address.city of 1 character', withAddress({ city: 'Å' })],
      ['address.city of 35 characters', withAddress({ city: 'a'.repeat(35) })],
      ['address.postalCode of 16 characters', withAddress({ postalCode: '1'.repeat(16) })],
      ['address without postalCode', payeeBody({ address: { line1: '1 Queen’s Road', city: 'Hong Kong', country: 'HK' } })],
      ['address.stateRegion of 35 characters', withAddress({ stateRegion: 'a'.repeat(35) })],
      ['an IBAN in electronic form', withBank({ iban: deIban })],
      ['an IBAN in lower case', withBank({ iban: deIban.toLowerCase() })],
      ['country codes in lower case', { ...withBank({ ...eurBankDetails, bankAddressCountry: 'de', intermediaryBankAddressCountry: 'at' }), address: { ...address, country: 'de' } }],
      ['the longest IBAN in use (33 characters) with its BIC', withBank({ iban: ruIban, bic: 'SABRRUMM' })],
      ['a printed IBAN of 42 characters', withBank({ iban: `${ruIbanPrinted} `, bic: 'SABRRUMM' })],
      ['a BIC of 8 characters', withBank({ iban: deIban, bic: 'COBADEFF' })],
      ['a BIC of 11 characters', withBank({ iban: deIban, bic: 'COBADEFFXXX' })],
      ['a sort code of 6 digits', withBank({ sortCode: '601613', accountNumber: '31926819' })],
      ['a sort code as 60-16-13', withBank({ sortCode: '60-16-13', accountNumber: '31926819' })],
      ['a US account number of 4 digits', withBank({ routingNumber: '021000021', accountNumber: '1234' })],
      ['a US account number of 17 digits', withBank({ routingNumber: '021000021', accountNumber: '1'.repeat(17) })],
      ['a routing number with prefix 01', withBank({ routingNumber: routingNumber('01100001'), accountNumber: '12345678' })],
      ['a routing number with prefix 12', withBank({ routingNumber: routingNumber('12100035'), accountNumber: '12345678' })],
      ['a routing number with prefix 21', withBank({ routingNumber: routingNumber('21127445'), accountNumber: '12345678' })],
      ['a routing number with prefix 32', withBank({ routingNumber: routingNumber('32227162'), accountNumber: '12345678' })],
      ['a routing number with prefix 61', withBank({ routingNumber: routingNumber('61100000'), accountNumber: '12345678' })],
      ['a routing number with prefix 72', withBank({ routingNumber: routingNumber('72000000'), accountNumber: '12345678' })],
      ['accountHolderName of 140 characters', withBank({ ...eurBankDetails, accountHolderName: 'a'.repeat(140) })],
      ['bankName of 140 characters', withBank({ ...eurBankDetails, bankName: 'a'.repeat(140) })],
      ['bank address at its limits', withBank({ ...eurBankDetails, bankAddressLine1: 'a'.repeat(70), bankAddressCity: 'a'.repeat(35), bankAddressPostalCode: '1'.repeat(16), bankAddressCountry: 'DE' })],
      ['intermediary bank at its limits', withBank({ ...eurBankDetails, intermediaryBicSwift: 'DEUTDEFF', intermediaryBankName: 'a'.repeat(140), intermediaryBankAddressLine1: 'a'.repeat(70), intermediaryBankAddressCity: 'a'.repeat(35), intermediaryBankAddressPostalCode: '1'.repeat(16), intermediaryBankAddressCountry: 'DE' })],
      ['umbrellaLinkId as a UUID', payeeBody({ umbrellaLinkId: '0b7c3c3e-1f7a-4b9e-8d2a-5c6e7f8a9b0c' })],
    ])('accepts %s', async (_label, body) => {
      const response = await create(alice, body);
      expect(response.statusCode, response.body).toBe(201);
    });

    it.each([
      ['name of 0 characters', payeeBody({ name: '' }), '/name'],
      ['name of 141 characters', payeeBody({ name: 'a'.repeat(141) }), '/name'],
      ['name of spaces only', payeeBody({ name: '   ' }), '/name'],
      ['name missing', { address, bankDetails: eurBankDetails }, '/name'],
      ['name as a number', payeeBody({ name: 42 }), '/name'],
      ['address missing', { name: 'x', bankDetails: eurBankDetails }, '/address'],
      ['address.line1 missing', payeeBody({ address: { city: 'Berlin', country: 'DE' } }), '/address/line1'],
      ['address.line1 of 0 characters', withAddress({ line1: '' }), '/address/line1'],
      ['address.line1 of 71 characters', withAddress({ line1: 'a'.repeat(71) }), '/address/line1'],
      ['address.line2 of 71 characters', withAddress({ line2: 'a'.repeat(71) }), '/address/line2'],
      ['address.city missing', payeeBody({ address: { line1: 'x', country: 'DE' } }), '/address/city'],
      ['address.city of 0 characters', withAddress({ city: '' }), '/address/city'],
      ['address.city of 36 characters', withAddress({ city: 'a'.repeat(36) }), '/address/city'],
      ['address.postalCode of 17 characters', withAddress({ postalCode: '1'.repeat(17) }), '/address/postalCode'],
      ['address.stateRegion of 36 characters', withAddress({ stateRegion: 'a'.repeat(36) }), '/address/stateRegion'],
      ['address.country missing', payeeBody({ address: { line1: 'x', city: 'Berlin' } }), '/address/country'],
      ['address.country of 3 letters', withAddress({ country: 'DEU' }), '/address/country'],
      ['address.country that is not assigned', withAddress({ country: 'XX' }), '/address/country'],
      ['address.state (the end-user spelling)', withAddress({ state: 'Berlin' }), '/address/state'],
      ['bankDetails missing', { name: 'x', address }, '/bankDetails'],
      ['bankDetails without an account', withBank({ bankName: 'Some Bank' }), '/bankDetails'],
      ['an IBAN with wrong check digits', withBank({ iban: 'DE89370400440532013001' }), '/bankDetails/iban'],
      ['an IBAN one character short for its country', withBank({ iban: 'DE8937040044053201300' }), '/bankDetails/iban'],
      ['an IBAN of an unknown country', withBank({ iban: 'XX89370400440532013000' }), '/bankDetails/iban'],
      ['a printed IBAN of 43 characters', withBank({ iban: `${ruIbanPrinted}  `, bic: 'SABRRUMM' }), '/bankDetails/iban'],
      ['an IBAN of spaces only', withBank({ iban: '    ' }), '/bankDetails/iban'],
      ['an IBAN with hyphens', withBank({ iban: 'DE89-3704-0044-0532-0130-00' }), '/bankDetails/iban'],
      ['a BIC of 7 characters', withBank({ iban: deIban, bic: 'COBADEF' }), '/bankDetails/bic'],
      ['a BIC of 9 characters', withBank({ iban: deIban, bic: 'COBADEFFX' }), '/bankDetails/bic'],
      ['a BIC of 12 characters', withBank({ iban: deIban, bic: 'COBADEFFXXXX' }), '/bankDetails/bic'],
      ['a BIC with an unknown country', withBank({ iban: deIban, bic: 'COBAXXFF' }), '/bankDetails/bic'],
      ['a BIC with digits in the bank code', withBank({ iban: deIban, bic: 'C0BADEFF' }), '/bankDetails/bic'],
      ['a sort code of 5 digits', withBank({ sortCode: '60161', accountNumber: '31926819' }), '/bankDetails/sortCode'],
      ['a sort code of 7 digits', withBank({ sortCode: '6016130', accountNumber: '31926819' }), '/bankDetails/sortCode'],
      ['a sort code with spaces', withBank({ sortCode: '60 16 13', accountNumber: '31926819' }), '/bankDetails/sortCode'],
      ['a UK account number of 7 digits', withBank({ sortCode: '601613', accountNumber: '3192681' }), '/bankDetails/accountNumber'],
      ['a UK account number of 9 digits', withBank({ sortCode: '601613', accountNumber: '319268190' }), '/bankDetails/accountNumber'],
      ['a sort code without an account number', withBank({ sortCode: '601613' }), '/bankDetails/accountNumber'],
      ['an account number alone', withBank({ accountNumber: '31926819' }), '/bankDetails/accountNumber'],
      ['an account number with letters', withBank({ sortCode: '601613', accountNumber: '3192681A' }), '/bankDetails/accountNumber'],
      ['an IBAN with an account number', withBank({ iban: deIban, accountNumber: '0532013000' }), '/bankDetails/accountNumber'],
      ['a routing number of 8 digits', withBank({ routingNumber: '02100002', accountNumber: '12345678' }), '/bankDetails/routingNumber'],
      ['a routing number of 10 digits', withBank({ routingNumber: '0210000210', accountNumber: '12345678' }), '/bankDetails/routingNumber'],
      ['a routing number failing the ABA checksum', withBank({ routingNumber: '021000022', accountNumber: '12345678' }), '/bankDetails/routingNumber'],
      ['a routing number with prefix 13', withBank({ routingNumber: routingNumber('13000000'), accountNumber: '12345678' }), '/bankDetails/routingNumber'],
      ['a routing number with prefix 80', withBank({ routingNumber: routingNumber('80000000'), accountNumber: '12345678' }), '/bankDetails/routingNumber'],
      ['the routing number 000000000', withBank({ routingNumber: '000000000', accountNumber: '12345678' }), '/bankDetails/routingNumber'],
      ['a routing number without an account number', withBank({ routingNumber: '021000021' }), '/bankDetails/accountNumber'],
      ['a US account number of 3 digits', withBank({ routingNumber: '021000021', accountNumber: '123' }), '/bankDetails/accountNumber'],
      ['a US account number of 18 digits', withBank({ routingNumber: '021000021', accountNumber: '1'.repeat(18) }), '/bankDetails/accountNumber'],
      ['accountHolderName of 0 characters', withBank({ ...eurBankDetails, accountHolderName: '' }), '/bankDetails/accountHolderName'],
      ['accountHolderName of 141 characters', withBank({ ...eurBankDetails, accountHolderName: 'a'.repeat(141) }), '/bankDetails/accountHolderName'],
      ['accountHolderName of spaces only', withBank({ ...eurBankDetails, accountHolderName: ' ' }), '/bankDetails/accountHolderName'],
      ['bankName of 141 characters', withBank({ ...eurBankDetails, bankName: 'a'.repeat(141) }), '/bankDetails/bankName'],
      ['bankAddressLine1 of 71 characters', withBank({ ...eurBankDetails, bankAddressLine1: 'a'.repeat(71) }), '/bankDetails/bankAddressLine1'],
      ['bankAddressCity of 36 characters', withBank({ ...eurBankDetails, bankAddressCity: 'a'.repeat(36) }), '/bankDetails/bankAddressCity'],
      ['bankAddressPostalCode of 17 characters', withBank({ ...eurBankDetails, bankAddressPostalCode: '1'.repeat(17) }), '/bankDetails/bankAddressPostalCode'],
      ['bankAddressCountry that is not assigned', withBank({ ...eurBankDetails, bankAddressCountry: 'XX' }), '/bankDetails/bankAddressCountry'],
      ['an invalid intermediaryBicSwift', withBank({ ...eurBankDetails, intermediaryBicSwift: 'DEUTXXFF' }), '/bankDetails/intermediaryBicSwift'],
      ['intermediaryBankName of 141 characters', withBank({ ...eurBankDetails, intermediaryBankName: 'a'.repeat(141) }), '/bankDetails/intermediaryBankName'],
      ['intermediaryBankAddressCountry that is not assigned', withBank({ ...eurBankDetails, intermediaryBankAddressCountry: 'ZZ' }), '/bankDetails/intermediaryBankAddressCountry'],
      ['an unknown bank detail', withBank({ ...eurBankDetails, currency: 'EUR' }), '/bankDetails/currency'],
      ['a currency other than the one the bank details imply', payeeBody({ currency: 'GBP' }), '/currency'],
      ['a non-UUID endUserId', payeeBody({ endUserId: 'user-1' }), '/endUserId'],
      ['a non-UUID umbrellaLinkId', payeeBody({ umbrellaLinkId: '123' }), '/umbrellaLinkId'],
    ])('refuses %s with 400 naming the field', async (_label, body, path) => {
      const response = await create(alice, body);
      expect(response.statusCode, response.body).toBe(400);
      const { error } = response.json();
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', path })]));
    });

    it.each([
      ['iban and sortCode', { iban: deIban, sortCode: '601613', accountNumber: '31926819' }, ['/bankDetails/iban', '/bankDetails/sortCode']],
      ['iban and routingNumber', { iban: deIban, routingNumber: '021000021', accountNumber: '123456' }, ['/bankDetails/iban', '/bankDetails/routingNumber']],
      ['sortCode and routingNumber', { sortCode: '601613', routingNumber: '021000021', accountNumber: '31926819' }, ['/bankDetails/routingNumber', '/bankDetails/sortCode']],
    ])('refuses %s together, naming both, because the currency would be ambiguous', async (_label, bankDetails, paths) => {
      const response = await create(alice, withBank(bankDetails));
      expect(response.statusCode).toBe(400);
      const fields = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(fields).toEqual(paths);
    });

    it('lists every failing field of the schema at once', async () => {
      const response = await create(alice, { name: '', address: { line1: 'x', city: '', country: 'XX' }, bankDetails: { sortCode: '1' }, extra: true });
      expect(response.statusCode).toBe(400);
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(paths).toEqual(['/address/city', '/address/country', '/bankDetails/sortCode', '/extra', '/name']);
    });

    it('lists every failing bank detail at once', async () => {
      const response = await create(alice, {
        name: ' ',
        address,
        bankDetails: { routingNumber: '021000022', accountNumber: '123', bic: 'COBAXXFF' },
      });
      expect(response.statusCode).toBe(400);
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(paths).toEqual(['/bankDetails/accountNumber', '/bankDetails/bic', '/bankDetails/routingNumber', '/name']);
    });

    it('refuses a body that is not an object', async () => {
      for (const body of [[], 'text', 42, null]) {
        const response = await t.request({ method: 'POST', url: '/payees', key: alice.key, csrf: true, body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
        expect(response.statusCode).toBe(400);
        expect(response.json().error.code).toBe('VALIDATION_ERROR');
      }
    });

    it('writes nothing, and no event, when validation fails', async () => {
      const payees = await payeeCount();
      const events = (await t.storage.db.selectFrom('outbox_events').select('id').where('event_type', '=', 'payee.created').execute()).length;
      await create(alice, withBank({ iban: 'DE89370400440532013001' }));
      await create(alice, payeeBody({ name: 'a'.repeat(141) }));
      expect(await payeeCount()).toBe(payees);
      expect((await t.storage.db.selectFrom('outbox_events').select('id').where('event_type', '=', 'payee.created').execute()).length).toBe(events);
    });
  });

  describe('GET /payees and GET /payees/{id}', () => {
    it('lists only the caller’s payees, oldest first, as a data array of full records', async () => {
      const created = (await create(alice, payeeBody({ name: 'Listed' }))).json().data;
      const response = await t.request({ url: '/payees', key: alice.key });
      expect(response.statusCode).toBe(200);
      const payees = response.json().data;
      expect(Array.isArray(payees)).toBe(true);
      expect(payees).toContainEqual(created);
      expect(payees.every((payee: { fr_owner_business_id: string }) => payee.fr_owner_business_id === alice.frOwnerBusinessId)).toBe(true);
      for (const payee of payees) expect(Object.keys(payee).sort()).toEqual(recordFields);
      const createdAt = payees.map((payee: { created_at: string }) => payee.created_at);
      expect([...createdAt].sort()).toEqual(createdAt);
      const other = await t.createCustomer('Carol SA');
      expect((await t.request({ url: '/payees', key: other.key })).json()).toEqual({ data: [] });
    });

    it('gets one payee by id, through every version prefix', async () => {
      const created = (await create(alice, payeeBody({ name: 'By id' }))).json().data;
      for (const prefix of ['', '/v1', '/v2']) {
        const response = await t.request({ url: `${prefix}/payees/${created.id}`, key: alice.key });
        expect(response.statusCode).toBe(200);
        expect(response.json().data).toEqual(created);
      }
      const upper = await t.request({ url: `/payees/${created.id.toUpperCase()}`, key: alice.key });
      expect(upper.json().data).toEqual(created);
    });

    it('answers another customer’s payee id exactly like a random UUID', async () => {
      const alices = (await create(alice, payeeBody({ name: 'Private' }))).json().data;
      const foreign = await t.request({ url: `/payees/${alices.id}`, key: bob.key });
      const unknown = await t.request({ url: `/payees/${unknownId}`, key: bob.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
      expect((await t.request({ url: '/payees', key: bob.key })).json().data.map((payee: { id: string }) => payee.id)).not.toContain(alices.id);
    });

    it('refuses a malformed payee id with 400', async () => {
      const response = await t.request({ url: '/payees/not-a-uuid', key: alice.key });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields[0]).toMatchObject({ location: 'params', path: '/id' });
    });
  });

  describe('events', () => {
    it('writes a payee.created event to the outbox with the payee as returned', async () => {
      const payee = (await create(alice, payeeBody({ name: 'Evented', bankDetails: gbpBankDetails }))).json().data;
      const rows = await t.storage.db.selectFrom('outbox_events').selectAll().where('event_type', '=', 'payee.created').execute();
      const row = rows.find((candidate) => JSON.parse(candidate.payload).data.id === payee.id);
      expect(row).toBeDefined();
      expect(row?.customer_id).toBe(alice.id);
      const event = JSON.parse(row?.payload ?? '{}');
      expect(event.type).toBe('payee.created');
      expect(event.data).toEqual(payee);
    });

    it('writes the payee and its event in one transaction: when the event cannot be written, neither is', async () => {
      const before = await payeeCount();
      // Takes the outbox away so the event insert fails after the payee insert in the same transaction.
      await sql`alter table outbox_events rename to outbox_events_away`.execute(t.storage.db);
      try {
        const response = await create(alice, payeeBody({ name: 'Rolled back' }));
        expect(response.statusCode).toBe(500);
        expect(response.json().error.code).toBe('INTERNAL_ERROR');
      } finally {
        await sql`alter table outbox_events_away rename to outbox_events`.execute(t.storage.db);
      }
      expect(await payeeCount()).toBe(before);
      const names = (await t.request({ url: '/payees', key: alice.key })).json().data.map((payee: { payee_name: string }) => payee.payee_name);
      expect(names).not.toContain('Rolled back');
      expect((await create(alice, payeeBody({ name: 'After' }))).statusCode).toBe(201);
    });
  });

  describe('authentication and scopes', () => {
    it('needs an API key', async () => {
      for (const request of [{ url: '/payees' }, { url: `/payees/${unknownId}` }, { method: 'POST' as const, url: '/payees', body: payeeBody() }]) {
        const response = await t.request(request);
        expect(response.statusCode).toBe(401);
        expect(response.json().error.code).toBe('UNAUTHENTICATED');
      }
    });

    it('needs a CSRF token to create', async () => {
      const response = await t.request({ method: 'POST', url: '/payees', key: alice.key, body: payeeBody() });
      expect(response.statusCode).toBe(403);
      expect(response.json().error.code).toBe('CSRF_TOKEN_INVALID');
    });

    it('needs payees:write to create and payees:read (or write) to read', async () => {
      const readOnly = await t.createKey(alice.id, { scopes: ['payees:read'] });
      expect((await t.request({ url: '/payees', key: readOnly.key })).statusCode).toBe(200);
      const refused = await t.request({ method: 'POST', url: '/payees', key: readOnly.key, csrf: true, body: payeeBody() });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'payees:write' } });

      const writer = await t.createKey(alice.id, { scopes: ['payees:write'] });
      const created = await t.request({ method: 'POST', url: '/payees', key: writer.key, csrf: true, body: payeeBody() });
      expect(created.statusCode).toBe(201);
      expect((await t.request({ url: `/payees/${created.json().data.id}`, key: writer.key })).statusCode).toBe(200);

      const other = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
      expect((await t.request({ url: '/payees', key: other.key })).statusCode).toBe(403);
      expect((await t.request({ url: `/payees/${created.json().data.id}`, key: other.key })).statusCode).toBe(403);
    });
  });
});
