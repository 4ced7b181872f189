import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { address, businessBody, createFiatAccount, createIndividual, individualBody } from '../helpers/fixtures.js';
import { createPayee, deposit, failingPaths, pay } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import type { LightMyRequestResponse } from 'fastify';

/**
 * The rules every request follows at the edge (docs/decisions/0005-request-input-rules.md), checked through several
 * endpoints on both databases: the same status and body on SQLite and PostgreSQL, nothing stored when refused.
 */
describe('request input rules', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  const post = (url: string, body: unknown) => t.request({ method: 'POST', url, key: alice.key, csrf: true, body });
  const payeeBody = (overrides: Record<string, unknown> = {}) => ({
    name: 'Erika Mustermann',
    address: { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
    bankDetails: { iban: 'DE89370400440532013000' },
    ...overrides,
  });
  const webhookBody = (description: string) => ({ url: 'http://127.0.0.1:9/hook', eventTypes: ['payee.status_updated'], description });
  const count = async (table: 'payees' | 'end_users' | 'fiat_accounts') =>
    Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).where('customer_id', '=', alice.id).executeTakeFirstOrThrow()).n);

  describe('text: well-formed Unicode without control characters', () => {
    it.each([
      ['a NUL in a payee name', payeeBody({ name: 'Eve\u0000' }), '/name'],
      ['a NUL in a nested field', payeeBody({ address: { line1: 'a\u0000b', city: 'Berlin', country: 'DE' } }), '/address/line1'],
      ['a lone high surrogate', payeeBody({ name: 'a\ud800b' }), '/name'],
      ['a lone low surrogate', payeeBody({ name: 'a\udc00b' }), '/name'],
      ['a bell character (U+0007)', payeeBody({ name: 'ding\u0007' }), '/name'],
      ['an escape character (U+001B)', payeeBody({ name: '\u001b[31mred' }), '/name'],
    ])('refuses %s with 400 naming the field, and stores nothing', async (_label, body, path) => {
      const before = await count('payees');
      const response = await post('/payees', body);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(failingPaths(response)).toContain(path);
      expect(await count('payees')).toBe(before);
    });

    it('answers a NUL the same whatever else is wrong, listing both fields', async () => {
      const response = await post('/payees', payeeBody({ name: 'x\u0000', address: { line1: '', city: 'Berlin', country: 'DE' } }));
      expect(response.statusCode).toBe(400);
      expect(failingPaths(response).sort()).toEqual(['/address/line1', '/name']);
    });

    it('refuses a control character in a metadata value and in a metadata key, naming where', async () => {
      const value = await post('/end-users', individualBody({ metadata: { note: 'a\u0000' } }));
      expect(value.statusCode).toBe(400);
      expect(failingPaths(value)).toEqual(['/metadata/note']);
      const key = await post('/end-users', individualBody({ metadata: { 'k\u0001': 'v' } }));
      expect(key.statusCode).toBe(400);
      expect(failingPaths(key)).toEqual(['/metadata']);
    });

    it('refuses a NUL in a query parameter as a query field error', async () => {
      const response = await t.request({ url: '/transactions?status=%00', key: alice.key });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields[0]).toMatchObject({ location: 'query', path: '/status' });
    });

    it('accepts tab, astral characters and a correctly paired surrogate, and lists them back as JSON any decoder reads', async () => {
      const name = 'Zoë 𝔘nicode\tcafé';
      const created = await post('/payees', payeeBody({ name, address: { line1: 'Line one\tline two', city: 'Berlin', country: 'DE' } }));
      expect(created.statusCode, created.body).toBe(201);
      const listed = await t.request({ url: '/payees', key: alice.key });
      expect(() => new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(listed.rawPayload))).not.toThrow();
      expect(listed.json().data.map((payee: { payee_name: string }) => payee.payee_name)).toContain(name);
    });
  });

  describe('text fields: a single line of visible characters', () => {
    // One field per kind of text, across endpoints: names, addresses, references, file names, descriptions, tags.
    const fields: Array<{ label: string; send: (text: string) => Promise<LightMyRequestResponse>; path: string }> = [
      { label: 'payee name', send: (text) => post('/payees', payeeBody({ name: `Eve ${text}` })), path: '/name' },
      { label: 'payee address line', send: (text) => post('/payees', payeeBody({ address: { line1: `1 Main ${text}`, city: 'Berlin', country: 'DE' } })), path: '/address/line1' },
      { label: 'payee bank name', send: (text) => post('/payees', payeeBody({ bankDetails: { iban: 'DE89370400440532013000', bankName: `Bank ${text}` } })), path: '/bankDetails/bankName' },
      { label: 'end-user first name', send: (text) => post('/end-users', individualBody({ firstName: `Ada${text}` })), path: '/firstName' },
      { label: 'end-user tag', send: (text) => post('/end-users', individualBody({ tags: [`vip${text}`] })), path: '/tags/0' },
      { label: 'end-user report file name', send: (text) => post('/end-users', individualBody({ kycReportFilename: `report${text}.pdf` })), path: '/kycReportFilename' },
      { label: 'business company name', send: (text) => post('/end-users/businesses', businessBody({}, { companyName: `Engines ${text} Ltd` })), path: '/business/companyName' },
      {
        label: 'document file name',
        send: (text) => post('/documents', { endUserId: '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f', documentType: 'identity', fileName: `scan${text}gnp.pdf`, fileData: 'JVBERi0=', mimeType: 'application/pdf' }),
        path: '/fileName',
      },
      { label: 'webhook description', send: (text) => post('/webhooks', webhookBody(`Ledger ${text} sync`)), path: '/description' },
      { label: 'fiat account name', send: (text) => post('/fiat-accounts', { accountName: `Main ${text}`, currency: 'EUR' }), path: '/accountName' },
      { label: 'wallet display name', send: (text) => post('/wallets', { displayName: `Treasury ${text}` }), path: '/displayName' },
    ];
    const characters: Array<[string, string, string]> = [
      ['LF', '\n', 'a line break'],
      ['CR', '\r', 'a line break'],
      ['CR LF', '\r\n', 'a line break'],
      ['NEL (U+0085)', '\u0085', 'a line break'],
      ['LINE SEPARATOR (U+2028)', '\u2028', 'a line break'],
      ['PARAGRAPH SEPARATOR (U+2029)', '\u2029', 'a line break'],
      ['RIGHT-TO-LEFT OVERRIDE (U+202E)', '\u202E', 'a bidirectional control character'],
      ['LEFT-TO-RIGHT EMBEDDING (U+202A)', '\u202A', 'a bidirectional control character'],
      ['RIGHT-TO-LEFT ISOLATE (U+2067)', '\u2067', 'a bidirectional control character'],
      ['POP DIRECTIONAL ISOLATE (U+2069)', '\u2069', 'a bidirectional control character'],
      ['LEFT-TO-RIGHT MARK (U+200E)', '\u200E', 'a bidirectional control character'],
      ['RIGHT-TO-LEFT MARK (U+200F)', '\u200F', 'a bidirectional control character'],
      ['ARABIC LETTER MARK (U+061C)', '\u061C', 'a bidirectional control character'],
      ['ZERO WIDTH SPACE (U+200B)', '\u200B', 'an invisible character'],
      ['WORD JOINER (U+2060)', '\u2060', 'an invisible character'],
      ['BOM / ZERO WIDTH NO-BREAK SPACE (U+FEFF)', '\uFEFF', 'an invisible character'],
      ['ZERO WIDTH JOINER between Latin letters (U+200D)', 'a\u200Db', 'zero-width joiner'],
      ['ZERO WIDTH NON-JOINER between Latin letters (U+200C)', 'a\u200Cb', 'zero-width joiner'],
    ];

    it.each(characters)('refuses %s in every kind of text field with 400 naming the field, and stores nothing', async (_label, text, kind) => {
      const before = { payees: await count('payees'), endUsers: await count('end_users'), accounts: await count('fiat_accounts') };
      for (const field of fields) {
        const response = await field.send(text);
        expect(response.statusCode, `${field.label}: ${JSON.stringify(response.json())}`).toBe(400);
        expect(response.json().error.code).toBe('VALIDATION_ERROR');
        const failure = (response.json().error.details.fields as Array<{ path: string; reason: string }>).find((entry) => entry.path === field.path);
        expect(failure?.reason, field.label).toContain(kind);
      }
      expect({ payees: await count('payees'), endUsers: await count('end_users'), accounts: await count('fiat_accounts') }).toEqual(before);
    });

    it('names the character it refuses', async () => {
      const response = await post('/payees', payeeBody({ name: 'invoice\u202Efdp.exe' }));
      expect(response.json().error.details.fields).toEqual([
        { location: 'body', path: '/name', reason: 'must not contain U+202E (a bidirectional control character): text fields are a single line of visible characters' },
      ]);
    });

    it('refuses them on PATCH too: an end user and a webhook description', async () => {
      const user = await createIndividual(t, alice);
      const patchedUser = await t.request({ method: 'PATCH', url: `/end-users/${user.id}`, key: alice.key, csrf: true, body: { lastName: 'Love\nlace' } });
      expect(patchedUser.statusCode).toBe(400);
      expect(failingPaths(patchedUser)).toEqual(['/lastName']);
      const hook = await post('/webhooks', webhookBody('Ledger sync'));
      expect(hook.statusCode, hook.body).toBe(201);
      const patchedHook = await t.request({ method: 'PATCH', url: `/webhooks/${hook.json().data.id}`, key: alice.key, csrf: true, body: { description: 'Ledger\u200B sync' } });
      expect(patchedHook.statusCode).toBe(400);
      expect(failingPaths(patchedHook)).toEqual(['/description']);
      expect((await t.request({ url: `/webhooks/${hook.json().data.id}`, key: alice.key })).json().data.description).toBe('Ledger sync');
    });

    it.each([
      ['Arabic', 'محمد عبد الله'],
      ['Hebrew', 'דוד לוי'],
      ['Persian with its ZERO WIDTH NON-JOINER', 'می\u200Cخواهم'],
      ['Devanagari with a ZERO WIDTH JOINER after the virama', 'क्\u200Dष'],
      ['emoji ZWJ sequences', 'Ada 👩\u200D💻 🏳️\u200D🌈 👩🏽\u200D💻'],
      ['tabs, accents and astral letters', 'Zoë\t𝔘nicode café'],
    ])('accepts %s and answers it as sent', async (_label, name) => {
      const payee = await post('/payees', payeeBody({ name }));
      expect(payee.statusCode, payee.body).toBe(201);
      expect(payee.json().data.payee_name).toBe(name);
      const user = await post('/end-users', individualBody({ firstName: name }));
      expect(user.statusCode, user.body).toBe(201);
      expect(user.json().data.first_name).toBe(name);
    });

    it('keeps free-form JSON as sent: metadata values may hold several lines and any visible or invisible character', async () => {
      const metadata = { note: 'first line\nsecond line', label: 'a\u202Eb\u200Bc' };
      const response = await post('/end-users', individualBody({ metadata }));
      expect(response.statusCode, response.body).toBe(201);
      const row = await t.storage.db.selectFrom('end_users').select('metadata').where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
      expect(JSON.parse(row.metadata)).toEqual(metadata);
    });
  });

  describe('country codes: assigned ISO 3166-1 alpha-2 codes in any case, stored and answered in upper case', () => {
    const storedEndUser = async (id: string) =>
      t.storage.db.selectFrom('end_users').select(['birth_country', 'nationality', 'address', 'identification_document', 'business', 'business_persons']).where('id', '=', id).executeTakeFirstOrThrow();

    it('of an individual: address, birthCountry, nationality, identificationDocument.issuingCountry', async () => {
      const response = await post('/end-users', individualBody({ address: { ...address, country: 'de' }, birthCountry: 'fr', nationality: 'It', identificationDocument: { issuingCountry: 'gb' } }));
      expect(response.statusCode, response.body).toBe(201);
      const row = await storedEndUser(response.json().data.id);
      expect(row).toMatchObject({ birth_country: 'FR', nationality: 'IT' });
      expect(JSON.parse(row.address!).country).toBe('DE');
      expect(JSON.parse(row.identification_document!).issuingCountry).toBe('GB');
    });

    it('of an individual on PATCH', async () => {
      const user = await createIndividual(t, alice);
      const response = await t.request({ method: 'PATCH', url: `/end-users/${user.id}`, key: alice.key, csrf: true, body: { birthCountry: 'at', nationality: 'ch' } });
      expect(response.statusCode, response.body).toBe(200);
      expect(await storedEndUser(user.id)).toMatchObject({ birth_country: 'AT', nationality: 'CH' });
    });

    it('of a business and its persons, incorporation_country answered in upper case', async () => {
      const body = businessBody({}, { incorporationCountry: 'de', registeredAddress: { ...address, country: 'de' }, tradingAddress: { ...address, country: 'nl' } });
      const person = (body.businessPersons as Array<{ person: Record<string, unknown> }>)[0]!.person;
      Object.assign(person, { birthCountry: 'pl', nationality: 'cz', address: { ...address, country: 'lu' } });
      const response = await post('/end-users/businesses', body);
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().data.incorporation_country).toBe('DE');
      const row = await storedEndUser(response.json().data.id);
      const business = JSON.parse(row.business!);
      expect([business.incorporationCountry, business.registeredAddress.country, business.tradingAddress.country]).toEqual(['DE', 'DE', 'NL']);
      expect(JSON.parse(row.business_persons!)[0].person).toMatchObject({ birthCountry: 'PL', nationality: 'CZ', address: { country: 'LU' } });
    });

    it('of a payee: address.country_code and the bank addresses', async () => {
      const response = await post(
        '/payees',
        payeeBody({
          address: { line1: '1 Rue', city: 'Paris', country: 'fr' },
          bankDetails: { iban: 'DE89370400440532013000', bankAddressCountry: 'de', intermediaryBankAddressCountry: 'xk', intermediaryBankName: 'Relay Bank' },
        }),
      );
      expect(response.statusCode, response.body).toBe(201);
      const payee = response.json().data;
      expect(payee.country_code).toBe('FR');
      expect(payee.bank_address.country_code).toBe('DE');
      expect(payee.intermediary_bank.country_code).toBe('XK');
    });

    const codesRefused = ['XX', 'zz', 'EU', 'UK', 'D', 'DEU', 'ıt', 'd1'];
    const countryFields: Array<{ label: string; send: (code: string) => Promise<LightMyRequestResponse>; path: string }> = [
      { label: 'end-user address', send: (code) => post('/end-users', individualBody({ address: { ...address, country: code } })), path: '/address/country' },
      { label: 'birthCountry', send: (code) => post('/end-users', individualBody({ birthCountry: code })), path: '/birthCountry' },
      { label: 'nationality', send: (code) => post('/end-users', individualBody({ nationality: code })), path: '/nationality' },
      { label: 'identification document', send: (code) => post('/end-users', individualBody({ identificationDocument: { issuingCountry: code } })), path: '/identificationDocument/issuingCountry' },
      { label: 'incorporationCountry', send: (code) => post('/end-users/businesses', businessBody({}, { incorporationCountry: code })), path: '/business/incorporationCountry' },
      { label: 'trading address', send: (code) => post('/end-users/businesses', businessBody({}, { tradingAddress: { ...address, country: code } })), path: '/business/tradingAddress/country' },
      {
        label: 'business person nationality',
        send: (code) => {
          const body = businessBody();
          Object.assign((body.businessPersons as Array<{ person: Record<string, unknown> }>)[0]!.person, { nationality: code });
          return post('/end-users/businesses', body);
        },
        path: '/businessPersons/0/person/nationality',
      },
      { label: 'payee address', send: (code) => post('/payees', payeeBody({ address: { line1: '1 Rue', city: 'Paris', country: code } })), path: '/address/country' },
      { label: 'payee bank address', send: (code) => post('/payees', payeeBody({ bankDetails: { iban: 'DE89370400440532013000', bankAddressCountry: code } })), path: '/bankDetails/bankAddressCountry' },
    ];

    it.each(codesRefused)('refuses %s on every country field with 400 naming the field, and stores nothing', async (code) => {
      const before = { payees: await count('payees'), endUsers: await count('end_users') };
      for (const field of countryFields) {
        const response = await field.send(code);
        expect(response.statusCode, `${field.label}: ${JSON.stringify(response.json())}`).toBe(400);
        expect(failingPaths(response), field.label).toEqual([field.path]);
      }
      const user = await createIndividual(t, alice);
      const patched = await t.request({ method: 'PATCH', url: `/end-users/${user.id}`, key: alice.key, csrf: true, body: { birthCountry: code } });
      expect(failingPaths(patched)).toEqual(['/birthCountry']);
      expect({ payees: await count('payees'), endUsers: await count('end_users') }).toEqual({ ...before, endUsers: before.endUsers + 1 });
    });

    it('says what it takes', async () => {
      const response = await post('/end-users', individualBody({ birthCountry: 'XX' }));
      expect(response.json().error.details.fields).toEqual([{ location: 'body', path: '/birthCountry', reason: 'must be an assigned ISO 3166-1 alpha-2 country code, such as DE' }]);
    });
  });

  describe('a body that says nothing is {}', () => {
    const send = (method: 'POST' | 'PATCH', url: string, payload: string | undefined) =>
      t.request({ method, url, key: alice.key, csrf: true, ...(payload === undefined ? {} : { body: payload, headers: { 'content-type': 'application/json' } }) });

    it.each([
      ['an empty JSON body', ''],
      ['a blank JSON body', ' \r\n\t'],
      ['no body at all', undefined],
    ])('%s runs the operations whose fields are all optional as {}', async (_label, payload) => {
      const wallet = await send('POST', '/wallets', payload);
      expect(wallet.statusCode, wallet.body).toBe(201);
      expect(wallet.json().data).toMatchObject({ display_name: 'USDC wallet', currency: 'USDC' });

      const hook = await post('/webhooks', webhookBody('Quiet'));
      const id = hook.json().data.id as string;
      const tested = await send('POST', `/webhooks/${id}/test`, payload);
      expect(tested.statusCode, tested.body).toBe(202);
      const rotated = await send('POST', `/webhooks/${id}/rotate-secret`, payload);
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(rotated.json().data.signing_secret).toMatch(/^whsec_/);
      const patched = await send('PATCH', `/webhooks/${id}`, payload);
      expect(patched.statusCode, patched.body).toBe(200);
      expect(patched.json().data.description).toBe('Quiet');
      await t.request({ method: 'DELETE', url: `/webhooks/${id}`, key: alice.key, csrf: true });
    });

    it.each([
      ['an empty JSON body', ''],
      ['no body at all', undefined],
    ])('%s on an operation with required fields answers 400 naming each of them', async (_label, payload) => {
      const response = await send('POST', '/payees', payload);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(failingPaths(response).sort()).toEqual(['/address', '/bankDetails', '/name']);
    });
  });

  describe('enums match regardless of case and come back in their canonical spelling', () => {
    it('business person types, sector and business type', async () => {
      const body = businessBody({ sector: 'other_products_services' }, { businessType: 'limited_company' });
      (body.businessPersons as Array<Record<string, unknown>>)[0]!.types = ['DIRECTOR', 'Ubo'];
      const response = await post('/end-users/businesses', body);
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().data).toMatchObject({ sector: 'OTHER_PRODUCTS_SERVICES', business_type: 'LIMITED_COMPANY' });
      const row = await t.storage.db.selectFrom('end_users').select('business_persons').where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
      expect(JSON.parse(row.business_persons ?? '[]')[0].types).toEqual(['director', 'ubo']);
    });

    it('annual salary range and risk rating of an individual', async () => {
      const response = await post('/end-users', individualBody({ annualSalaryRange: 'range_0_to_25000', riskRating: 'low' }));
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().data.risk_tier).toBe('low_risk');
      const row = await t.storage.db.selectFrom('end_users').select(['annual_salary_range', 'risk_rating']).where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ annual_salary_range: 'RANGE_0_TO_25000', risk_rating: 'LOW' });
    });

    it('currency and IBAN country of a fiat account', async () => {
      const response = await post('/fiat-accounts', { accountName: 'lower', currency: 'eur', ibanCountry: 'lu' });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().data.currency).toBe('EUR');
      expect(response.json().data.iban).toMatch(/^LU/);
    });

    it('a query filter', async () => {
      const response = await t.request({ url: '/transactions?status=COMPLETED&direction=Incoming', key: alice.key });
      expect(response.statusCode, response.body).toBe(200);
    });

    it('still refuses a value that is not in the list, naming the allowed ones', async () => {
      const response = await post('/fiat-accounts', { accountName: 'x', currency: 'chf' });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields).toEqual([{ location: 'body', path: '/currency', reason: 'must be one of USD, EUR, GBP' }]);
    });
  });

  describe('null on an optional field means absent', () => {
    it('on a fiat account', async () => {
      const response = await post('/fiat-accounts', { accountName: 'nulls', currency: 'EUR', ibanCountry: null, linkedBusinessId: null, umbrellaLinkId: null });
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().data).toMatchObject({ iban: expect.stringMatching(/^DE/), linked_business_id: null, is_master: true });
    });

    it('on nested optional fields of an end user and a payee', async () => {
      const user = await post('/end-users', individualBody({ middleName: null, phone: null, address: { line1: '1 Main Street', line2: null, city: 'Berlin', postalCode: '10115', country: 'DE', state: null } }));
      expect(user.statusCode, user.body).toBe(201);
      expect(user.json().data.middle_name).toBeNull();
      const payee = await post('/payees', payeeBody({ endUserId: null, address: { line1: 'x', line2: null, city: 'Berlin', postalCode: null, country: 'DE' } }));
      expect(payee.statusCode, payee.body).toBe(201);
      expect(payee.json().data).toMatchObject({ end_user_id: null, address_line2: null, postal_code: null });
    });

    it('round-trips a record: the nulls a payment answers can be sent back', async () => {
      const from = await createFiatAccount(t, alice);
      await deposit(t, alice, from.id, 100);
      const payee = await createPayee(t, alice);
      const payment = await pay(t, alice, { fromAccountId: from.id, payeeId: payee.id, amount: 1, currency: 'EUR', reference: 'nulls', toAccountId: null, payeeVerificationId: null, umbrellaLinkId: null, fromAccountType: null, paymentScheme: null });
      expect(payment.status).toBe('pending');
    });

    it('keeps refusing null where the field is required', async () => {
      const response = await post('/fiat-accounts', { accountName: null, currency: 'EUR' });
      expect(response.statusCode).toBe(400);
      expect(failingPaths(response)).toEqual(['/accountName']);
    });
  });

  describe('timestamps: any RFC 3339 form, stored and answered as UTC with milliseconds', () => {
    it('normalises signupAt and the reverse-solicitation acceptedAt', async () => {
      const response = await post(
        '/end-users',
        individualBody({ signupAt: '2026-05-01t12:30:00.123456+02:00', reverseSolicitationAttestation: { accepted: true, acceptedAt: '2026-05-01T23:59:60z' } }),
      );
      expect(response.statusCode, response.body).toBe(201);
      expect(response.json().data.disclosure_accepted_at).toBe('2026-05-01T23:59:59.999Z');
      const row = await t.storage.db.selectFrom('end_users').select(['signup_at', 'disclosure_accepted_at']).where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
      expect(row).toEqual({ signup_at: '2026-05-01T10:30:00.123Z', disclosure_accepted_at: '2026-05-01T23:59:59.999Z' });
    });

    it('normalises signupAt on PATCH', async () => {
      const user = await createIndividual(t, alice);
      const response = await t.request({ method: 'PATCH', url: `/end-users/${user.id}`, key: alice.key, csrf: true, body: { signupAt: '2026-01-01T00:00:00-0130' } });
      expect(response.statusCode, response.body).toBe(200);
      const row = await t.storage.db.selectFrom('end_users').select('signup_at').where('id', '=', user.id).executeTakeFirstOrThrow();
      expect(row.signup_at).toBe('2026-01-01T01:30:00.000Z');
    });

    // Every form JSON Schema's date-time format lets through, and the ones around the storable range.
    const edgeCases: Array<[string, string | undefined]> = [
      ['2016-12-31T23:59:60Z', '2016-12-31T23:59:59.999Z'],
      ['2017-01-01T00:59:60+01:00', '2016-12-31T23:59:59.999Z'],
      ['2020-01-01t00:00:00z', '2020-01-01T00:00:00.000Z'],
      ['2020-01-01T00:00:00+02', '2019-12-31T22:00:00.000Z'],
      ['2020-01-01T00:00:00+0200', '2019-12-31T22:00:00.000Z'],
      ['2020-01-01T00:00:00-23:59', '2020-01-01T23:59:00.000Z'],
      ['2020-01-01T00:00:00.1Z', '2020-01-01T00:00:00.100Z'],
      ['2020-01-01T00:00:00.123456789Z', '2020-01-01T00:00:00.123Z'],
      ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
      ['0000-01-01T00:00:00Z', '0000-01-01T00:00:00.000Z'],
      ['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z'],
      ['0000-01-01T00:00:00+00:01', undefined],
      ['9999-12-31T23:59:59-00:01', undefined],
      ['2016-12-31T12:00:60Z', undefined],
      ['2023-02-29T00:00:00Z', undefined],
      ['2020-01-01T24:00:00Z', undefined],
      ['2020-01-01T00:00:00', undefined],
      ['2020-01-01', undefined],
    ];

    it.each(edgeCases)('GET /transactions?created_from=%s and created_to answer 200 or 400, never 500', async (value, normalized) => {
      const query = `created_from=${encodeURIComponent(value)}&created_to=${encodeURIComponent(value)}`;
      const response = await t.request({ url: `/transactions?${query}`, key: alice.key });
      expect(response.statusCode, response.body).toBe(normalized === undefined ? 400 : 200);
    });

    it.each(edgeCases)('signupAt %s is stored as %s, or refused with 400 on /signupAt', async (value, normalized) => {
      const response = await post('/end-users', individualBody({ signupAt: value }));
      if (normalized === undefined) {
        expect(response.statusCode).toBe(400);
        expect(failingPaths(response)).toEqual(['/signupAt']);
        return;
      }
      expect(response.statusCode, response.body).toBe(201);
      const row = await t.storage.db.selectFrom('end_users').select('signup_at').where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
      expect(row.signup_at).toBe(normalized);
    });

    it('filters by the instant, whatever the offset it was written with', async () => {
      const utc = await t.request({ url: `/transactions?created_from=${encodeURIComponent('2020-01-01T00:00:00Z')}`, key: alice.key });
      const offset = await t.request({ url: `/transactions?created_from=${encodeURIComponent('2020-01-01T02:00:00+02:00')}`, key: alice.key });
      expect(offset.json().meta.pagination.total).toBe(utc.json().meta.pagination.total);
    });
  });

  describe('unknown query parameters are ignored on every list', () => {
    it.each(['/transactions', '/payments', '/fiat-accounts', '/virtual-accounts', '/payees', '/end-users'])('%s?_=123 answers 200', async (path) => {
      const response = await t.request({ url: `${path}?_=123&sort=asc`, key: alice.key });
      expect(response.statusCode, response.body).toBe(200);
    });

    it('still validates the known ones', async () => {
      const response = await t.request({ url: '/transactions?_=1&page=0', key: alice.key });
      expect(response.statusCode).toBe(400);
      expect(failingPaths(response)).toEqual(['/page']);
    });
  });

  describe('metadata: any JSON values within documented bounds', () => {
    it('keeps numbers, booleans, nulls, arrays and nested objects as sent', async () => {
      const metadata = { plan: 'gold', seats: 12, ratio: 0.5, active: true, cancelled: null, tags: ['a', 1], owner: { team: { name: 'ops' } } };
      const response = await post('/end-users', individualBody({ metadata }));
      expect(response.statusCode, response.body).toBe(201);
      const row = await t.storage.db.selectFrom('end_users').select('metadata').where('id', '=', response.json().data.id).executeTakeFirstOrThrow();
      expect(JSON.parse(row.metadata)).toEqual(metadata);
    });

    it('accepts the bounds exactly: 50 keys of 40 characters, 5 levels, 16 KiB', async () => {
      const keys = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`${String(index).padStart(2, '0')}${'k'.repeat(38)}`, index]));
      expect((await post('/end-users', individualBody({ metadata: keys }))).statusCode).toBe(201);
      const deep = { a: { b: { c: { d: { e: 'metadata and four objects in it: five levels' } } } } };
      expect((await post('/end-users', individualBody({ metadata: deep }))).statusCode).toBe(201);
      const big = { blob: 'x'.repeat(16 * 1024 - '{"blob":""}'.length) };
      expect((await post('/end-users', individualBody({ metadata: big }))).statusCode).toBe(201);
    });

    it.each([
      ['51 keys', Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`k${index}`, index]))],
      ['a key of 41 characters', { ['k'.repeat(41)]: 1 }],
      ['an empty key', { '': 1 }],
      ['6 levels of nesting', { a: { b: { c: { d: { e: { f: 1 } } } } } }],
      ['more than 16 KiB as JSON', { blob: 'x'.repeat(16 * 1024) }],
      ['an array instead of an object', ['a']],
    ])('refuses %s with 400 on /metadata, and stores nothing', async (_label, metadata) => {
      const before = await count('end_users');
      const response = await post('/end-users', individualBody({ metadata }));
      expect(response.statusCode).toBe(400);
      expect(failingPaths(response)[0]).toMatch(/^\/metadata/);
      expect(await count('end_users')).toBe(before);
    });
  });
});
