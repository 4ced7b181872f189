import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { address, businessBody, createBusiness, createIndividual, individualBody } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import type { LightMyRequestResponse } from 'fastify';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const recordFields = [
  'id', 'fr_end_user_id', 'end_user_type', 'first_name', 'middle_name', 'last_name', 'company_name', 'email', 'reference_code',
  'status', 'fr_owner_business_id', 'registration_number', 'registration_date', 'business_type', 'incorporation_country',
  'sector', 'risk_tier', 'verification_completed_at', 'disclosure_accepted_at', 'disclosure_version', 'reverse_solicitation',
  'created_at', 'updated_at',
].sort();
const reportMax = 14_680_064;

describe('end users', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: '2000' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
  });
  afterAll(async () => t.close());

  const post = (url: string, body: unknown, customer = alice) => t.request({ method: 'POST', url, key: customer.key, csrf: true, body });
  const patch = (id: string, body: unknown, customer = alice) => t.request({ method: 'PATCH', url: `/end-users/${id}`, key: customer.key, csrf: true, body });
  const decide = (id: string, outcome: string, customer = alice) =>
    t.request({ method: 'POST', url: `/sandbox/end-users/${id}/verification`, key: customer.key, csrf: true, body: { outcome } });
  const outbox = async (type: string, id: string) =>
    (await t.storage.db.selectFrom('outbox_events').selectAll().where('event_type', '=', type).execute())
      .map((row) => JSON.parse(row.payload))
      .filter((payload) => payload.data.id === id);
  const expectFieldError = (response: LightMyRequestResponse, path: string) => {
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_ERROR');
    expect(response.json().error.details.fields.map((field: { path: string }) => field.path)).toContain(path);
  };

  describe('individuals', () => {
    it('creates an individual with every field of the spec §2 record, pending verification', async () => {
      const response = await post('/end-users', individualBody({ middleName: 'King', riskRating: 'MEDIUM' }));
      expect(response.statusCode).toBe(201);
      const user = response.json().data;
      expect(Object.keys(user).sort()).toEqual(recordFields);
      expect(user.id).toMatch(uuidPattern);
      expect(user.fr_end_user_id).toMatch(/^eu_/);
      expect(user.end_user_type).toBe('INDIVIDUAL');
      expect(user).toMatchObject({ first_name: 'Ada', middle_name: 'King', last_name: 'Lovelace', company_name: null, email: 'ada@example.com' });
      expect(typeof user.reference_code).toBe('string');
      expect(user.status).toBe('pending_verification');
      expect(user.fr_owner_business_id).toBe(alice.frOwnerBusinessId);
      expect(user.risk_tier).toBe('medium_risk');
      expect(user.verification_completed_at).toBeNull();
      expect(user.reverse_solicitation).toEqual({ required: false, accepted: false });
      expect(user.created_at).toMatch(timestampPattern);
      expect(user.updated_at).toMatch(timestampPattern);
    });

    it('records a reverse-solicitation attestation and its disclosure', async () => {
      const response = await post(
        '/end-users',
        individualBody({ reverseSolicitationAttestation: { accepted: true, acceptedAt: '2026-01-02T03:04:05.000Z', disclosureVersion: '2.1' } }),
      );
      const user = response.json().data;
      expect(user.reverse_solicitation).toEqual({ required: true, accepted: true });
      expect(user.disclosure_accepted_at).toBe('2026-01-02T03:04:05.000Z');
      expect(user.disclosure_version).toBe('2.1');
    });

    describe('identificationDocument and reverseSolicitationAttestation: any object within bounds, known fields checked', () => {
      const storedDocument = async (id: string) =>
        JSON.parse((await t.storage.db.selectFrom('end_users').select('identification_document').where('id', '=', id).executeTakeFirstOrThrow()).identification_document ?? 'null');

      it.each([
        ['a shape of its own', { documentType: 'PASSPORT', documentNumber: 'X1' }],
        ['its own fields beside the known ones, nested values and nulls included', { type: 'passport', number: 'X1', mrz: { line1: 'P<D<<LOVELACE', checked: true }, scans: [1, 2], note: null }],
        ['an empty object', {}],
      ])('stores %s as sent', async (_label, identificationDocument) => {
        const response = await post('/end-users', individualBody({ identificationDocument }));
        expect(response.statusCode, response.body).toBe(201);
        expect(await storedDocument(response.json().data.id)).toEqual(identificationDocument);
      });

      it('hands the known fields on normalised: the type in its listed spelling, the country in upper case', async () => {
        const response = await post('/end-users', individualBody({ identificationDocument: { type: 'PASSPORT', issuingCountry: 'de', documentNumber: 'X1' } }));
        expect(response.statusCode, response.body).toBe(201);
        expect(await storedDocument(response.json().data.id)).toEqual({ type: 'passport', issuingCountry: 'DE', documentNumber: 'X1' });
      });

      it.each([
        ['a number that is not a string', { identificationDocument: { number: 123 } }, '/identificationDocument/number'],
        ['an unknown type', { identificationDocument: { type: 'visa' } }, '/identificationDocument/type'],
        ['an expiry that is not a real date', { identificationDocument: { documentType: 'PASSPORT', expiryDate: '2030-02-30' } }, '/identificationDocument/expiryDate'],
        ['an issue date in the future', { identificationDocument: { issueDate: '2999-01-01' } }, '/identificationDocument/issueDate'],
        ['an object over 4 KiB', { identificationDocument: { scan: 'x'.repeat(4 * 1024) } }, '/identificationDocument'],
        ['51 members', { identificationDocument: Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, index])) }, '/identificationDocument'],
        ['6 levels of nesting', { identificationDocument: { a: { b: { c: { d: { e: { f: 1 } } } } } } }, '/identificationDocument'],
        ['an array', { identificationDocument: ['passport'] }, '/identificationDocument'],
        ['an attestation accepted as a string', { reverseSolicitationAttestation: { accepted: 'yes' } }, '/reverseSolicitationAttestation/accepted'],
        ['an attestation time that is not a timestamp', { reverseSolicitationAttestation: { accepted: true, acceptedAt: 'yesterday' } }, '/reverseSolicitationAttestation/acceptedAt'],
      ])('refuses %s with 400 naming it, and stores nothing', async (_label, overrides, path) => {
        const before = (await t.request({ url: '/end-users', key: alice.key })).json().data.length;
        expectFieldError(await post('/end-users', individualBody(overrides)), path);
        expect((await t.request({ url: '/end-users', key: alice.key })).json().data.length).toBe(before);
      });

      it('takes an attestation of its own shape: stored as sent, fields beyond the known ones do not change what the record says', async () => {
        const attestation = { accepted: true, channel: 'web', evidence: { ip: '192.0.2.1' } };
        const response = await post('/end-users', individualBody({ reverseSolicitationAttestation: attestation }));
        expect(response.statusCode, response.body).toBe(201);
        expect(response.json().data).toMatchObject({ reverse_solicitation: { required: true, accepted: true }, disclosure_version: '1.0' });
        const stored = await t.storage.db.selectFrom('end_users').select('reverse_solicitation_attestation').where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
        expect(JSON.parse(stored.reverse_solicitation_attestation ?? 'null')).toEqual(attestation);
        const without = await post('/end-users', individualBody({ reverseSolicitationAttestation: { channel: 'web' } }));
        expect(without.statusCode, without.body).toBe(201);
        expect(without.json().data).toMatchObject({ reverse_solicitation: { required: true, accepted: false }, disclosure_accepted_at: null });
      });
    });

    it.each([
      ['firstName of 1 and lastName of 100 characters', { firstName: 'A', lastName: 'L'.repeat(100) }],
      ['an email of 255 characters', { email: `${'a'.repeat(243)}@example.com` }],
      ['a leap day', { dob: '2000-02-29' }],
      ['20 tags of 100 characters', { tags: Array.from({ length: 20 }, (_, index) => `${index}`.padEnd(100, 'x')) }],
      ['50 linked wallets', { linkedCryptoWallets: Array.from({ length: 50 }, () => ({ coin: 'USDC', walletAddress: '0xabc', relationship: ['owner'] })) }],
      ['every enum value set', { annualSalaryRange: 'ABOVE_150000', riskRating: 'HIGH', verificationMethod: 'provider_websdk' }],
      ['optional strings at their maximum', { middleName: 'm'.repeat(100), phone: '+'.padEnd(20, '1'), ipAddress: '1'.repeat(45), onboarding_url_token: 't'.repeat(100) }],
      ['an identification document', { identificationDocument: { type: 'passport', number: 'X123', issuingCountry: 'DE', expiryDate: '2030-01-01' } }],
      ['metadata', { metadata: { crm_id: '42' } }],
      ['birth country and nationality', { birthCountry: 'GB', nationality: 'FR' }],
      ['a signup time', { signupAt: '2026-05-01T10:00:00.000Z' }],
    ])('accepts %s', async (_label, overrides) => {
      expect((await post('/end-users', individualBody(overrides))).statusCode).toBe(201);
    });

    it.each([
      ['firstName of 0 characters', { firstName: '' }, '/firstName'],
      ['lastName of 101 characters', { lastName: 'L'.repeat(101) }, '/lastName'],
      ['an email of 256 characters', { email: `${'a'.repeat(244)}@example.com` }, '/email'],
      ['an email without @', { email: 'ada.example.com' }, '/email'],
      ['a dob off the pattern', { dob: '10/12/1990' }, '/dob'],
      ['a dob that is not a real date', { dob: '2023-02-30' }, '/dob'],
      ['a dob in the future', { dob: '2999-01-01' }, '/dob'],
      ['21 tags', { tags: Array.from({ length: 21 }, (_, index) => `t${index}`) }, '/tags'],
      ['an empty tag', { tags: [''] }, '/tags/0'],
      ['a tag of 101 characters', { tags: ['x'.repeat(101)] }, '/tags/0'],
      ['51 linked wallets', { linkedCryptoWallets: Array.from({ length: 51 }, () => ({ coin: 'USDC', walletAddress: '0xabc', relationship: [] })) }, '/linkedCryptoWallets'],
      ['an unknown annualSalaryRange', { annualSalaryRange: 'RANGE_1_TO_2' }, '/annualSalaryRange'],
      ['an unknown riskRating', { riskRating: 'EXTREME' }, '/riskRating'],
      ['an unknown verificationMethod', { verificationMethod: 'video' }, '/verificationMethod'],
      ['a phone of 21 characters', { phone: '1'.repeat(21) }, '/phone'],
      ['an ipAddress of 46 characters', { ipAddress: '1'.repeat(46) }, '/ipAddress'],
      ['a birthCountry of 3 letters', { birthCountry: 'DEU' }, '/birthCountry'],
      ['an onboarding_url_token of 101 characters', { onboarding_url_token: 't'.repeat(101) }, '/onboarding_url_token'],
      ['a non-UUID umbrellaLinkId', { umbrellaLinkId: 'abc' }, '/umbrellaLinkId'],
      ['an address without city', { address: { line1: 'x', postalCode: '1', country: 'DE' } }, '/address/city'],
      ['a report filename of 256 characters', { kycReportFilename: 'f'.repeat(256) }, '/kycReportFilename'],
      ['an empty report', { kycReportBase64: '' }, '/kycReportBase64'],
      ['a report that is not base64', { providerReportBase64: 'not base64!' }, '/providerReportBase64'],
      ['an unknown field', { favouriteColour: 'blue' }, '/favouriteColour'],
    ])('refuses %s with 400 naming the field', async (_label, overrides, path) => {
      expectFieldError(await post('/end-users', individualBody(overrides)), path);
    });

    it('requires firstName, lastName, email, dob and address', async () => {
      const response = await post('/end-users', {});
      expect(response.statusCode).toBe(400);
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(paths).toEqual(['/address', '/dob', '/email', '/firstName', '/lastName']);
    });

    it('accepts a report of 14,680,064 characters, keeps it as a stored document, and refuses one character more', async () => {
      // A PDF of the size whose base64 is exactly the spec's longest report string.
      const pdf = Buffer.alloc((reportMax / 4) * 3, 0x20);
      pdf.write('%PDF-1.4');
      const report = pdf.toString('base64');
      expect(report).toHaveLength(reportMax);
      const accepted = await post('/end-users', individualBody({ kycReportBase64: report, kycReportFilename: 'kyc.pdf' }));
      expect(accepted.statusCode).toBe(201);
      const id = accepted.json().data.id;
      const documents = await t.storage.db.selectFrom('documents').selectAll().where('end_user_id', '=', id).execute();
      expect(documents).toHaveLength(1);
      expect(documents[0]).toMatchObject({ document_type: 'kyc_report', file_name: 'kyc.pdf', fr_sync_status: 'pending' });
      expect(Number(documents[0]?.size_bytes)).toBe((reportMax / 4) * 3);
      const row = await t.storage.db.selectFrom('end_users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
      // The report lives in the file store, not inline in the end-user row.
      expect(Object.values(row).every((value) => typeof value !== "string" || value.length < 10_000)).toBe(true);

      const refused = await post('/end-users', individualBody({ kycReportBase64: `${report}A` }));
      expectFieldError(refused, '/kycReportBase64');
    });

    it('writes end_user.created to the outbox with the record', async () => {
      const user = await createIndividual(t, alice);
      const events = await outbox('end_user.created', user.id);
      expect(events).toHaveLength(1);
      expect(events[0].data).toEqual(user);
    });
  });

  describe('businesses', () => {
    it('creates a business end user with the business fields of the record', async () => {
      const response = await post('/end-users/businesses', businessBody({ sector: 'RETAIL' }, { businessType: 'PARTNERSHIP', tradingName: 'Engines' }));
      expect(response.statusCode).toBe(201);
      const user = response.json().data;
      expect(Object.keys(user).sort()).toEqual(recordFields);
      expect(user).toMatchObject({
        end_user_type: 'BUSINESS',
        company_name: 'Analytical Engines Ltd',
        email: 'office@engines.example',
        registration_number: 'HRB 12345',
        registration_date: '2015-06-01',
        business_type: 'PARTNERSHIP',
        incorporation_country: 'DE',
        sector: 'RETAIL',
        status: 'pending_verification',
        first_name: null,
        last_name: null,
      });
    });

    it('defaults business_type to LIMITED_COMPANY and sector to OTHER_PRODUCTS_SERVICES', async () => {
      const user = await createBusiness(t, alice);
      expect(user.business_type).toBe('LIMITED_COMPANY');
      expect(user.sector).toBe('OTHER_PRODUCTS_SERVICES');
    });

    it.each([
      ['ownership 0', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: ['shareholder'], ownership: 0 }] }],
      ['ownership 100', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: ['ubo'], ownership: 100 }] }],
      ['every person type', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: ['director', 'ubo', 'shareholder', 'signatory', 'authorised_representative'] }] }],
      ['a KYB report', { kybReportBase64: Buffer.from('%PDF-1.7').toString('base64') }],
    ])('accepts %s', async (_label, overrides) => {
      expect((await post('/end-users/businesses', businessBody(overrides))).statusCode).toBe(201);
    });

    it.each([
      ['ownership above 100', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: ['ubo'], ownership: 100.5 }] }, '/businessPersons/0/ownership'],
      ['negative ownership', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: ['ubo'], ownership: -1 }] }, '/businessPersons/0/ownership'],
      ['an unknown person type', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: ['cousin'] }] }, '/businessPersons/0/types/0'],
      ['no person types', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-01-01', email: 'a@b.example', address }, types: [] }] }, '/businessPersons/0/types'],
      ['no business persons', { businessPersons: [] }, '/businessPersons'],
      ['an unknown sector', { sector: 'PIRACY' }, '/sector'],
      ['a person with an impossible dob', { businessPersons: [{ person: { firstName: 'A', lastName: 'B', dob: '1980-13-01', email: 'a@b.example', address }, types: ['ubo'] }] }, '/businessPersons/0/person/dob'],
    ])('refuses %s with 400 naming the field', async (_label, overrides, path) => {
      expectFieldError(await post('/end-users/businesses', businessBody(overrides)), path);
    });

    it.each([
      ['a company name of 201 characters', { companyName: 'C'.repeat(201) }, '/business/companyName'],
      ['a registration date that is not a date', { registrationDate: '2015-02-31' }, '/business/registrationDate'],
      ['an incorporation country that is not assigned', { incorporationCountry: 'ZZ' }, '/business/incorporationCountry'],
      ['an unknown business type', { businessType: 'EMPIRE' }, '/business/businessType'],
      ['a website that is not a URL', { website: 'not a url' }, '/business/website'],
    ])('refuses %s with 400 naming the field', async (_label, businessOverrides, path) => {
      expectFieldError(await post('/end-users/businesses', businessBody({}, businessOverrides)), path);
    });

    it('requires the business object and its core fields', async () => {
      const response = await post('/end-users/businesses', { business: {}, businessPersons: [] });
      expect(response.statusCode).toBe(400);
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path);
      for (const path of ['/business/companyName', '/business/registrationNumber', '/business/registrationDate', '/business/email', '/business/incorporationCountry', '/business/registeredAddress']) {
        expect(paths).toContain(path);
      }
    });
  });

  describe('reading and updating', () => {
    it('lists only the caller’s end users and gets one by id', async () => {
      const user = await createIndividual(t, alice);
      const list = await t.request({ url: '/end-users', key: alice.key });
      expect(list.statusCode).toBe(200);
      expect(list.json().data.map((entry: { id: string }) => entry.id)).toContain(user.id);
      expect((await t.request({ url: '/end-users', key: bob.key })).json().data).toEqual([]);
      const one = await t.request({ url: `/v2/end-users/${user.id}`, key: alice.key });
      expect(one.json().data).toEqual(user);
    });

    it('answers another customer’s end user id exactly like an unknown id, on GET, PATCH and the sandbox', async () => {
      const user = await createIndividual(t, alice);
      const unknown = '5e0d1c2b-3a49-4f8e-9d7c-6b5a4f3e2d1c';
      for (const call of [
        (id: string) => t.request({ url: `/end-users/${id}`, key: bob.key }),
        (id: string) => patch(id, { email: 'x@example.com' }, bob),
        (id: string) => decide(id, 'verified', bob),
      ]) {
        const foreign = await call(user.id);
        const missing = await call(unknown);
        expect(foreign.statusCode).toBe(404);
        expect(foreign.json()).toEqual(missing.json());
      }
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data.email).toBe('ada@example.com');
    });

    it('updates the listed fields with the creation constraints', async () => {
      const user = await createIndividual(t, alice);
      t.clock.advance(1000);
      const response = await patch(user.id, { firstName: 'Augusta', email: 'augusta@example.com', tags: ['vip'], metadata: { a: 'b' } });
      expect(response.statusCode).toBe(200);
      const updated = response.json().data;
      expect(updated).toMatchObject({ first_name: 'Augusta', email: 'augusta@example.com', last_name: 'Lovelace' });
      expect(updated.updated_at > String(user.updated_at)).toBe(true);
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data).toEqual(updated);
    });

    it.each([
      ['an empty body', {}],
      ['nulls alone', { firstName: null, tags: null }],
      ['the values it has', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', birthCountry: 'gb', tags: [], metadata: {} }],
    ])('answers a PATCH with %s with 200 and the record unchanged, updated_at included, and emits no event', async (_label, body) => {
      const user = await createIndividual(t, alice, { birthCountry: 'GB' });
      const eventsBefore = await t.storage.db.selectFrom('outbox_events').select('id').where('customer_id', '=', alice.id).execute();
      t.clock.advance(1000);
      const response = await patch(user.id, body);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json().data).toEqual(user);
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data).toEqual(user);
      expect(await t.storage.db.selectFrom('outbox_events').select('id').where('customer_id', '=', alice.id).execute()).toEqual(eventsBefore);
    });

    it.each([
      ['a firstName of 101 characters', { firstName: 'x'.repeat(101) }, '/firstName'],
      ['an impossible dob', { dob: '2001-02-29' }, '/dob'],
      ['21 tags', { tags: Array.from({ length: 21 }, (_, index) => `t${index}`) }, '/tags'],
      ['a field the spec does not list', { status: 'verified' }, '/status'],
    ])('refuses a PATCH with %s', async (_label, body, path) => {
      const user = await createIndividual(t, alice);
      expectFieldError(await patch(user.id, body), path);
    });

    it('refuses person fields on a business end user', async () => {
      const business = await createBusiness(t, alice);
      expectFieldError(await patch(business.id, { firstName: 'X' }), '/firstName');
      expect((await patch(business.id, { email: 'new@engines.example' })).statusCode).toBe(200);
    });
  });

  describe('verification lifecycle', () => {
    it('moves pending → review_required → verified with events, and sets verification_completed_at', async () => {
      const user = await createIndividual(t, alice);
      const review = await decide(user.id, 'review_required');
      expect(review.statusCode).toBe(200);
      expect(review.json().data.status).toBe('review_required');
      expect(review.json().data.verification_completed_at).toBeNull();
      expect(await outbox('end_user.review_required', user.id)).toHaveLength(1);

      const verified = await decide(user.id, 'verified');
      expect(verified.json().data.status).toBe('verified');
      expect(verified.json().data.verification_completed_at).toMatch(timestampPattern);
      const updates = await outbox('end_user.status_updated', user.id);
      expect(updates.map((event) => event.data.status)).toEqual(['review_required', 'verified']);
    });

    it.each([
      ['verified', 'rejected'],
      ['rejected', 'verified'],
      ['verified', 'review_required'],
    ])('refuses to move a %s end user to %s with 422 and changes nothing', async (first, second) => {
      const user = await createIndividual(t, alice);
      await decide(user.id, first);
      const response = await decide(user.id, second);
      expect(response.statusCode).toBe(422);
      expect(response.json().error.code).toBe('INVALID_STATUS_TRANSITION');
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data.status).toBe(first);
    });

    it('refuses an unknown outcome with 400', async () => {
      const user = await createIndividual(t, alice);
      expectFieldError(await decide(user.id, 'approved'), '/outcome');
    });

    it.each([
      ['Reject', 'rejected'],
      ['Review', 'review_required'],
      ['verify', 'verified'],
    ])('lets the sandbox decide by itself for the magic last name %s', async (lastName, status) => {
      const user = await createIndividual(t, alice, { lastName });
      const worker = t.app.workers.find((candidate) => candidate.name === 'sandbox-kyc-decisions');
      expect(worker).toBeDefined();
      await worker!.runOnce();
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data.status).toBe('pending_verification');
      t.clock.advance(2001);
      await worker!.runOnce();
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data.status).toBe(status);
    });

    it('lets the sandbox decide for a business by its magic company name', async () => {
      const business = await createBusiness(t, alice, {}, { companyName: 'REJECT' });
      t.clock.advance(2001);
      await t.app.workers.find((candidate) => candidate.name === 'sandbox-kyc-decisions')!.runOnce();
      expect((await t.request({ url: `/end-users/${business.id}`, key: alice.key })).json().data.status).toBe('rejected');
    });

    it('forgets the decision a magic name announced once the end user is decided by hand', async () => {
      const user = await createIndividual(t, alice, { lastName: 'verify' });
      expect((await decide(user.id.toUpperCase(), 'review_required')).statusCode).toBe(200);
      t.clock.advance(2001);
      expect(await t.app.workers.find((candidate) => candidate.name === 'sandbox-kyc-decisions')!.runOnce()).toBe(0);
      expect((await t.request({ url: `/end-users/${user.id}`, key: alice.key })).json().data.status).toBe('review_required');
    });
  });
});
