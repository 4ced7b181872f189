import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { businessBody, createFiatAccount, createIndividual, individualBody } from '../helpers/fixtures.js';
import { expectOneAnswerOr409 } from '../helpers/idempotency.js';
import { deIban } from '../helpers/money.js';
import { RecordingProviders } from '../helpers/providers.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * Idempotency-Key on every create (docs/idempotency.md): a retry with the key replays the first create's answer and
 * creates nothing, concurrent duplicates make one resource, the answer is stored with the resource, and a reuse of
 * the key elsewhere shows the resource only to an API key that may read it.
 */

type CountedTable = 'fiat_accounts' | 'virtual_accounts' | 'payees' | 'end_users' | 'documents' | 'wallets' | 'wallet_addresses' | 'webhook_subscriptions';

interface Create {
  name: string;
  url: () => string;
  body: () => Record<string, unknown>;
  table: CountedTable;
  /** The provider call it makes, if any. */
  call?: string;
}

const pngBase64 = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(56, 0x41)]).toString('base64');

describe('Idempotency-Key on creates', () => {
  let t: TestApp;
  let recording: RecordingProviders;
  let alice: TestCustomer;
  let csrf: string;
  let masterId: string;
  let endUserId: string;
  let walletId: string;

  beforeAll(async () => {
    recording = new RecordingProviders();
    t = await createTestApp({ providers: recording.providers, env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    csrf = await t.csrfToken(alice.key);
    masterId = (await createFiatAccount(t, alice)).id;
    endUserId = (await createIndividual(t, alice)).id;
    const wallet = await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf, body: {} });
    walletId = wallet.json().data.local_id;
  });
  afterEach(() => {
    recording.before = async () => undefined;
  });
  afterAll(async () => t.close());

  const creates: Create[] = [
    { name: 'POST /fiat-accounts', url: () => '/fiat-accounts', body: () => ({ accountName: 'Retried', currency: 'EUR' }), table: 'fiat_accounts', call: 'openAccount' },
    {
      name: 'POST /virtual-accounts',
      url: () => '/virtual-accounts',
      body: () => ({ accountName: 'Collections', masterFiatAccountId: masterId, currency: 'EUR' }),
      table: 'virtual_accounts',
      call: 'openVirtualAccount',
    },
    {
      name: 'POST /payees',
      url: () => '/payees',
      body: () => ({ name: 'Erika Mustermann', address: { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' }, bankDetails: { iban: deIban } }),
      table: 'payees',
      call: 'registerPayee',
    },
    { name: 'POST /end-users', url: () => '/end-users', body: () => individualBody(), table: 'end_users', call: 'registerEndUser' },
    { name: 'POST /end-users/businesses', url: () => '/end-users/businesses', body: () => businessBody(), table: 'end_users', call: 'registerEndUser' },
    {
      name: 'POST /documents',
      url: () => '/documents',
      body: () => ({ endUserId, documentType: 'identity', fileName: 'passport.png', fileData: pngBase64, mimeType: 'image/png' }),
      table: 'documents',
    },
    { name: 'POST /wallets', url: () => '/wallets', body: () => ({ displayName: 'Treasury' }), table: 'wallets', call: 'createWallet' },
    { name: 'POST /wallets/{walletId}/addresses', url: () => `/wallets/${walletId}/addresses`, body: () => ({ asset: 'USDT', network: 'TRX' }), table: 'wallet_addresses', call: 'createAddress' },
    { name: 'POST /webhooks', url: () => '/webhooks', body: () => ({ url: 'https://hooks.example.com/receiver', eventTypes: ['payee.created'] }), table: 'webhook_subscriptions' },
  ];

  const post = (create: Create, key: string | undefined, apiKey = alice.key, token = csrf) =>
    t.request({ method: 'POST', url: create.url(), key: apiKey, csrf: token, body: create.body(), headers: key === undefined ? {} : { 'idempotency-key': key } });
  const rows = async (table: CountedTable) => Number((await t.storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('count')).where('customer_id', '=', alice.id).executeTakeFirstOrThrow()).count);
  const calls = (create: Create) => recording.calls.filter((call) => call === create.call).length;

  describe.each(creates)('$name', (create) => {
    it('makes one resource for a create retried with the same key, replaying the first answer byte for byte', async () => {
      const key = randomUUID();
      const before = await rows(create.table);
      const callsBefore = calls(create);
      const first = await post(create, key);
      expect(first.statusCode).toBe(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      for (let attempt = 0; attempt < 3; attempt += 1) {
        const retry = await post(create, attempt === 0 ? key.toUpperCase() : key);
        expect(retry.statusCode).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.headers['content-type']).toBe(first.headers['content-type']);
        expect(retry.body).toBe(first.body);
      }
      expect(await rows(create.table)).toBe(before + 1);
      if (create.call) expect(calls(create)).toBe(callsBefore + 1);
    });

    it('makes one resource of 8 concurrent creates with one key: the others get 409 or the replay', async () => {
      const key = randomUUID();
      const before = await rows(create.table);
      const responses = await Promise.all(Array.from({ length: 8 }, () => post(create, key)));
      expectOneAnswerOr409(responses);
      expect(await rows(create.table)).toBe(before + 1);
    });

    it('refuses a malformed key with 400 on the header, creating and reserving nothing', async () => {
      const before = await rows(create.table);
      const keysBefore = await t.storage.db.selectFrom('idempotency_keys').select('key').where('customer_id', '=', alice.id).execute();
      const response = await post(create, 'retry-1');
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'headers', path: '/idempotency-key' })]);
      expect(await rows(create.table)).toBe(before);
      expect(await t.storage.db.selectFrom('idempotency_keys').select('key').where('customer_id', '=', alice.id).execute()).toHaveLength(keysBefore.length);
    });
  });

  it('documents the header and the 409 on every create in the OpenAPI document', async () => {
    const doc = (await t.request({ url: '/openapi.json' })).json();
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ in: 'header', name: 'Idempotency-Key', required: false });
    for (const create of creates) {
      const operation = doc.paths[create.name.slice('POST '.length)].post;
      expect(operation.parameters, create.name).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
      expect(operation.responses['409'], create.name).toBeDefined();
    }
  });

  it('stores the answer with the resource: a create whose key was taken over meanwhile records nothing and undoes the provider’s object', async () => {
    const create = creates[0]!;
    const key = randomUUID();
    const before = await rows(create.table);
    const liveBefore = new Set(recording.live);
    // A later request took the key over (the first one's lease ran out) while the provider was being called.
    recording.before = async () => {
      await t.storage.db.updateTable('idempotency_keys').set({ attempt_id: 'a-later-attempt' }).where('customer_id', '=', alice.id).where('key', '=', key).execute();
    };
    const response = await post(create, key);
    expect(response.statusCode).toBe(409);
    expect(response.json().error.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(await rows(create.table)).toBe(before);
    // The account the bank opened for it was closed again at once.
    expect([...recording.live].filter((id) => !liveBefore.has(id))).toEqual([]);
    const stored = await t.storage.db.selectFrom('idempotency_keys').select(['status', 'response_body']).where('customer_id', '=', alice.id).where('key', '=', key).executeTakeFirstOrThrow();
    expect(stored).toEqual({ status: 'in_progress', response_body: null });
  });

  it('releases the key after a 5xx that created nothing: a retry with the same key creates, once', async () => {
    const create = creates[0]!;
    const key = randomUUID();
    const before = await rows(create.table);
    recording.before = async () => {
      throw new Error('the bank is down');
    };
    const failed = await post(create, key);
    expect(failed.statusCode).toBe(502);
    expect(failed.json().error.code).toBe('PROVIDER_UNAVAILABLE');
    recording.before = async () => undefined;
    const retried = await post(create, key);
    expect(retried.statusCode).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBeUndefined();
    expect((await post(create, key)).body).toBe(retried.body);
    expect(await rows(create.table)).toBe(before + 1);
  });

  it('stores a refusal of a create (404) and replays it', async () => {
    const key = randomUUID();
    const body = { accountName: 'Linked', currency: 'EUR', linkedBusinessId: randomUUID() };
    const send = () => t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf, body, headers: { 'idempotency-key': key } });
    const refused = await send();
    expect(refused.statusCode).toBe(404);
    const retry = await send();
    expect(retry.statusCode).toBe(404);
    expect(retry.body).toBe(refused.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });

  it('shows a create’s answer through another endpoint only to a key with the resource’s read scope', async () => {
    const key = randomUUID();
    const payee = creates.find((create) => create.table === 'payees')!;
    const first = await post(payee, key);
    expect(first.statusCode).toBe(201);
    const walletsOnly = await t.createKey(alice.id, { scopes: ['wallets:write'] });
    const refused = await t.request({ method: 'POST', url: '/wallets', key: walletsOnly.key, csrf: await t.csrfToken(walletsOnly.key), body: {}, headers: { 'idempotency-key': key } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'payees:read' } });
    expect(refused.headers['idempotent-replayed']).toBeUndefined();
    const reader = await t.createKey(alice.id, { scopes: ['wallets:write', 'payees:read'] });
    const replayed = await t.request({ method: 'POST', url: '/wallets', key: reader.key, csrf: await t.csrfToken(reader.key), body: {}, headers: { 'idempotency-key': key } });
    expect(replayed.statusCode).toBe(201);
    expect(replayed.body).toBe(first.body);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  describe('POST /webhooks: the answer holds the signing secret', () => {
    const webhook = () => creates.find((create) => create.table === 'webhook_subscriptions')!;

    it('replays the secret to a retry but stores it only encrypted', async () => {
      const key = randomUUID();
      const first = await post(webhook(), key);
      const secret = first.json().data.signing_secret as string;
      expect(secret).toMatch(/^whsec_/);
      const retry = await post(webhook(), key);
      expect(retry.body).toBe(first.body);
      const stored = await t.storage.db.selectFrom('idempotency_keys').select(['response_body', 'response_sealed']).where('customer_id', '=', alice.id).where('key', '=', key).executeTakeFirstOrThrow();
      expect(Number(stored.response_sealed)).toBe(1);
      expect(stored.response_body).not.toContain(secret);
      expect(stored.response_body).not.toContain(secret.slice('whsec_'.length));
      expect(stored.response_body).not.toContain(first.json().data.id);
    });

    it('gives the secret again through another endpoint only to a key that may manage webhooks (webhooks:read is not enough)', async () => {
      const key = randomUUID();
      const first = await post(webhook(), key);
      const reader = await t.createKey(alice.id, { scopes: ['wallets:write', 'webhooks:read'] });
      const refused = await t.request({ method: 'POST', url: '/wallets', key: reader.key, csrf: await t.csrfToken(reader.key), body: {}, headers: { 'idempotency-key': key } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
      expect(refused.body).not.toContain(first.json().data.signing_secret);
      const manager = await t.createKey(alice.id, { scopes: ['wallets:write', 'webhooks:write'] });
      const replayed = await t.request({ method: 'POST', url: '/wallets', key: manager.key, csrf: await t.csrfToken(manager.key), body: {}, headers: { 'idempotency-key': key } });
      expect(replayed.body).toBe(first.body);
    });
  });
});
