import fs from 'node:fs';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../src/app.js';
import { documentBodyLimitBytes, documentSizeMaxBytes, documentSyncAttemptsMax, documentSyncLeaseMs } from '../../src/config/limits.js';
import { ApiKeyService } from '../../src/modules/api-keys/service.js';
import { CustomerService } from '../../src/modules/customers/service.js';
import { documentSyncRetryDelayMs } from '../../src/modules/documents/sync-worker.js';
import { SandboxKycProvider } from '../../src/providers/sandbox/kyc.js';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { CapturedLog } from '../helpers/captured-log.js';
import { TestClock } from '../helpers/clock.js';
import { removeStoredFile, storedFile, storedFilePaths } from '../helpers/files.js';
import { createIndividual } from '../helpers/fixtures.js';
import { durableStorage } from '../helpers/durable-storage.js';
import { createTestApp, testDialect, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const unknownId = '3f2b9a1e-7c4d-4e8f-9a0b-1c2d3e4f5a6b';

/** Files of each accepted type: their magic bytes followed by some content. */
const magic = {
  'application/pdf': Buffer.from('%PDF-1.7\n', 'latin1'),
  'image/jpeg': Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  'image/png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
} as const;
type MimeType = keyof typeof magic;

function fileOf(mimeType: MimeType, size = 64): Buffer {
  const bytes = Buffer.alloc(size, 0x41);
  magic[mimeType].copy(bytes);
  return bytes;
}

function uploadBody(endUserId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { endUserId, documentType: 'identity', fileName: 'passport.png', fileData: fileOf('image/png').toString('base64'), mimeType: 'image/png', ...overrides };
}

const documentRecordFields = [
  'id', 'end_user_id', 'document_type', 'file_name', 'mime_type', 'size_bytes', 'storage_path', 'fr_document_id', 'status',
  'fr_sync_status', 'sync_attempts', 'next_sync_at', 'last_sync_error', 'synced_at', 'created_at', 'updated_at', 'document_kind',
].sort();

function syncWorkerOf(app: { workers: PollingWorker[] }): PollingWorker {
  const worker = app.workers.find((candidate) => candidate.name === 'document-sync');
  if (!worker) throw new Error('no document-sync worker registered');
  return worker;
}

describe('documents', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let aliceUser: { id: string; [field: string]: unknown };
  let bobUser: { id: string; [field: string]: unknown };
  let worker: PollingWorker;

  beforeAll(async () => {
    t = await createTestApp();
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    aliceUser = await createIndividual(t, alice);
    bobUser = await createIndividual(t, bob);
    worker = syncWorkerOf(t.app);
  });
  afterAll(async () => t.close());
  afterEach(() => vi.restoreAllMocks());

  const upload = (customer: TestCustomer, body: unknown) => t.request({ method: 'POST', url: '/documents', key: customer.key, csrf: true, body });
  const uploaded = async (customer: TestCustomer, body: unknown) => {
    const response = await upload(customer, body);
    expect(response.statusCode, response.body).toBe(201);
    return response.json().data as { id: string; [field: string]: unknown };
  };
  const read = async (customer: TestCustomer, id: string) => {
    const response = await t.request({ url: `/documents/${id}`, key: customer.key });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().data;
  };
  /** Runs sync passes until one finds nothing due (the worker's loop does the same). */
  const drain = async () => {
    while ((await worker.runOnce()) > 0);
  };

  describe('POST /documents', () => {
    it('answers 201 with every field of the spec §2 upload result, typed as the spec says, and stores the file', async () => {
      const bytes = fileOf('image/png', 300);
      const response = await upload(alice, uploadBody(aliceUser.id, { fileData: bytes.toString('base64') }));
      expect(response.statusCode).toBe(201);
      const result = response.json().data;
      expect(Object.keys(result).sort()).toEqual(['fr_document_id', 'fr_sync_status', 'id', 'message', 'status', 'storage_path']);
      expect(result.id).toMatch(uuidPattern);
      expect(typeof result.storage_path).toBe('string');
      expect(result.fr_document_id).toMatch(/^doc_[0-9a-f]+$/);
      expect(result.status).toBe('uploaded');
      expect(result.fr_sync_status).toBe('pending');
      expect(typeof result.message).toBe('string');
      expect(result.message.length).toBeGreaterThan(0);
      // Stored first: the file is on disk under DATA_DIR before the answer, byte for byte.
      expect((await storedFile(t, result.storage_path)).equals(bytes)).toBe(true);
    });

    it.skipIf(testDialect !== 'postgres')('stamps a file kept in the database with the time of the application clock', async () => {
      t.clock.advance(60_000);
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileData: fileOf('image/png', 300).toString('base64') }));
      const file = await t.storage.db.selectFrom('document_files').select('created_at').where('storage_path', '=', result.storage_path as string).executeTakeFirstOrThrow();
      expect(file.created_at).toBe(t.clock.now().toISOString());
    });

    it('makes the document readable by id with its sync status', async () => {
      const result = await uploaded(alice, uploadBody(aliceUser.id, { documentType: 'proof_of_address', fileName: 'bill.pdf', mimeType: 'application/pdf', fileData: fileOf('application/pdf', 123).toString('base64') }));
      const document = await read(alice, result.id);
      expect(Object.keys(document).sort()).toEqual(documentRecordFields);
      expect(document).toMatchObject({
        id: result.id,
        end_user_id: aliceUser.id,
        document_type: 'proof_of_address',
        file_name: 'bill.pdf',
        mime_type: 'application/pdf',
        size_bytes: 123,
        storage_path: result.storage_path,
        fr_document_id: result.fr_document_id,
        status: 'uploaded',
        fr_sync_status: 'pending',
        sync_attempts: 0,
        last_sync_error: null,
        synced_at: null,
      });
      expect(document.next_sync_at).toMatch(timestampPattern);
      expect(document.created_at).toMatch(timestampPattern);
      expect(document.updated_at).toBe(document.created_at);
      for (const prefix of ['/v1', '/v2']) {
        const versioned = await t.request({ url: `${prefix}/documents/${result.id}`, key: alice.key });
        expect(versioned.json().data).toEqual(document);
      }
    });

    it.each(Object.keys(magic) as MimeType[])('accepts %s content declared as such', async (mimeType) => {
      const result = await uploaded(alice, uploadBody(aliceUser.id, { mimeType, fileData: fileOf(mimeType).toString('base64') }));
      expect((await read(alice, result.id)).mime_type).toBe(mimeType);
    });

    it.each(['IDENTITY_VERIFICATION', 'BUSINESS_REGISTRATION', 'identity', 'proof_of_address', 'other'])('accepts documentType %s', async (documentType) => {
      await uploaded(alice, uploadBody(aliceUser.id, { documentType }));
    });

    it('stores the kind of an identity document (documentKind, in any case) and presents it as document_kind, null when not sent', async () => {
      const cases: Array<[string, string | null | undefined, string | null]> = [
        ['identity', 'PASSPORT', 'passport'],
        ['IDENTITY_VERIFICATION', 'National_ID', 'national_id'],
        ['identity', 'driving_licence', 'driving_licence'],
        ['identity', 'residence_permit', 'residence_permit'],
        ['identity', undefined, null],
        ['identity', null, null],
        ['proof_of_address', undefined, null],
      ];
      const user = await createIndividual(t, alice);
      for (const [documentType, documentKind, presented] of cases) {
        const result = await uploaded(alice, uploadBody(user.id, { documentType, documentKind }));
        expect(Object.keys(result).sort()).toEqual(['fr_document_id', 'fr_sync_status', 'id', 'message', 'status', 'storage_path']);
        expect(await read(alice, result.id), `${documentType} ${documentKind}`).toMatchObject({ document_type: documentType, document_kind: presented });
      }
      const listed = (await t.request({ url: `/end-users/${user.id}/documents`, key: alice.key })).json().data;
      expect(listed.map((document: { document_kind: string | null }) => document.document_kind)).toEqual(cases.map(([, , presented]) => presented));
    });

    it('refuses an unknown documentKind, or one on a document that is not an identity document, with 400 and stores nothing', async () => {
      const before = await storedFilePaths(t, alice.id);
      const unknown = await upload(alice, uploadBody(aliceUser.id, { documentKind: 'library_card' }));
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error.details.fields).toEqual([
        { location: 'body', path: '/documentKind', reason: 'must be one of passport, national_id, driving_licence, residence_permit' },
      ]);
      for (const documentType of ['proof_of_address', 'BUSINESS_REGISTRATION', 'other']) {
        const response = await upload(alice, uploadBody(aliceUser.id, { documentType, documentKind: 'driving_licence' }));
        expect(response.statusCode, documentType).toBe(400);
        expect(response.json().error.details.fields).toEqual([{ location: 'body', path: '/documentKind', reason: expect.stringContaining('identity document') }]);
      }
      expect(await storedFilePaths(t, alice.id)).toEqual(before);
    });

    it.each([
      ['a fileName of 1 character', { fileName: 'a' }],
      ['a fileName of 255 characters', { fileName: 'a'.repeat(255) }],
      ['a file of one byte past the magic bytes', { fileData: fileOf('image/jpeg', 4).toString('base64'), mimeType: 'image/jpeg' }],
      ['an upper-case endUserId', {}],
    ])('accepts %s', async (label, overrides) => {
      const endUserId = label.startsWith('an upper-case') ? aliceUser.id.toUpperCase() : aliceUser.id;
      const result = await uploaded(alice, uploadBody(endUserId, overrides));
      expect((await read(alice, result.id)).end_user_id).toBe(aliceUser.id);
    });

    it.each([
      ['a fileName of 0 characters', { fileName: '' }, '/fileName'],
      ['a fileName of 256 characters', { fileName: 'a'.repeat(256) }, '/fileName'],
      ['a documentType outside the enum', { documentType: 'passport' }, '/documentType'],
      ['a report documentType (reports arrive with the end user)', { documentType: 'kyc_report' }, '/documentType'],
      ['a mimeType outside the enum', { mimeType: 'image/gif' }, '/mimeType'],
      ['a non-UUID endUserId', { endUserId: 'user-1' }, '/endUserId'],
      ['fileData that is not a string', { fileData: 42 }, '/fileData'],
      ['an empty fileData', { fileData: '' }, '/fileData'],
      ['fileData with characters outside base64', { fileData: 'not base64!' }, '/fileData'],
      ['fileData without its padding', { fileData: fileOf('image/png', 64).toString('base64').replace(/=+$/, '') }, '/fileData'],
      ['fileData as a data: URL', { fileData: `data:image/png;base64,${fileOf('image/png').toString('base64')}` }, '/fileData'],
      ['fileData in the URL-safe alphabet', { fileData: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0xfb, 0xff]).toString('base64url') + '==' }, '/fileData'],
      ['a PNG declared as application/pdf', { mimeType: 'application/pdf' }, '/fileData'],
      ['a PDF declared as image/jpeg', { fileData: fileOf('application/pdf').toString('base64'), mimeType: 'image/jpeg' }, '/fileData'],
      ['a JPEG declared as image/png', { fileData: fileOf('image/jpeg').toString('base64'), mimeType: 'image/png' }, '/fileData'],
      ['a text file declared as image/png', { fileData: Buffer.from('hello, world').toString('base64') }, '/fileData'],
      ['a PNG cut short inside its magic bytes', { fileData: magic['image/png'].subarray(0, 7).toString('base64') }, '/fileData'],
      ['endUserId missing', { endUserId: undefined }, '/endUserId'],
      ['documentType missing', { documentType: undefined }, '/documentType'],
      ['fileName missing', { fileName: undefined }, '/fileName'],
      ['fileData missing', { fileData: undefined }, '/fileData'],
      ['mimeType missing', { mimeType: undefined }, '/mimeType'],
      ['an unknown field', { storagePath: '/etc/passwd' }, '/storagePath'],
    ])('refuses %s with 400 naming the field', async (_label, overrides, fieldPath) => {
      const response = await upload(alice, uploadBody(aliceUser.id, overrides));
      expect(response.statusCode, response.body).toBe(400);
      const { error } = response.json();
      expect(error.code).toBe('VALIDATION_ERROR');
      expect(error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ location: 'body', path: fieldPath })]));
    });

    it('says what the content is when it does not match mimeType', async () => {
      const response = await upload(alice, uploadBody(aliceUser.id, { mimeType: 'application/pdf' }));
      expect(response.json().error.details.fields).toEqual([{ location: 'body', path: '/fileData', reason: 'content is image/png, not application/pdf' }]);
    });

    it(`accepts a file of exactly ${documentSizeMaxBytes} bytes and refuses one byte more with 400 on /fileData`, async () => {
      const atLimit = await uploaded(alice, uploadBody(aliceUser.id, { fileData: fileOf('image/png', documentSizeMaxBytes).toString('base64') }));
      expect((await read(alice, atLimit.id)).size_bytes).toBe(documentSizeMaxBytes);

      const overLimit = await upload(alice, uploadBody(aliceUser.id, { fileData: fileOf('image/png', documentSizeMaxBytes + 1).toString('base64') }));
      expect(overLimit.statusCode).toBe(400);
      expect(overLimit.json().error.details.fields).toEqual([
        { location: 'body', path: '/fileData', reason: `decodes to ${documentSizeMaxBytes + 1} bytes; the limit is ${documentSizeMaxBytes} bytes` },
      ]);
    });

    it('refuses base64 longer than the largest file with 400, and a body over the route limit with 413', async () => {
      const tooLong = 'A'.repeat(Math.ceil(documentSizeMaxBytes / 3) * 4 + 4);
      const schema = await upload(alice, uploadBody(aliceUser.id, { fileData: tooLong }));
      expect(schema.statusCode).toBe(400);
      expect(schema.json().error.details.fields[0]).toMatchObject({ location: 'body', path: '/fileData' });

      const huge = await upload(alice, uploadBody(aliceUser.id, { fileData: 'A'.repeat(documentBodyLimitBytes) }));
      expect(huge.statusCode).toBe(413);
      expect(huge.json().error.code).toBe('PAYLOAD_TOO_LARGE');
    });

    it('lists every failing field at once', async () => {
      const response = await upload(alice, { endUserId: 'x', documentType: 'passport', fileName: '', fileData: 'A', mimeType: 'text/plain', extra: 1 });
      const paths = response.json().error.details.fields.map((field: { path: string }) => field.path).sort();
      expect(paths).toEqual(['/documentType', '/endUserId', '/extra', '/fileName', '/mimeType']);
    });

    it('answers an end user of another customer exactly like an unknown one, and stores nothing', async () => {
      const countOf = async () => (await t.storage.db.selectFrom('documents').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n;
      const before = await countOf();
      const foreign = await upload(alice, uploadBody(bobUser.id));
      const unknown = await upload(alice, uploadBody(unknownId));
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
      expect(await countOf()).toBe(before);
    });

    it('needs the documents:write scope, and documents:read to read', async () => {
      const reader = await t.createKey(alice.id, { scopes: ['documents:read'] });
      const writer = await t.createKey(alice.id, { scopes: ['documents:write'] });
      const other = await t.createKey(alice.id, { scopes: ['end-users:read', 'end-users:write'] });
      const denied = await t.request({ method: 'POST', url: '/documents', key: reader.key, csrf: true, body: uploadBody(aliceUser.id) });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().error.code).toBe('INSUFFICIENT_SCOPE');
      const created = await t.request({ method: 'POST', url: '/documents', key: writer.key, csrf: true, body: uploadBody(aliceUser.id) });
      expect(created.statusCode).toBe(201);
      const id = created.json().data.id;
      expect((await t.request({ url: `/documents/${id}`, key: reader.key })).statusCode).toBe(200);
      expect((await t.request({ url: `/documents/${id}`, key: other.key })).statusCode).toBe(403);
      expect((await t.request({ url: `/end-users/${aliceUser.id}/documents`, key: other.key })).statusCode).toBe(403);
    });

    it('refuses an upload without a key or without a CSRF token', async () => {
      expect((await t.request({ method: 'POST', url: '/documents', body: uploadBody(aliceUser.id) })).statusCode).toBe(401);
      expect((await t.request({ method: 'POST', url: '/documents', key: alice.key, body: uploadBody(aliceUser.id) })).statusCode).toBe(403);
    });
  });

  describe('uploads: encodings, names, reports', () => {
    it.each([
      ['LF every 76 characters (MIME, Python encodebytes)', '\n', 76],
      ['CRLF every 64 characters (PEM)', '\r\n', 64],
      ['LF every 60 characters (Ruby encode64)', '\n', 60],
    ])('accepts base64 broken into lines: %s', async (_label, lineBreak, width) => {
      const bytes = fileOf('image/png', 500);
      const wrapped = `${bytes.toString('base64').match(new RegExp(`.{1,${width}}`, 'g'))!.join(lineBreak)}${lineBreak}`;
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileData: wrapped }));
      expect((await storedFile(t, String(result.storage_path))).equals(bytes)).toBe(true);
    });

    it('accepts a file of the maximum size in MIME lines (CRLF every 76 characters), whose escaped body is the largest', async () => {
      const bytes = fileOf('application/pdf', documentSizeMaxBytes);
      const wrapped = bytes.toString('base64').match(/.{1,76}/g)!.join('\r\n');
      const result = await uploaded(alice, uploadBody(aliceUser.id, { mimeType: 'application/pdf', fileName: 'max.pdf', fileData: wrapped }));
      expect((await storedFile(t, String(result.storage_path))).equals(bytes)).toBe(true);
    });

    it('keeps only the last segment of a file name sent with a path', async () => {
      for (const [fileName, kept] of [['C:\\Users\\ada\\passport.png', 'passport.png'], ['../../etc/passwd.png', 'passwd.png'], ['scans/id card.png', 'id card.png']]) {
        const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName }));
        expect((await read(alice, result.id)).file_name).toBe(kept);
      }
    });

    it.each(['..', '.', 'folder/', 'a\\'])('refuses the file name %j: nothing is left once the directory part goes', async (fileName) => {
      const response = await upload(alice, uploadBody(aliceUser.id, { fileName }));
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields.map((field: { path: string }) => field.path)).toEqual(['/fileName']);
    });

    it('checks end-user reports like uploads: content type, size and name; nothing is created for a bad one', async () => {
      const before = await t.storage.db.selectFrom('end_users').select('id').where('customer_id', '=', alice.id).execute();
      const post = (body: Record<string, unknown>) =>
        t.request({ method: 'POST', url: '/end-users', key: alice.key, csrf: true, body: { firstName: 'Rep', lastName: 'Ort', email: 'r@example.com', dob: '1990-01-01', address: { line1: 'x', city: 'Berlin', postalCode: '1', country: 'DE' }, ...body } });
      const notAFile = await post({ kycReportBase64: Buffer.from('just text').toString('base64') });
      expect(notAFile.statusCode).toBe(400);
      expect(notAFile.json().error.details.fields).toEqual([{ location: 'body', path: '/kycReportBase64', reason: 'content is not a PDF, JPEG or PNG file' }]);
      const badName = await post({ providerReportBase64: fileOf('application/pdf').toString('base64'), providerReportFilename: '../' });
      expect(badName.statusCode).toBe(400);
      expect(badName.json().error.details.fields.map((field: { path: string }) => field.path)).toEqual(['/providerReportFilename']);
      expect(await t.storage.db.selectFrom('end_users').select('id').where('customer_id', '=', alice.id).execute()).toEqual(before);

      const accepted = await post({ kycReportBase64: fileOf('image/jpeg', 100).toString('base64'), providerReportBase64: fileOf('application/pdf').toString('base64'), providerReportFilename: '/tmp/provider.pdf' });
      expect(accepted.statusCode, accepted.body).toBe(201);
      const documents = (await t.request({ url: `/end-users/${accepted.json().data.id}/documents`, key: alice.key })).json().data;
      expect(documents.map((document: { document_type: string; file_name: string; mime_type: string }) => [document.document_type, document.file_name, document.mime_type]).sort()).toEqual([
        ['kyc_report', 'kyc-report.jpg', 'image/jpeg'],
        ['provider_report', 'provider.pdf', 'application/pdf'],
      ]);
    });

    it.skipIf(testDialect !== 'sqlite')('stores files on disk readable by the server’s user only (0600 in 0700 directories)', async () => {
      const result = await uploaded(alice, uploadBody(aliceUser.id));
      const file = path.join(t.config.dataDir, String(result.storage_path));
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
      expect(fs.statSync(path.join(t.config.dataDir, 'documents')).mode & 0o777).toBe(0o700);
    });
  });

  describe('per-customer storage quota', () => {
    it('refuses with 422 STORAGE_QUOTA_EXCEEDED past the quota, storing nothing; exactly up to it is fine', async () => {
      const q = await createTestApp({ env: { DOCUMENT_STORAGE_QUOTA_BYTES: '1000' } });
      try {
        const carol = await q.createCustomer('Carol Ltd');
        const user = await createIndividual(q, carol);
        const post = (size: number) => q.request({ method: 'POST', url: '/documents', key: carol.key, csrf: true, body: uploadBody(user.id, { fileData: fileOf('image/png', size).toString('base64') }) });
        expect((await post(600)).statusCode).toBe(201);
        const over = await post(401);
        expect(over.statusCode).toBe(422);
        expect(over.json().error).toEqual({
          code: 'STORAGE_QUOTA_EXCEEDED',
          message: expect.any(String),
          details: { quota_bytes: 1000, stored_bytes: 600, upload_bytes: 401 },
        });
        expect(await storedFilePaths(q, carol.id)).toHaveLength(1);
        expect((await post(400)).statusCode).toBe(201);
        // Reports count against the same quota, and a refused end user is not created.
        const reports = await q.request({ method: 'POST', url: '/end-users', key: carol.key, csrf: true, body: { firstName: 'A', lastName: 'B', email: 'a@example.com', dob: '1990-01-01', address: { line1: 'x', city: 'y', postalCode: '1', country: 'DE' }, kycReportBase64: fileOf('application/pdf', 10).toString('base64') } });
        expect(reports.statusCode).toBe(422);
        expect((await q.request({ url: '/end-users', key: carol.key })).json().data).toHaveLength(1);
      } finally {
        await q.close();
      }
    });

    it('holds under concurrent uploads: of ten uploads of 300 bytes against 1000, three are stored', async () => {
      const q = await createTestApp({ env: { DOCUMENT_STORAGE_QUOTA_BYTES: '1000', UPLOAD_CONCURRENCY: '10' } });
      try {
        const dave = await q.createCustomer('Dave Ltd');
        const user = await createIndividual(q, dave);
        const csrf = await q.csrfToken(dave.key);
        const responses = await Promise.all(
          Array.from({ length: 10 }, () => q.request({ method: 'POST', url: '/documents', key: dave.key, csrf, body: uploadBody(user.id, { fileData: fileOf('image/png', 300).toString('base64') }) })),
        );
        expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 201, 201, 422, 422, 422, 422, 422, 422, 422]);
        expect(await storedFilePaths(q, dave.id)).toHaveLength(3);
        const stored = await q.storage.db.selectFrom('customers').select('stored_document_bytes').where('id', '=', dave.id).executeTakeFirstOrThrow();
        expect(BigInt(stored.stored_document_bytes)).toBe(900n);
      } finally {
        await q.close();
      }
    });
  });

  describe('memory: large bodies are read a few at a time', () => {
    // What the upload gate logs (debug): the events these tests wait for.
    const permitted = 'upload permitted: its body is read';
    const waitsForPermit = 'upload waits for a permit, its body unread';

    it('holds a second upload unread while UPLOAD_CONCURRENCY=1 is taken, and lets it through when the first ends', async () => {
      const log = new CapturedLog();
      const q = await createTestApp({ env: { UPLOAD_CONCURRENCY: '1', LOG_LEVEL: 'debug' }, logStream: log.stream });
      try {
        const erin = await q.createCustomer('Erin Ltd');
        const user = await createIndividual(q, erin);
        const csrf = await q.csrfToken(erin.key);
        const headers = { 'x-api-key': erin.key, 'x-csrf-token': csrf, 'content-type': 'application/json' };
        // Larger than the default body limit: smaller bodies on these routes are not gated.
        const body = JSON.stringify(uploadBody(user.id, { fileData: fileOf('image/png', 70_000).toString('base64') }));
        // The first body arrives slowly: half now, the rest when the test says.
        const slow = new PassThrough();
        slow.write(body.slice(0, 20));
        const first = q.app.inject({ method: 'POST', url: '/documents', headers: { ...headers, 'content-length': String(body.length) }, payload: slow });
        await log.waitFor(permitted);
        let secondDone = false;
        const second = q.app.inject({ method: 'POST', url: '/documents', headers, payload: body }).then((response) => {
          secondDone = true;
          return response;
        });
        await log.waitFor(waitsForPermit);
        expect(secondDone).toBe(false);
        expect(log.lines.filter((line) => line.msg === permitted)).toHaveLength(1);
        slow.end(body.slice(20));
        expect((await first).statusCode).toBe(201);
        expect((await second).statusCode).toBe(201);
        expect(log.lines.filter((line) => line.msg === permitted)).toHaveLength(2);
      } finally {
        await q.close();
      }
    });

    it('gives the permit back when a client goes away while its upload waits, or before it is read', async () => {
      const log = new CapturedLog();
      const q = await createTestApp({ env: { UPLOAD_CONCURRENCY: '1', LOG_LEVEL: 'debug' }, logStream: log.stream });
      try {
        const frank = await q.createCustomer('Frank Ltd');
        const user = await createIndividual(q, frank);
        const csrf = await q.csrfToken(frank.key);
        const headers = { 'x-api-key': frank.key, 'x-csrf-token': csrf, 'content-type': 'application/json' };
        const body = JSON.stringify(uploadBody(user.id, { fileData: fileOf('image/png', 70_000).toString('base64') }));
        // Holds the permit with a body that stops half-way, then goes away.
        const stalled = new PassThrough();
        stalled.write(body.slice(0, 20));
        const holder = q.app.inject({ method: 'POST', url: '/documents', headers: { ...headers, 'content-length': String(body.length) }, payload: stalled });
        await log.waitFor(permitted);
        stalled.destroy(new Error('client went away'));
        await holder.catch(() => undefined);
        // Were the permit kept, these would wait for ever (the test would time out).
        for (let attempt = 0; attempt < 3; attempt += 1) {
          expect((await q.app.inject({ method: 'POST', url: '/documents', headers, payload: body })).statusCode).toBe(201);
        }
      } finally {
        await q.close();
      }
    });
  });

  describe('GET /documents/{id} and GET /end-users/{endUserId}/documents', () => {
    it('answers another customer’s document id exactly like an unknown id', async () => {
      const alices = await uploaded(alice, uploadBody(aliceUser.id));
      const foreign = await t.request({ url: `/documents/${alices.id}`, key: bob.key });
      const unknown = await t.request({ url: `/documents/${unknownId}`, key: bob.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
    });

    it('refuses a malformed document id with 400', async () => {
      const response = await t.request({ url: '/documents/not-a-uuid', key: alice.key });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields[0]).toMatchObject({ location: 'params', path: '/id' });
    });

    it('lists the documents of one end user, oldest first, reports included', async () => {
      const report = fileOf('application/pdf', 50).toString('base64');
      const user = await createIndividual(t, alice, { kycReportBase64: report, kycReportFilename: 'kyc.pdf' });
      t.clock.advance(1);
      const first = await uploaded(alice, uploadBody(user.id, { fileName: 'first.png' }));
      t.clock.advance(1);
      const second = await uploaded(alice, uploadBody(user.id, { fileName: 'second.png' }));
      const response = await t.request({ url: `/end-users/${user.id}/documents`, key: alice.key });
      expect(response.statusCode).toBe(200);
      const documents = response.json().data;
      expect(documents.map((document: { file_name: string }) => document.file_name)).toEqual(['kyc.pdf', 'first.png', 'second.png']);
      expect(documents[0]).toMatchObject({ document_type: 'kyc_report', mime_type: 'application/pdf', fr_sync_status: 'pending' });
      expect(documents.slice(1).map((document: { id: string }) => document.id)).toEqual([first.id, second.id]);
      for (const document of documents) expect(Object.keys(document).sort()).toEqual(documentRecordFields);
    });

    it('answers another customer’s end user exactly like an unknown one', async () => {
      const foreign = await t.request({ url: `/end-users/${aliceUser.id}/documents`, key: bob.key });
      const unknown = await t.request({ url: `/end-users/${unknownId}/documents`, key: bob.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect((await t.request({ url: `/end-users/${bobUser.id}/documents`, key: bob.key })).json().data).toEqual([]);
    });
  });

  describe('provider sync', () => {
    it('sends a pending document to the provider once and records it synced', async () => {
      await drain();
      const spy = vi.spyOn(SandboxKycProvider.prototype, 'uploadDocument');
      const bytes = fileOf('image/jpeg', 200);
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName: 'id.jpg', mimeType: 'image/jpeg', fileData: bytes.toString('base64'), documentKind: 'national_id' }));
      expect(await worker.runOnce()).toBe(1);
      expect(spy).toHaveBeenCalledTimes(1);
      const sent = spy.mock.calls[0]![0];
      expect(sent).toMatchObject({ frDocumentId: result.fr_document_id, frEndUserId: aliceUser.fr_end_user_id, documentType: 'identity', documentKind: 'national_id', fileName: 'id.jpg', mimeType: 'image/jpeg', attempt: 1 });
      expect(sent.bytes.equals(bytes)).toBe(true);

      const document = await read(alice, result.id);
      expect(document).toMatchObject({ status: 'uploaded', fr_sync_status: 'synced', sync_attempts: 1, last_sync_error: null, next_sync_at: null });
      expect(document.synced_at).toBe(t.clock.now().toISOString());
      expect(await worker.runOnce()).toBe(0);
      expect(spy).toHaveBeenCalledTimes(1);
    });

    it('syncs the report documents created with an end user too', async () => {
      await drain();
      const user = await createIndividual(t, alice, { kycReportBase64: fileOf('application/pdf').toString('base64'), kycReportFilename: 'report.pdf' });
      await drain();
      const [report] = (await t.request({ url: `/end-users/${user.id}/documents`, key: alice.key })).json().data;
      expect(report).toMatchObject({ document_type: 'kyc_report', fr_sync_status: 'synced', sync_attempts: 1 });
    });

    it('retries a failing attempt after an exponential backoff, keeping the reason, until it succeeds', async () => {
      await drain();
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName: 'sync-flaky.png' }));
      expect(await worker.runOnce()).toBe(1);
      let document = await read(alice, result.id);
      expect(document).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 1 });
      expect(document.last_sync_error).toMatch(/attempt 1/);
      expect(document.next_sync_at).toBe(new Date(t.clock.now().getTime() + documentSyncRetryDelayMs(1)).toISOString());

      // Not due yet: nothing happens until the backoff has passed.
      t.clock.advance(documentSyncRetryDelayMs(1) - 1);
      expect(await worker.runOnce()).toBe(0);
      expect((await read(alice, result.id)).sync_attempts).toBe(1);
      t.clock.advance(1);
      expect(await worker.runOnce()).toBe(1);
      document = await read(alice, result.id);
      expect(document).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 2 });
      expect(document.last_sync_error).toMatch(/attempt 2/);
      expect(document.next_sync_at).toBe(new Date(t.clock.now().getTime() + documentSyncRetryDelayMs(2)).toISOString());

      t.clock.advance(documentSyncRetryDelayMs(2));
      expect(await worker.runOnce()).toBe(1);
      document = await read(alice, result.id);
      expect(document).toMatchObject({ fr_sync_status: 'synced', sync_attempts: 3, last_sync_error: null, next_sync_at: null, synced_at: t.clock.now().toISOString() });
    });

    it(`marks a document failed after ${documentSyncAttemptsMax} failed attempts, keeping the reason, and stops`, async () => {
      await drain();
      const spy = vi.spyOn(SandboxKycProvider.prototype, 'uploadDocument');
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName: 'sync-fail.png' }));
      const delays: number[] = [];
      for (let attempt = 1; attempt <= documentSyncAttemptsMax; attempt += 1) {
        expect(await worker.runOnce()).toBe(1);
        const document = await read(alice, result.id);
        expect(document.sync_attempts).toBe(attempt);
        if (attempt < documentSyncAttemptsMax) {
          expect(document.fr_sync_status).toBe('pending');
          const delay = new Date(document.next_sync_at).getTime() - t.clock.now().getTime();
          delays.push(delay);
          t.clock.advance(delay);
        }
      }
      expect(delays).toEqual([1000, 2000, 4000, 8000, 16000]);
      const document = await read(alice, result.id);
      expect(document).toMatchObject({ fr_sync_status: 'failed', sync_attempts: documentSyncAttemptsMax, next_sync_at: null, synced_at: null });
      expect(document.last_sync_error).toMatch(/sync-fail/);
      expect(spy.mock.calls.map(([call]) => call.attempt)).toEqual([1, 2, 3, 4, 5, 6]);

      t.clock.advance(24 * 60 * 60 * 1000);
      expect(await worker.runOnce()).toBe(0);
      expect(spy).toHaveBeenCalledTimes(documentSyncAttemptsMax);
    });

    it('caps the backoff', () => {
      expect(documentSyncRetryDelayMs(1)).toBe(1000);
      expect(documentSyncRetryDelayMs(5)).toBe(16000);
      expect(documentSyncRetryDelayMs(30)).toBe(5 * 60 * 1000);
    });

    it('claims each document before calling the provider, so concurrent passes send it once', async () => {
      await drain();
      const spy = vi.spyOn(SandboxKycProvider.prototype, 'uploadDocument');
      const ids = [];
      for (let index = 0; index < 3; index += 1) ids.push((await uploaded(alice, uploadBody(aliceUser.id, { fileName: `batch-${index}.png` }))).id);
      const counts = await Promise.all([worker.runOnce(), worker.runOnce(), worker.runOnce()]);
      expect(counts.reduce((sum, count) => sum + count, 0)).toBe(3);
      expect(spy).toHaveBeenCalledTimes(3);
      for (const id of ids) expect(await read(alice, id)).toMatchObject({ fr_sync_status: 'synced', sync_attempts: 1 });
    });

    it('retries an attempt that a stopped process left unfinished once its lease runs out', async () => {
      await drain();
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName: 'interrupted.png' }));
      // What a process that claimed attempt 1 and died before recording its outcome leaves behind.
      const leaseEnd = new Date(t.clock.now().getTime() + documentSyncLeaseMs).toISOString();
      await t.storage.db.updateTable('documents').set({ sync_attempts: 1, next_sync_at: leaseEnd }).where('id', '=', result.id).execute();
      expect(await worker.runOnce()).toBe(0);
      t.clock.advance(documentSyncLeaseMs);
      expect(await worker.runOnce()).toBe(1);
      expect(await read(alice, result.id)).toMatchObject({ fr_sync_status: 'synced', sync_attempts: 2 });
    });

    it('marks failed a document whose last attempt was left unfinished, without calling the provider again', async () => {
      await drain();
      const spy = vi.spyOn(SandboxKycProvider.prototype, 'uploadDocument');
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName: 'last-try.png' }));
      await t.storage.db.updateTable('documents').set({ sync_attempts: documentSyncAttemptsMax, last_sync_error: 'provider timeout' }).where('id', '=', result.id).execute();
      expect(await worker.runOnce()).toBe(1);
      expect(spy).not.toHaveBeenCalled();
      expect(await read(alice, result.id)).toMatchObject({ fr_sync_status: 'failed', sync_attempts: documentSyncAttemptsMax, last_sync_error: 'provider timeout' });
    });

    it('counts a stored file that cannot be read as a failed attempt, with a reason that names no path', async () => {
      await drain();
      const result = await uploaded(alice, uploadBody(aliceUser.id, { fileName: 'vanished.png' }));
      await removeStoredFile(t, String(result.storage_path));
      expect(await worker.runOnce()).toBe(1);
      const document = await read(alice, result.id);
      expect(document).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 1, last_sync_error: 'the stored file could not be read' });
    });
  });
});

