import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentSizeMaxBytes, onboardingLinkTtlMs } from '../../src/config/limits.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { csrfOf, signedInBrowser } from '../helpers/dashboard.js';
import { storedFilePaths } from '../helpers/files.js';
import { createIndividual, individualBody } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** Files of the accepted types: their magic bytes followed by some content, as a scanner writes them. */
const pngFile = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(120, 0x41)]);
const pdfFile = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n', 'latin1');
const linkNotValid = 'This link is no longer valid';
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface UploadedFile {
  name: string;
  type: string;
  bytes: Buffer;
}

interface HostedEndUser {
  id: string;
  token: string;
  /** The server's secret beside the token in the link. */
  secret: string;
  path: string;
}

/** The link's one path segment: the customer's token, percent-encoded, a dot, the server's secret. */
const linkPathPattern = /^\/onboarding\/(.+)\.([A-Za-z0-9_-]{43})$/;

/** A multipart/form-data body as a browser sends the upload form: fields in page order, then the file. */
async function multipartBody(fields: Array<[string, string]>, file?: UploadedFile): Promise<{ payload: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [name, value] of fields) form.append(name, value);
  if (file) form.append('document', new Blob([file.bytes], { type: file.type }), file.name);
  const encoded = new Response(form);
  return { payload: Buffer.from(await encoded.arrayBuffer()), contentType: encoded.headers.get('content-type')! };
}

async function postMultipart(t: TestApp, url: string, fields: Array<[string, string]>, file?: UploadedFile): Promise<LightMyRequestResponse> {
  const { payload, contentType } = await multipartBody(fields, file);
  return t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': contentType } });
}

function postForm(t: TestApp, url: string, fields: Record<string, string>): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: 'POST', url, payload: new URLSearchParams(fields).toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}

/** A hosted_kyc individual created through the JSON API, and the link the server issued (GET …/onboarding-link). */
async function hostedEndUser(t: TestApp, customer: TestCustomer, overrides: Record<string, unknown> = {}): Promise<HostedEndUser> {
  const created = await createIndividual(t, customer, { verificationMethod: 'hosted_kyc', ...overrides });
  const link = (await t.request({ url: `/end-users/${created.id}/onboarding-link`, key: customer.key })).json().data;
  const token: string = link.onboarding_url_token;
  const url = new URL(link.url);
  expect(url.origin).toBe('http://localhost:3000');
  const [, encodedToken, secret] = linkPathPattern.exec(url.pathname)!;
  expect(encodedToken).toBe(encodeURIComponent(token));
  return { id: created.id, token, secret: secret!, path: url.pathname };
}

function createHosted(t: TestApp, customer: TestCustomer, overrides: Record<string, unknown> = {}) {
  return t.request({ method: 'POST', url: '/end-users', key: customer.key, csrf: true, body: individualBody({ verificationMethod: 'hosted_kyc', ...overrides }) });
}

/** Opens the page and uploads a file with its form token. */
async function upload(t: TestApp, user: HostedEndUser, file: UploadedFile = { name: 'passport.png', type: 'image/png', bytes: pngFile }) {
  const page = await t.app.inject({ url: user.path });
  expect(page.statusCode).toBe(200);
  return postMultipart(t, `${user.path}/documents`, [['_csrf', csrfOf(page.body)], ['identity_document', 'passport']], file);
}

async function documentsOf(t: TestApp, customer: TestCustomer, endUserId: string) {
  const response = await t.request({ url: `/end-users/${endUserId}/documents`, key: customer.key });
  expect(response.statusCode).toBe(200);
  return response.json().data as Array<{ id: string; file_name: string; document_type: string; document_kind: string | null; mime_type: string; size_bytes: number }>;
}

async function statusOf(t: TestApp, customer: TestCustomer, endUserId: string): Promise<string> {
  return (await t.request({ url: `/end-users/${endUserId}`, key: customer.key })).json().data.status;
}

