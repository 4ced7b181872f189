import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentSizeMaxBytes, onboardingLinkTtlMs } from '../../src/config/limits.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { csrfOf } from '../helpers/dashboard.js';
import { storedFilePaths } from '../helpers/files.js';
import { createIndividual, individualBody } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** Files of the accepted types: their magic bytes followed by some content, as a scanner writes them. */
const pngFile = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(120, 0x41)]);
const pdfFile = Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n', 'latin1');
const linkNotValid = 'This link is no longer valid';

interface UploadedFile {
  name: string;
  type: string;
  bytes: Buffer;
}

interface HostedEndUser {
  id: string;
  token: string;
  path: string;
}

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
  expect(link.url).toBe(`http://localhost:3000/onboarding/${token}`);
  return { id: created.id, token, path: `/onboarding/${token}` };
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
  return response.json().data as Array<{ file_name: string; document_type: string; mime_type: string; size_bytes: number }>;
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

  it('issues a 43-character link and shows that end user\'s own details, none of another end user', async () => {
    const ada = await hostedEndUser(t, alice, { middleName: 'King', nationality: 'GB', birthCountry: 'GB' });
    const grace = await hostedEndUser(t, alice, { firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com', dob: '1980-01-02' });
    expect(ada.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(grace.token).not.toBe(ada.token);

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
    for (const response of [await t.app.inject({ url: user.path }), await t.app.inject({ url: `/onboarding/${'x'.repeat(43)}` })]) {
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
    expect(uploaded.headers.location).toBe(user.path);
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
    expect(unknownKind.body).toContain('Document: choose one of: Passport, National ID card, Driving licence');
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
    expect(unknown.body).toContain('outcome: must be one of verified, rejected, review_required');
  });

  it.each([
    ['verified', 'Verified'],
    ['rejected', 'Rejected'],
    ['review_required', 'Under review'],
  ])('applies the sandbox decision %s, thanks the person, and the link opens nothing after', async (outcome, words) => {
    const user = await hostedEndUser(t, alice);
    expect((await upload(t, user)).statusCode).toBe(303);
    const page = await t.app.inject({ url: user.path });
    const decided = await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome });
    expect(decided.statusCode).toBe(200);
    expect(decided.body).toContain('Thank you');
    expect(decided.body).toContain(`the status is now ${words}`);
    expect(await statusOf(t, alice, user.id)).toBe(outcome);

    for (const response of [
      await t.app.inject({ url: user.path }),
      await postForm(t, `${user.path}/outcome`, { _csrf: csrfOf(page.body), outcome: 'verified' }),
      await postMultipart(t, `${user.path}/documents`, [['_csrf', csrfOf(page.body)], ['identity_document', 'passport']], { name: 'late.png', type: 'image/png', bytes: pngFile }),
    ]) {
      expect(response.statusCode).toBe(404);
      expect(response.body).toContain(linkNotValid);
    }
    expect(await documentsOf(t, alice, user.id)).toHaveLength(1);
  });

  it('answers an unknown, used or expired link with one identical 404 page', async () => {
    const used = await hostedEndUser(t, alice);
    expect((await upload(t, used)).statusCode).toBe(303);
    const csrf = csrfOf((await t.app.inject({ url: used.path })).body);
    expect((await postForm(t, `${used.path}/outcome`, { _csrf: csrf, outcome: 'rejected' })).statusCode).toBe(200);
    const expiring = await hostedEndUser(t, alice);
    t.clock.advance(onboardingLinkTtlMs - 1000);
    expect((await t.app.inject({ url: expiring.path })).statusCode).toBe(200);
    t.clock.advance(1000);

    const unknown = await t.app.inject({ url: `/onboarding/${randomBytes(32).toString('base64url')}` });
    const usedPage = await t.app.inject({ url: used.path });
    const expired = await t.app.inject({ url: expiring.path });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.body).toContain(linkNotValid);
    for (const response of [usedPage, expired]) {
      expect(response.statusCode).toBe(404);
      expect(response.body).toBe(unknown.body);
    }
    expect((await postMultipart(t, `${expiring.path}/documents`, [['_csrf', csrf]], { name: 'a.png', type: 'image/png', bytes: pngFile })).statusCode).toBe(404);
  });

  it('answers a token longer than any link, and any other address here, like an unknown link', async () => {
    const unknown = await t.app.inject({ url: `/onboarding/${'a'.repeat(43)}` });
    for (const url of [`/onboarding/${'a'.repeat(101)}`, `/onboarding/${'a'.repeat(100)}`, '/onboarding/short', `/onboarding/${'a'.repeat(43)}/documents`, '/onboarding/a/b/c']) {
      const response = await t.app.inject({ url });
      expect(response.statusCode, url).toBe(404);
      expect(response.body, url).toBe(unknown.body);
    }
    const post = await postForm(t, `/onboarding/${'a'.repeat(101)}/outcome`, { outcome: 'verified' });
    expect(post.statusCode).toBe(404);
    expect(post.body).toBe(unknown.body);
  });

  it('opens the page for a customer\'s own token of 32 or more URL-safe characters and refuses a shorter one with 400', async () => {
    const short = await t.request({ method: 'POST', url: '/end-users', key: alice.key, csrf: true, body: individualBody({ verificationMethod: 'hosted_kyc', onboarding_url_token: 'a'.repeat(20) }) });
    expect(short.statusCode).toBe(400);
    expect(short.json().error.details.fields).toEqual([expect.objectContaining({ path: '/onboarding_url_token' })]);

    const own = `cust-${randomBytes(30).toString('base64url')}`.slice(0, 40);
    const created = await hostedEndUser(t, alice, { onboarding_url_token: own, firstName: 'Own', lastName: 'Token' });
    expect(created.token).toBe(own);
    const page = await t.app.inject({ url: `/onboarding/${own}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Own Token');
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
    expect(submitted.statusCode).toBe(200);
    expect(submitted.body).toContain('sent for review');
    expect(await statusOf(t, alice, user.id)).toBe('pending_verification');
    expect((await t.app.inject({ url: user.path })).statusCode).toBe(404);
  });
});