describe('document sync across a restart', () => {
  it('resumes a pending document from the database after the process restarts, and syncs it', async () => {
    const durable = await durableStorage();
    const clock = new TestClock();
    try {
      let storage = await durable.open();
      let app = await buildApp(durable.config, { storage, clock });
      const customer = await new CustomerService(storage, clock).create('Restart Ltd');
      const { key } = await new ApiKeyService(storage, clock, durable.config.apiEnvironment, app.caches).create({ customerId: customer.id });
      const post = async (url: string, body: unknown) => {
        const csrf = (await app.inject({ url: '/csrf-token', headers: { 'x-api-key': key } })).json().data.csrf_token;
        return app.inject({ method: 'POST', url, headers: { 'x-api-key': key, 'x-csrf-token': csrf }, payload: body as object });
      };
      const endUser = (await post('/end-users', { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', dob: '1990-12-10', address: { line1: '1 Main Street', city: 'Berlin', postalCode: '10115', country: 'DE' } })).json().data;
      const created = await post('/documents', uploadBody(endUser.id, { fileName: 'sync-flaky.png' }));
      expect(created.statusCode, created.body).toBe(201);
      const documentId = created.json().data.id;
      expect(await syncWorkerOf(app).runOnce()).toBe(1);
      await app.close();

      // A new process: a new app on the same database and DATA_DIR, with nothing carried over in memory.
      storage = await durable.open();
      app = await buildApp(durable.config, { storage, clock });
      const readDocument = async () => (await app.inject({ url: `/documents/${documentId}`, headers: { 'x-api-key': key } })).json().data;
      expect(await readDocument()).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 1 });
      clock.advance(documentSyncRetryDelayMs(1));
      expect(await syncWorkerOf(app).runOnce()).toBe(1);
      expect(await readDocument()).toMatchObject({ fr_sync_status: 'pending', sync_attempts: 2 });
      clock.advance(documentSyncRetryDelayMs(2));
      expect(await syncWorkerOf(app).runOnce()).toBe(1);
      expect(await readDocument()).toMatchObject({ fr_sync_status: 'synced', sync_attempts: 3, last_sync_error: null });
      await app.close();
    } finally {
      await durable.drop();
    }
  });
});