describe('hosted onboarding page (sandbox)', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  it('issues a token when none is sent, links it with a secret of its own, and shows that end user\'s own details, none of another end user', async () => {
    const ada = await hostedEndUser(t, alice, { middleName: 'King', nationality: 'GB', birthCountry: 'GB' });
    const grace = await hostedEndUser(t, alice, { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', dob: '1980-01-02' });
    expect(ada.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(grace.token).not.toBe(ada.token);
    expect(grace.secret).not.toBe(ada.secret);

    const page = await t.app.inject({ url: ada.path });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    for (const shown of ['<strong>Alice Ltd</strong> asks you to verify your identity', 'Ada King Lovelace', 'ada@example.com', '1990-12-10', 'GB', 'DE', 'Waiting for verification']) {
      expect(page.body).toContain(shown);
    }
    for (const hidden of ['Grace', 'Hopper', 'grace@example.com', ada.id, alice.frOwnerBusinessId]) expect(page.body).not.toContain(hidden);
    expect((await t.app.inject({ url: grace.path })).body).toContain('Grace Hopper');
  });

  it('answers the link through GET /end-users/{id}/onboarding-link, for hosted_kyc end users of the caller only', async () => {
    const ada = await hostedEndUser(t, alice);
    const link = (await t.request({ url: `/end-users/${ada.id}/onboarding-link`, key: alice.key })).json().data;
    expect(Object.keys(link).sort()).toEqual(['completed_at', 'expires_at', 'onboarding_url_token', 'url']);
    expect(Date.parse(link.expires_at) - t.clock.now().getTime()).toBe(onboardingLinkTtlMs);
    expect(link.completed_at).toBeNull();
    expect(link.url).toBe(`http://localhost:3000${ada.path}`);
    const page = await t.app.inject({ url: new URL(link.url).pathname });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Ada Lovelace');

    const bob = await t.createCustomer('Bob GmbH');
    const foreign = await t.request({ url: `/end-users/${ada.id}/onboarding-link`, key: bob.key });
    expect(foreign.statusCode).toBe(404);
    const plain = await createIndividual(t, alice, { verificationMethod: 'pdf_upload', onboarding_url_token: 'a'.repeat(40) });
    const none = await t.request({ url: `/end-users/${plain.id}/onboarding-link`, key: alice.key });
    expect(none.statusCode).toBe(404);
    expect(none.json().error.code).toBe('NOT_FOUND');
    const narrow = await t.createKey(alice.id, { scopes: ['payments:read'] });
    expect((await t.request({ url: `/end-users/${ada.id}/onboarding-link`, key: narrow.key })).statusCode).toBe(403);
  });

  it('sends the browser-page headers, noindex and no cookie, on the page and on its 404', async () => {
    const user = await hostedEndUser(t, alice);
    for (const response of [await t.app.inject({ url: user.path }), await t.app.inject({ url: `/onboarding/${user.token}.${'x'.repeat(43)}` })]) {
      expect(response.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(response.headers['content-security-policy']).toContain("script-src 'self'");
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['x-robots-tag']).toBe('noindex');
      expect(response.headers['cache-control']).toBe('no-store');
      expect(response.headers['set-cookie']).toBeUndefined();
    }
  });

  it('stores an uploaded identity document through the API\'s checks, redirects back and lists it, its name escaped', async () => {
    const user = await hostedEndUser(t, alice);
    const uploaded = await upload(t, user, { name: '<b>Ada & Co.png', type: 'image/png', bytes: pngFile });
    expect(uploaded.statusCode).toBe(303);
    expect(uploaded.headers.location).toMatch(new RegExp(`^${escapeRegExp(user.path)}\\?uploaded=[0-9a-f-]{36}$`));
    const pdf = await upload(t, user, { name: 'C:\\scans\\id-card.pdf', type: 'application/pdf', bytes: pdfFile });
    expect(pdf.statusCode).toBe(303);

    const documents = await documentsOf(t, alice, user.id);
    expect(documents).toMatchObject([
      { file_name: '<b>Ada & Co.png', document_type: 'identity', mime_type: 'image/png', size_bytes: pngFile.length },
      { file_name: 'id-card.pdf', document_type: 'identity', mime_type: 'application/pdf', size_bytes: pdfFile.length },
    ]);
    const page = await t.app.inject({ url: user.path });
    expect(page.body).toContain('&lt;b&gt;Ada &amp; Co.png');
    expect(page.body).not.toContain('<b>Ada');
    expect(page.body).toContain('id-card.pdf');
    expect(page.body).not.toContain('Received:');

    // The page it redirects to confirms the upload, by its kind and file name; a reload stores nothing more.
    const confirmed = await t.app.inject({ url: String(pdf.headers.location) });
    expect(confirmed.body).toContain('<p class="notice" role="status">Received: your Passport (id-card.pdf). Upload another, or finish below.</p>');
    expect(await documentsOf(t, alice, user.id)).toHaveLength(2);
    // Another end user's document id in the address confirms nothing.
    const other = await hostedEndUser(t, alice);
    const foreign = await t.app.inject({ url: `${other.path}?uploaded=${documents[1]!.id}` });
    expect(foreign.statusCode).toBe(200);
    expect(foreign.body).not.toContain('Received:');
  });

  it('shows when each document was uploaded and when the page was completed as a <time>, exact in its title', async () => {
    const was = t.clock.now();
    t.clock.set('2026-11-26T19:24:07.123Z');
    try {
      const at = '<time datetime="2026-11-26T19:24:07.123Z" title="2026-11-26 19:24:07.123 UTC">26 Nov 2026, 19:24 UTC</time>';
      const user = await hostedEndUser(t, alice);
      expect((await upload(t, user)).statusCode).toBe(303);
      const page = await t.app.inject({ url: user.path });
      expect(page.body).toContain(`<td>${at}</td></tr>`);
      expect((await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome: 'verified' })).statusCode).toBe(303);
      expect((await t.app.inject({ url: user.path })).body).toContain(`<dt>Completed</dt><dd>${at}</dd>`);
    } finally {
      t.clock.set(was);
    }
  });

  it('keeps the kind of document chosen on the page: GET /documents/{id}, the page\'s list and the dashboard show it', async () => {
    const user = await hostedEndUser(t, alice);
    const page = await t.app.inject({ url: user.path });
    const kinds = [['passport', 'Passport'], ['national_id', 'National ID card'], ['driving_licence', 'Driving licence'], ['residence_permit', 'Residence permit']];
    for (const [value, words] of kinds) expect(page.body).toContain(`<option value="${value}">${words}</option>`);
    expect((await upload(t, user)).statusCode).toBe(303);
    const licence = await postMultipart(t, `${user.path}/documents`, [['_csrf', csrfOf(page.body)], ['identity_document', 'driving_licence']], { name: 'licence.pdf', type: 'application/pdf', bytes: pdfFile });
    expect(licence.statusCode).toBe(303);

    const documents = await documentsOf(t, alice, user.id);
    expect(documents.map((document) => [document.document_type, document.document_kind])).toEqual([['identity', 'passport'], ['identity', 'driving_licence']]);
    const passport = (await t.request({ url: `/documents/${documents[0]!.id}`, key: alice.key })).json().data;
    expect(passport).toMatchObject({ document_type: 'identity', document_kind: 'passport', file_name: 'passport.png' });

    const listed = await t.app.inject({ url: user.path });
    expect(listed.body).toMatch(/<td>Passport<\/td>\s*<td>passport\.png<\/td>/);
    expect(listed.body).toMatch(/<td>Driving licence<\/td>\s*<td>licence\.pdf<\/td>/);
    const dashboard = await (await signedInBrowser(t, alice.id)).get(`/dashboard/end-users/${user.id}`);
    expect(dashboard.body).toMatch(/<td data-label="Type">Identity<\/td>\s*<td data-label="Kind">Passport<\/td>\s*<td data-label="File name">passport\.png<\/td>/);
    expect(dashboard.body).toMatch(/<td data-label="Type">Identity<\/td>\s*<td data-label="Kind">Driving licence<\/td>\s*<td data-label="File name">licence\.pdf<\/td>/);
  });

  it.each([
    ['a type the API does not take', { name: 'notes.txt', type: 'text/plain', bytes: Buffer.from('hello') }, 'File type: must be one of application/pdf, image/jpeg, image/png'],
    ['content that is not of its declared type', { name: 'fake.png', type: 'image/png', bytes: Buffer.from('GIF89a not a png at all') }, 'File: content is not a PDF, JPEG or PNG file'],
    ['a PDF declared as a JPEG', { name: 'scan.jpg', type: 'image/jpeg', bytes: pdfFile }, 'File: content is application/pdf, not image/jpeg'],
    ['a file name that displays backwards (U+202E)', { name: 'scan\u202Egnp.pdf', type: 'application/pdf', bytes: pdfFile }, 'File name: must not contain U+202E (a bidirectional control character)'],
    ['a file name with a zero-width space', { name: 'pass\u200Bport.png', type: 'image/png', bytes: pngFile }, 'File name: must not contain U+200B (an invisible character)'],
  ])('refuses %s with 400, says why on the page, and stores nothing', async (_case, file, problem) => {
    const user = await hostedEndUser(t, alice);
    const before = await storedFilePaths(t, alice.id);
    const response = await upload(t, user, file);
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain(problem);
    expect(response.body).toContain('name="_csrf"');
    expect(await documentsOf(t, alice, user.id)).toEqual([]);
    expect(await storedFilePaths(t, alice.id)).toEqual(before);
  });

  it('refuses a form without a file or document kind with 400', async () => {
    const user = await hostedEndUser(t, alice);
    const page = await t.app.inject({ url: user.path });
    const csrf = csrfOf(page.body);
    const noFile = await postMultipart(t, `${user.path}/documents`, [['_csrf', csrf], ['identity_document', 'passport']], { name: '', type: 'application/octet-stream', bytes: Buffer.alloc(0) });
    expect(noFile.statusCode).toBe(400);
    expect(noFile.body).toContain('File: choose a file');
    const unknownKind = await postMultipart(t, `${user.path}/documents`, [['_csrf', csrf], ['identity_document', 'library_card']], { name: 'a.png', type: 'image/png', bytes: pngFile });
    expect(unknownKind.statusCode).toBe(400);
    expect(unknownKind.body).toContain('Document: choose one of: Passport, National ID card, Driving licence, Residence permit');
    expect(await documentsOf(t, alice, user.id)).toEqual([]);
  });

  it('refuses a multipart body that cannot be read (no boundary, cut short) with 400, not a failure of ours', async () => {
    const user = await hostedEndUser(t, alice);
    const csrf = csrfOf((await t.app.inject({ url: user.path })).body);
    const field = `--x\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n`;
    const bodies = [
      { contentType: 'multipart/form-data', payload: field },
      { contentType: 'multipart/form-data; boundary=x', payload: `${field}--x\r\nContent-Disposition: form-da` },
      { contentType: 'multipart/form-data; boundary=x', payload: 'not multipart at all' },
    ];
    for (const { contentType, payload } of bodies) {
      const response = await t.app.inject({ method: 'POST', url: `${user.path}/documents`, payload, headers: { 'content-type': contentType } });
      expect(response.statusCode, payload).toBe(400);
      expect(response.body).toContain('The upload could not be read.');
    }
    expect(await documentsOf(t, alice, user.id)).toEqual([]);
  });

  it('refuses a file over the API\'s document size, or a crowded form, with 413 and stores nothing', async () => {
    const user = await hostedEndUser(t, alice);
    const before = await storedFilePaths(t, alice.id);
    const tooLarge = Buffer.alloc(documentSizeMaxBytes + 1, 0x41);
    pngFile.copy(tooLarge);
    const response = await upload(t, user, { name: 'huge.png', type: 'image/png', bytes: tooLarge });
    expect(response.statusCode).toBe(413);
    expect(response.body).toContain('The file is larger than 10 MB');
    const csrf = csrfOf((await t.app.inject({ url: user.path })).body);
    const extraFields = Array.from({ length: 5 }, (_, index): [string, string] => [`extra${index}`, 'x']);
    const crowded = await postMultipart(t, `${user.path}/documents`, [['_csrf', csrf], ['identity_document', 'passport'], ...extraFields], { name: 'a.png', type: 'image/png', bytes: pngFile });
    expect(crowded.statusCode).toBe(413);
    expect(crowded.body).toContain('Send one file with the form on this page.');
    expect(await documentsOf(t, alice, user.id)).toEqual([]);
    expect(await storedFilePaths(t, alice.id)).toEqual(before);
  });

  it('refuses an upload without its page\'s form token with 403 before storing the file', async () => {
    const ada = await hostedEndUser(t, alice);
    const grace = await hostedEndUser(t, alice, { firstName: 'Grace' });
    const before = await storedFilePaths(t, alice.id);
    const file = { name: 'passport.png', type: 'image/png', bytes: pngFile };
    const graceToken = csrfOf((await t.app.inject({ url: grace.path })).body);
    const attempts = [
      await postMultipart(t, `${ada.path}/documents`, [['identity_document', 'passport']], file),
      await postMultipart(t, `${ada.path}/documents`, [['_csrf', graceToken], ['identity_document', 'passport']], file),
      await postMultipart(t, `${ada.path}/documents`, [['_csrf', 'f'.repeat(64)]]),
    ];
    for (const response of attempts) {
      expect(response.statusCode).toBe(403);
      expect(response.body).toContain('The form was out of date');
      expect(response.headers['set-cookie']).toBeUndefined();
    }
    // The error page's way back is the page itself.
    const back = /<a href="([^"]+)">Back<\/a>/.exec(attempts[0]!.body)![1]!;
    expect((await t.app.inject({ url: new URL(back, `http://localhost${ada.path}/documents`).pathname })).statusCode).toBe(200);
    expect(await documentsOf(t, alice, ada.id)).toEqual([]);
    expect(await storedFilePaths(t, alice.id)).toEqual(before);
  });

  it('refuses an outcome without the form token with 403 and decides nothing', async () => {
    const user = await hostedEndUser(t, alice);
    expect((await upload(t, user)).statusCode).toBe(303);
    const response = await postForm(t, `${user.path}/outcome`, { outcome: 'verified' });
    expect(response.statusCode).toBe(403);
    expect(await statusOf(t, alice, user.id)).toBe('pending_verification');
    expect((await t.app.inject({ url: user.path })).statusCode).toBe(200);
  });

  it('refuses a JSON body, even with the form token, with the 415 page and decides nothing', async () => {
    const user = await hostedEndUser(t, alice);
    expect((await upload(t, user)).statusCode).toBe(303);
    const csrf = csrfOf((await t.app.inject({ url: user.path })).body);
    for (const outcome of [5, ['verified'], 'verified']) {
      const response = await t.app.inject({ method: 'POST', url: `${user.path}/outcome`, payload: { _csrf: csrf, outcome } });
      expect(response.statusCode).toBe(415);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
    }
    expect(await statusOf(t, alice, user.id)).toBe('pending_verification');
    expect((await t.app.inject({ url: user.path })).statusCode).toBe(200);
  });

  it('requires an identity document before a decision, and offers the decisions once there is one', async () => {
    const user = await hostedEndUser(t, alice);
    const empty = await t.app.inject({ url: user.path });
    expect(empty.body).not.toContain('name="outcome"');
    const refused = await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(empty.body), outcome: 'verified' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Upload an identity document first.');
    expect(await statusOf(t, alice, user.id)).toBe('pending_verification');

    expect((await upload(t, user)).statusCode).toBe(303);
    const page = await t.app.inject({ url: user.path });
    for (const button of ['value="verified">Verified', 'value="rejected">Rejected', 'value="review_required">Needs review']) expect(page.body).toContain(button);
    const unknown = await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome: 'approved' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toContain('Outcome: must be one of verified, rejected, review_required');
  });

  it.each([
    ['verified', 'Verified'],
    ['rejected', 'Rejected'],
    ['review_required', 'Under review'],
  ])('applies the sandbox decision %s, then the link says it is complete with the outcome, and takes nothing more', async (outcome, words) => {
    const user = await hostedEndUser(t, alice);
    expect((await upload(t, user)).statusCode).toBe(303);
    const page = await t.app.inject({ url: user.path });
    const decided = await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome });
    expect(decided.statusCode).toBe(303);
    expect(decided.headers.location).toBe(user.path);
    expect(await statusOf(t, alice, user.id)).toBe(outcome);

    // Reopened (a reload after the decision, or later): complete, with the outcome, not "no longer valid", and
    // nothing of the person's details nor a form.
    const reopened = await t.app.inject({ url: user.path });
    expect(reopened.statusCode).toBe(200);
    expect(reopened.body).toContain('<h1>Verification complete</h1>');
    expect(reopened.body).toContain(`<dt>Verification status</dt><dd>${words}</dd>`);
    expect(reopened.body).not.toContain(linkNotValid);
    expect(reopened.body).not.toContain('<form');
    expect(reopened.body).not.toContain('Ada');
    t.clock.advance(onboardingLinkTtlMs);
    expect((await t.app.inject({ url: user.path })).body).toContain('<h1>Verification complete</h1>');
    t.clock.advance(-onboardingLinkTtlMs);

    for (const response of [
      await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome: 'verified' }),
      await postMultipart(t, `${user.path}/documents`, [['_csrf', csrfOf(page.body)], ['identity_document', 'passport']], { name: 'late.png', type: 'image/png', bytes: pngFile }),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(response.body).toContain(linkNotValid);
    }
    expect(await documentsOf(t, alice, user.id)).toHaveLength(1);
    expect(await statusOf(t, alice, user.id)).toBe(outcome);
  });

  it('shows an end user decided elsewhere (the dashboard, the API) the outcome, not a request to verify, and takes no upload', async () => {
    for (const [outcome, message] of [['verified', 'Your identity is verified.'], ['rejected', 'Your identity could not be verified.']] as const) {
      const user = await hostedEndUser(t, alice);
      const before = await t.app.inject({ url: user.path });
      expect((await t.request({ method: 'POST', url: `/sandbox/end-users/${user.id}/verification`, key: alice.key, body: { outcome }, csrf: true })).statusCode).toBe(200);
      const page = await t.app.inject({ url: user.path });
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<h1>Verification decided</h1>');
      expect(page.body).toContain(message);
      expect(page.body).not.toContain('Upload an identity document');
      expect(page.body).not.toContain('<form');
      // A form of the page opened before the decision stores nothing: back to the page, which says why.
      const late = await postMultipart(t, `${user.path}/documents`, [['_csrf', csrfOf(before.body)], ['identity_document', 'passport']], { name: 'late.png', type: 'image/png', bytes: pngFile });
      expect(late.statusCode).toBe(303);
      expect(await documentsOf(t, alice, user.id)).toEqual([]);
    }
  });

  it('the dashboard makes a new link (the old one opens nothing, a completed page opens again) and shows or downloads the upload', async () => {
    const user = await hostedEndUser(t, alice, { onboarding_url_token: 'case-renew' });
    expect((await upload(t, user, { name: 'scan 1.pdf', type: 'application/pdf', bytes: pdfFile })).statusCode).toBe(303);
    const page = await t.app.inject({ url: user.path });
    expect((await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome: 'review_required' })).statusCode).toBe(303);
    const browser = await signedInBrowser(t, alice.id, 'renew@example.com');

    const endUserPage = await browser.get(`/dashboard/end-users/${user.id}`);
    expect(endUserPage.body).toContain(`action="/dashboard/end-users/${user.id}/onboarding-link"`);
    const renewed = await browser.submit(`/dashboard/end-users/${user.id}/onboarding-link`);
    expect(renewed.redirectedTo).toBe(`/dashboard/end-users/${user.id}`);
    // Its expiry as every page writes a time (in words, UTC), not the API's ISO text.
    expect(renewed.body).toMatch(/A new onboarding link is ready, valid until \d{1,2} [A-Z][a-z]{2} \d{4}, \d{2}:\d{2} UTC;/);
    const link = (await t.request({ url: `/end-users/${user.id}/onboarding-link`, key: alice.key })).json().data;
    const newPath = new URL(link.url).pathname;
    expect(newPath).not.toBe(user.path);
    expect(link.completed_at).toBeNull();
    expect(link.onboarding_url_token).not.toBe('case-renew');
    expect(renewed.body).toContain(link.url);
    // The old link opens nothing; the new one opens the page, to upload more (the status still allows a decision).
    expect((await t.app.inject({ url: user.path })).statusCode).toBe(404);
    const reopened = await t.app.inject({ url: newPath });
    expect(reopened.statusCode).toBe(200);
    expect(reopened.body).toContain('Upload an identity document');
    // A reload of the page the form led to makes no newer link.
    await browser.get(renewed.redirectedTo!);
    expect((await t.request({ url: `/end-users/${user.id}/onboarding-link`, key: alice.key })).json().data.url).toBe(link.url);

    // The upload, shown in the browser or downloaded, as uploaded.
    const [document] = await documentsOf(t, alice, user.id);
    expect(renewed.body).toContain(`href="/dashboard/documents/${document!.id}/file"`);
    const shown = await browser.get(`/dashboard/documents/${document!.id}/file`);
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-type']).toBe('application/pdf');
    expect(shown.headers['content-disposition']).toBe("inline; filename*=UTF-8''scan%201.pdf");
    expect(shown.headers['content-security-policy']).toContain("default-src 'none'");
    expect(shown.headers['x-content-type-options']).toBe('nosniff');
    expect(shown.rawPayload.equals(pdfFile)).toBe(true);
    const downloaded = await browser.get(`/dashboard/documents/${document!.id}/file?download=1`);
    expect(downloaded.headers['content-disposition']).toBe("attachment; filename*=UTF-8''scan%201.pdf");

    // Another customer's document and end user answer like unknown ones.
    const bob = await t.createCustomer('Bob GmbH');
    const bobs = await signedInBrowser(t, bob.id, 'bob-renew@example.com');
    expect((await bobs.get(`/dashboard/documents/${document!.id}/file`)).statusCode).toBe(404);
    await bobs.get('/dashboard');
    expect((await bobs.post(`/dashboard/end-users/${user.id}/onboarding-link`)).statusCode).toBe(404);
    expect((await t.request({ url: `/end-users/${user.id}/onboarding-link`, key: alice.key })).json().data.url).toBe(link.url);
    // An end user without a hosted page has no link to renew.
    const plain = await createIndividual(t, alice, { verificationMethod: 'pdf_upload' });
    await browser.get('/dashboard');
    expect((await browser.post(`/dashboard/end-users/${plain.id}/onboarding-link`)).statusCode).toBe(404);
  });

  it('answers every link that opens nothing (unknown, wrong secret, wrong token, used, expired, over-long) with one identical 404 page', async () => {
    const used = await hostedEndUser(t, alice);
    expect((await upload(t, used)).statusCode).toBe(303);
    const csrf = csrfOf((await t.app.inject({ url: used.path })).body);
    expect((await postForm(t, `${used.path}/outcome`, { _csrf: csrf, outcome: 'rejected' })).statusCode).toBe(303);
    const expiring = await hostedEndUser(t, alice);
    t.clock.advance(onboardingLinkTtlMs - 1000);
    expect((await t.app.inject({ url: expiring.path })).statusCode).toBe(200);
    t.clock.advance(1000);
    const open = await hostedEndUser(t, alice, { onboarding_url_token: 'case-7' });
    const other = await hostedEndUser(t, alice, { firstName: 'Grace' });
    expect((await t.app.inject({ url: open.path })).statusCode).toBe(200);

    const unknown = await t.app.inject({ url: `/onboarding/case-7.${randomBytes(32).toString('base64url')}` });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain(linkNotValid);
    const secret = open.secret;
    // A used link is complete, not unknown (the test above); an expired one that was never completed opens nothing.
    expect((await t.app.inject({ url: used.path })).body).toContain('Verification complete');
    const variants = [
      expiring.path,
      `/onboarding/case-8.${secret}`,
      `/onboarding/CASE-7.${secret}`,
      `/onboarding/case-7.${other.secret}`,
      `/onboarding/${encodeURIComponent(other.token)}.${secret}`,
      `/onboarding/${secret}`,
      '/onboarding/case-7',
      `/onboarding/case-7.${secret}x`,
      `/onboarding/case-7.${secret.slice(1)}`,
      `/onboarding/case-7-${secret}`,
      `/onboarding/case-7/${secret}`,
      `/onboarding/${secret}/case-7`,
      `/onboarding/${'a'.repeat(101)}.${secret}`,
      `/onboarding/${'a'.repeat(300)}`,
      `/onboarding/case-7.${secret}/extra`,
      '/onboarding/a/b/c',
    ];
    for (const url of variants) {
      const response = await t.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).toBe(unknown.body);
    }
    for (const url of [`${expiring.path}/documents`, `/onboarding/case-8.${secret}/documents`, `/onboarding/${'a'.repeat(101)}.${secret}/outcome`]) {
      const response = await postMultipart(t, url, [['_csrf', csrf]], { name: 'a.png', type: 'image/png', bytes: pngFile });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).toBe(unknown.body);
    }
    expect(await documentsOf(t, alice, expiring.id)).toEqual([]);
  });

  it('opens the page for a customer\'s own token of 1 to 100 characters of any kind, percent-encoded in the link, and refuses 101 with 400', async () => {
    const tokens = ['a', 'x'.repeat(100), 'ref 42/ä?#%&+=;', '.', '..', '%2F', '\u{1F600}'.repeat(100), 'tab\tand space'];
    for (const [index, token] of tokens.entries()) {
      const created = await hostedEndUser(t, alice, { onboarding_url_token: token, firstName: `Own${index}` });
      expect(created.token).toBe(token);
      const page = await t.app.inject({ url: created.path });
      expect(page.statusCode, token).toBe(200);
      expect(page.body).toContain(`Own${index} Lovelace`);
      // The page's forms post to the link itself.
      const uploaded = await upload(t, created);
      expect(uploaded.statusCode, token).toBe(303);
      expect(uploaded.headers.location).toMatch(new RegExp(`^${escapeRegExp(created.path)}\\?uploaded=[0-9a-f-]{36}$`));
    }

    const before = (await t.request({ url: '/end-users', key: alice.key })).json().data.length;
    const tooLong = await createHosted(t, alice, { onboarding_url_token: 'a'.repeat(101) });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error.details.fields).toEqual([expect.objectContaining({ location: 'body', path: '/onboarding_url_token' })]);
    expect((await t.request({ url: '/end-users', key: alice.key })).json().data).toHaveLength(before);
  });

  it('lets two customers choose the same token at the same instant: both succeed, each link opens its own end user, neither learns of the other', async () => {
    const bob = await t.createCustomer('Bob GmbH');
    const token = 'shared-reference-0001-chosen-by-two-customers';
    const [forAlice, forBob] = await Promise.all([
      createHosted(t, alice, { onboarding_url_token: token, firstName: 'Alicia' }),
      createHosted(t, bob, { onboarding_url_token: token, firstName: 'Bobby' }),
    ]);
    expect([forAlice.statusCode, forBob.statusCode], `${forAlice.body} ${forBob.body}`).toEqual([201, 201]);
    // One customer may use a token of its own again: each end user's link has its own secret.
    const again = await createHosted(t, bob, { onboarding_url_token: token, firstName: 'Barbara' });
    expect(again.statusCode, again.body).toBe(201);

    const links = [];
    for (const [customer, created] of [[alice, forAlice], [bob, forBob], [bob, again]] as const) {
      const link = (await t.request({ url: `/end-users/${created.json().data.id}/onboarding-link`, key: customer.key })).json().data;
      expect(link.onboarding_url_token).toBe(token);
      links.push(new URL(link.url).pathname);
    }
    expect(new Set(links).size).toBe(3);
    const pages = await Promise.all(links.map((url) => t.app.inject({ url })));
    expect(pages.map((page) => page.statusCode)).toEqual([200, 200, 200]);
    expect(pages[0]!.body).toContain('Alicia Lovelace');
    expect(pages[0]!.body).toContain('<strong>Alice Ltd</strong>');
    expect(pages[1]!.body).toContain('Bobby Lovelace');
    expect(pages[1]!.body).toContain('<strong>Bob GmbH</strong>');
    expect(pages[2]!.body).toContain('Barbara Lovelace');
    for (const name of ['Bobby', 'Barbara', 'Bob GmbH']) expect(pages[0]!.body).not.toContain(name);
    for (const name of ['Alicia', 'Alice Ltd']) expect(pages[1]!.body).not.toContain(name);
  });

  it('keeps opening a link issued before links carried a secret (the token alone) until it expires', async () => {
    const user = await hostedEndUser(t, alice, { firstName: 'Early' });
    // What such a link left in the database: its token in clear and the token's SHA-256, no secret.
    const token = randomBytes(32).toString('base64url');
    await t.storage.db
      .updateTable('end_users')
      .set({ onboarding_url_token: token, onboarding_token_hash: createHash('sha256').update(token).digest('hex'), onboarding_secret_hash: null })
      .where('id', '=', user.id)
      .execute();
    const legacy: HostedEndUser = { ...user, token, path: `/onboarding/${token}` };
    const link = (await t.request({ url: `/end-users/${user.id}/onboarding-link`, key: alice.key })).json().data;
    expect(link).toMatchObject({ url: `http://localhost:3000${legacy.path}`, onboarding_url_token: token });

    const page = await t.app.inject({ url: legacy.path });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Early Lovelace');
    expect(page.body).toContain(`action="${legacy.path}/documents"`);
    const uploaded = await upload(t, legacy);
    expect(uploaded.statusCode).toBe(303);
    expect(uploaded.headers.location).toMatch(new RegExp(`^${escapeRegExp(legacy.path)}\\?uploaded=[0-9a-f-]{36}$`));
    expect(await documentsOf(t, alice, user.id)).toHaveLength(1);

    const unknown = await t.app.inject({ url: `/onboarding/${randomBytes(32).toString('base64url')}` });
    for (const url of [user.path, `${legacy.path}.${user.secret}`]) expect((await t.app.inject({ url })).body, url).toBe(unknown.body);
    t.clock.advance(onboardingLinkTtlMs);
    const expired = await t.app.inject({ url: legacy.path });
    expect(expired.statusCode).toBe(404);
    expect(expired.body).toBe(unknown.body);
  });

  it('opens nothing for the token of an end user verified another way', async () => {
    const token = randomBytes(32).toString('base64url');
    await createIndividual(t, alice, { verificationMethod: 'pdf_upload', onboarding_url_token: token });
    const response = await t.app.inject({ url: `/onboarding/${token}` });
    expect(response.statusCode).toBe(404);
    expect(response.body).toContain(linkNotValid);
  });

  it('leaves a hosted_kyc end user to the page: the sandbox timer does not decide it', async () => {
    // "Verify" is a magic last name: the simulated provider decides such an end user by itself, unless hosted.
    const hosted = await hostedEndUser(t, alice, { lastName: 'Verify' });
    const timed = await createIndividual(t, alice, { lastName: 'Verify' });
    t.clock.advance(t.config.sandboxAutoSettleMs! + 1);
    await t.app.workers.find((worker) => worker.name === 'sandbox-kyc-decisions')!.runOnce();
    expect(await statusOf(t, alice, timed.id)).toBe('verified');
    expect(await statusOf(t, alice, hosted.id)).toBe('pending_verification');
    expect((await t.app.inject({ url: hosted.path })).statusCode).toBe(200);
  });
});

