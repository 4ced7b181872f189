import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { businessBody, createBusiness, createFiatAccount, createIndividual, individualBody } from '../helpers/fixtures.js';
import { providerOperationLeaseMs, providerUndoAttemptsMax, providerUndoBackoffBaseMs, providerUndoBackoffMaxMs } from '../../src/config/limits.js';
import { ProviderRefusedError } from '../../src/providers/provisioning.js';
import { storedFilePaths } from '../helpers/files.js';
import { RecordingProviders } from '../helpers/providers.js';
import { createTestApp, testDialect, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * Nothing is left behind by a request that fails after validation (docs/providers.md, docs/documents.md): when
 * the row that records a provider object or a file cannot be written, the provider object is undone and the file
 * removed; when the process stops half-way, the reaper undoes what the provider created.
 */

const pdf = (size = 64) => {
  const bytes = Buffer.alloc(size, 0x20);
  bytes.write('%PDF-1.4');
  return bytes.toString('base64');
};

/** Makes every insert into `table` fail, as a broken disk or a constraint violation would, until undone. */
async function failInserts(t: TestApp, table: string): Promise<() => Promise<void>> {
  const name = `fail_${table}`;
  if (testDialect === 'sqlite') {
    await sql.raw(`create trigger ${name} before insert on ${table} begin select raise(abort, 'injected failure'); end`).execute(t.storage.db);
    return async () => void (await sql.raw(`drop trigger ${name}`).execute(t.storage.db));
  }
  await sql.raw(`create or replace function ${name}() returns trigger language plpgsql as $$ begin raise exception 'injected failure'; end $$`).execute(t.storage.db);
  await sql.raw(`create trigger ${name} before insert on ${table} for each row execute function ${name}()`).execute(t.storage.db);
  return async () => void (await sql.raw(`drop trigger ${name} on ${table}`).execute(t.storage.db));
}

describe('side effects of refused and failed requests', () => {
  let t: TestApp;
  let recording: RecordingProviders;
  let alice: TestCustomer;
  let restore: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    recording = new RecordingProviders();
    t = await createTestApp({ providers: recording.providers, env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
  });
  afterEach(async () => {
    await restore?.();
    restore = undefined;
    recording.before = async () => undefined;
  });
  afterAll(async () => t.close());

  const post = (url: string, body: unknown) => t.request({ method: 'POST', url, key: alice.key, csrf: true, body });
  const reaper = () => t.app.workers.find((worker) => worker.name === 'provider-operation-reaper')!;
  const operations = () => t.storage.db.selectFrom('provider_operations').selectAll().where('customer_id', '=', alice.id).execute();
  /** Provider objects that no row of ours records. */
  const orphans = async () => {
    const recorded = new Set<string>();
    for (const row of await t.storage.db.selectFrom('fiat_accounts').select('fr_account_id as id').execute()) recorded.add(row.id);
    for (const row of await t.storage.db.selectFrom('virtual_accounts').select('fr_virtual_account_id as id').execute()) recorded.add(row.id);
    for (const row of await t.storage.db.selectFrom('payees').select('fr_payee_id as id').execute()) recorded.add(row.id);
    for (const row of await t.storage.db.selectFrom('end_users').select('fr_end_user_id as id').execute()) recorded.add(row.id);
    return [...recording.live].filter((id) => !recorded.has(id));
  };

  describe('a row that cannot be written undoes what came before it', () => {
    it.each([
      ['a fiat account', 'fiat_accounts', () => post('/fiat-accounts', { accountName: 'x', currency: 'EUR' })],
      ['a payee', 'payees', () => post('/payees', { name: 'Eve', address: { line1: 'x', city: 'Berlin', country: 'DE' }, bankDetails: { iban: 'DE89370400440532013000' } })],
      ['an individual end user', 'end_users', () => post('/end-users', individualBody())],
      ['a business end user', 'end_users', () => post('/end-users/businesses', businessBody())],
    ])('%s: the provider object is undone, the operation recorded as undone, nothing stays', async (_label, table, send) => {
      restore = await failInserts(t, table);
      const response = await send();
      expect(response.statusCode).toBe(500);
      expect(await orphans()).toEqual([]);
      const last = (await operations()).at(-1);
      expect(last).toMatchObject({ status: 'undone', last_error: expect.stringContaining('injected failure') });
      expect(recording.calls.at(-1)).toBe(`undo ${last?.provider_object_id}`);
    });

    it('a virtual account: the provider object is undone', async () => {
      const master = await createFiatAccount(t, alice);
      restore = await failInserts(t, 'virtual_accounts');
      const response = await post('/virtual-accounts', { accountName: 'v', masterFiatAccountId: master.id, currency: 'EUR' });
      expect(response.statusCode).toBe(500);
      expect(await orphans()).toEqual([]);
    });

    it('an end user with reports: no report file stays on disk, no provider object stays', async () => {
      const filesBefore = await storedFilePaths(t);
      restore = await failInserts(t, 'documents');
      const response = await post('/end-users', individualBody({ kycReportBase64: pdf(), providerReportBase64: pdf() }));
      expect(response.statusCode).toBe(500);
      expect(await storedFilePaths(t)).toEqual(filesBefore);
      expect(await orphans()).toEqual([]);
      expect(await t.storage.db.selectFrom('end_users').select('id').where('customer_id', '=', alice.id).where('first_name', '=', 'Ada').execute()).toHaveLength(0);
    });

    it('a document upload: no file stays on disk and the quota is not charged', async () => {
      const user = await createIndividual(t, alice);
      const filesBefore = await storedFilePaths(t);
      const bytesBefore = (await t.storage.db.selectFrom('customers').select('stored_document_bytes').where('id', '=', alice.id).executeTakeFirstOrThrow()).stored_document_bytes;
      restore = await failInserts(t, 'documents');
      const response = await post('/documents', { endUserId: user.id, documentType: 'identity', fileName: 'p.pdf', fileData: pdf(), mimeType: 'application/pdf' });
      expect(response.statusCode).toBe(500);
      expect(await storedFilePaths(t)).toEqual(filesBefore);
      const bytesAfter = (await t.storage.db.selectFrom('customers').select('stored_document_bytes').where('id', '=', alice.id).executeTakeFirstOrThrow()).stored_document_bytes;
      expect(BigInt(bytesAfter)).toBe(BigInt(bytesBefore));
    });
  });

  describe('refused requests never reach the provider or the disk', () => {
    it.each([
      ['an end user with a bad report', () => post('/end-users', individualBody({ kycReportBase64: Buffer.from('not a pdf').toString('base64') }))],
      ['an end user with a bad date', () => post('/end-users', individualBody({ dob: '2023-02-30' }))],
      ['a payee with a bad IBAN', () => post('/payees', { name: 'Eve', address: { line1: 'x', city: 'Berlin', country: 'DE' }, bankDetails: { iban: 'DE00370400440532013000' } })],
      ['a fiat account linked to an unknown business', () => post('/fiat-accounts', { accountName: 'x', currency: 'EUR', linkedBusinessId: '00000000-0000-4000-8000-000000000000' })],
    ])('%s', async (_label, send) => {
      const calls = recording.calls.length;
      const files = await storedFilePaths(t);
      const operationsBefore = (await operations()).length;
      const response = await send();
      expect(response.statusCode).toBeGreaterThanOrEqual(400);
      expect(response.statusCode).toBeLessThan(500);
      expect(recording.calls.length).toBe(calls);
      expect(await storedFilePaths(t)).toEqual(files);
      expect((await operations()).length).toBe(operationsBefore);
    });
  });

  describe('a provider that fails', () => {
    it('answers 502 PROVIDER_UNAVAILABLE, writes no row, and the reaper undoes what the provider may have created', async () => {
      recording.before = async (call) => {
        if (call === 'registerPayee') {
          recording.before = async () => undefined; // the replay by the reaper goes through
          throw new Error('provider timed out after creating the payee');
        }
      };
      const before = await t.storage.db.selectFrom('payees').select('id').execute();
      const response = await post('/payees', { name: 'Eve', address: { line1: 'x', city: 'Berlin', country: 'DE' }, bankDetails: { iban: 'DE89370400440532013000' } });
      expect(response.statusCode).toBe(502);
      expect(response.json().error.code).toBe('PROVIDER_UNAVAILABLE');
      expect(await t.storage.db.selectFrom('payees').select('id').execute()).toEqual(before);
      const failed = (await operations()).at(-1)!;
      expect(failed).toMatchObject({ status: 'calling', kind: 'register_payee' });

      // Not at once: the first call may still be running at the provider.
      expect(await reaper().runOnce()).toBe(0);
      t.clock.advance(providerUndoBackoffBaseMs * 2);
      expect(await reaper().runOnce()).toBe(1);
      const undone = (await operations()).find((operation) => operation.id === failed.id)!;
      expect(undone.status).toBe('undone');
      // The replay carried the same idempotency key, so it found the object the first call may have made.
      expect(recording.calls.slice(-2)).toEqual(['registerPayee', `undo ${undone.provider_object_id}`]);
      expect(await orphans()).toEqual([]);
      expect(await reaper().runOnce()).toBe(0);
    });
  });

  it('answers 422 PROVIDER_REFUSED when the provider refuses for good: nothing to undo, nothing replayed', async () => {
    recording.before = async (call) => {
      if (call === 'openAccount') throw new ProviderRefusedError('account name not allowed');
    };
    const calls = recording.calls.length;
    const response = await post('/fiat-accounts', { accountName: 'refused', currency: 'EUR' });
    expect(response.statusCode).toBe(422);
    expect(response.json().error).toMatchObject({ code: 'PROVIDER_REFUSED', message: expect.stringContaining('account name not allowed') });
    expect((await operations()).at(-1)).toMatchObject({ status: 'undone', request: '{}' });
    t.clock.advance(providerUndoBackoffMaxMs * 2);
    recording.before = async () => undefined;
    await reaper().runOnce();
    expect(recording.calls.length).toBe(calls + 1);
  });

  it('retries a failing undo with growing pauses, and leaves it failed for an operator after the last attempt', async () => {
    const failingUndo = new RecordingProviders();
    failingUndo.providers.banking.closeAccount = async () => {
      throw new Error('provider down');
    };
    const f = await createTestApp({ providers: failingUndo.providers });
    try {
      const carol = await f.createCustomer('Carol');
      const restoreInsert = await failInserts(f, 'fiat_accounts');
      expect((await f.request({ method: 'POST', url: '/fiat-accounts', key: carol.key, csrf: true, body: { accountName: 'x', currency: 'EUR' } })).statusCode).toBe(500);
      await restoreInsert();
      const read = () => f.storage.db.selectFrom('provider_operations').selectAll().where('customer_id', '=', carol.id).executeTakeFirstOrThrow();
      const reaperOf = f.app.workers.find((worker) => worker.name === 'provider-operation-reaper')!;
      expect(await read()).toMatchObject({ status: 'undoing' });
      let previousPause = 0;
      for (let attempt = 1; attempt < providerUndoAttemptsMax; attempt += 1) {
        const due = new Date((await read()).lease_until!).getTime() - f.clock.now().getTime();
        expect(due).toBeGreaterThan(previousPause * 0.5);
        previousPause = due;
        expect(await reaperOf.runOnce()).toBe(0);
        f.clock.advance(due + 1);
        expect(await reaperOf.runOnce()).toBe(1);
        expect(Number((await read()).undo_attempts)).toBe(attempt);
      }
      f.clock.advance(providerUndoBackoffMaxMs * 2);
      expect(await reaperOf.runOnce()).toBe(1);
      expect(await read()).toMatchObject({ status: 'failed', last_error: 'provider down' });
    } finally {
      await f.close();
    }
  });

  describe('a process that stops half-way', () => {
    it('leaves an operation whose lease runs out; the reaper replays the call with its key and undoes the object', async () => {
      // What a crash between the provider call and the insert leaves: the operation, still `calling`.
      const opened = await recording.providers.banking.openAccount({ ownerBusinessId: alice.frOwnerBusinessId, accountName: 'crash', currency: 'EUR', ibanCountry: 'DE' }, '7d1f2c4e-0000-4000-8000-00000000c0de');
      const now = t.clock.now();
      await t.storage.db
        .insertInto('provider_operations')
        .values({
          id: '7d1f2c4e-0000-4000-8000-00000000c0de',
          customer_id: alice.id,
          kind: 'open_account',
          request: JSON.stringify({ ownerBusinessId: alice.frOwnerBusinessId, accountName: 'crash', currency: 'EUR', ibanCountry: 'DE' }),
          status: 'calling',
          provider_object_id: null,
          lease_until: new Date(now.getTime() + 60_000).toISOString(),
          last_error: null,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        })
        .execute();
      expect(await reaper().runOnce()).toBe(0); // still leased to the (dead) request
      t.clock.advance(61_000);
      expect(await reaper().runOnce()).toBe(1);
      const row = await t.storage.db.selectFrom('provider_operations').selectAll().where('id', '=', '7d1f2c4e-0000-4000-8000-00000000c0de').executeTakeFirstOrThrow();
      expect(row).toMatchObject({ status: 'undone', provider_object_id: opened.frAccountId });
      expect(recording.live.has(opened.frAccountId)).toBe(false);
    });

    it('a request whose operation the reaper took meanwhile records nothing: the reaper’s undo wins', async () => {
      recording.before = async (call, key) => {
        if (call !== 'openAccount') return;
        // As if the lease had run out while the provider was slow, and the reaper had claimed the operation.
        await t.storage.db.updateTable('provider_operations').set({ status: 'undoing' }).where('id', '=', key).execute();
      };
      const before = await t.storage.db.selectFrom('fiat_accounts').select('id').where('customer_id', '=', alice.id).execute();
      const response = await post('/fiat-accounts', { accountName: 'slow', currency: 'EUR' });
      expect(response.statusCode).toBe(502);
      expect(await t.storage.db.selectFrom('fiat_accounts').select('id').where('customer_id', '=', alice.id).execute()).toEqual(before);
      // The reaper that claimed it undoes the object once its own lease comes round.
      t.clock.advance(providerOperationLeaseMs + 1000);
      expect(await reaper().runOnce()).toBe(1);
      expect(await orphans()).toEqual([]);
    });
  });

  it('creates normally with a business end user to link, the operations ending done', async () => {
    const business = await createBusiness(t, alice);
    const response = await post('/fiat-accounts', { accountName: 'linked', currency: 'GBP', linkedBusinessId: business.id });
    expect(response.statusCode, response.body).toBe(201);
    const done = (await operations()).filter((operation) => operation.provider_object_id === response.json().data.fr_account_id);
    expect(done).toEqual([expect.objectContaining({ status: 'done', kind: 'open_account', lease_until: null })]);
    expect(await orphans()).toEqual([]);
  });
});