describe('hosted onboarding page (production)', () => {
  let t: TestApp;
  let alice: TestCustomer;

  beforeAll(async () => {
    t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterAll(async () => t.close());

  it('has no decision buttons; "Submit for review" closes the link and leaves the decision to the provider', async () => {
    const user = await hostedEndUser(t, alice);
    const empty = await t.app.inject({ url: user.path });
    expect(empty.statusCode).toBe(200);
    expect(empty.body).not.toContain('sandbox');
    expect(empty.body).not.toContain('Submit for review');
    const early = await postForm(t, `${user.path}/submit`, { _csrf: csrfOf(empty.body) });
    expect(early.statusCode).toBe(400);
    expect(early.body).toContain('Upload an identity document first.');

    expect((await upload(t, user)).statusCode).toBe(303);
    const page = await t.app.inject({ url: user.path });
    expect(page.body).not.toContain('name="outcome"');
    expect(page.body).toContain('Submit for review');
    const outcome = await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome: 'verified' });
    expect(outcome.statusCode).toBe(404);
    expect(await statusOf(t, alice, user.id)).toBe('pending_verification');

    expect((await postForm(t, `${user.path}/submit`, {})).statusCode).toBe(403);
    const submitted = await postForm(t, `${user.path}/submit`, { _csrf: csrfOf(page.body) });
    expect(submitted.statusCode).toBe(303);
    const complete = await t.app.inject({ url: String(submitted.headers.location) });
    expect(complete.body).toContain('Your documents have been sent for review.');
    expect(await statusOf(t, alice, user.id)).toBe('pending_verification');
    expect((await postForm(t, `${user.path}/submit`, { _csrf: csrfOf(page.body) })).statusCode).toBe(404);
  });
});
