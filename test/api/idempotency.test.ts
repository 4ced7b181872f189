import { randomUUID } from 'node:crypto';
import { v7 as uuidV7 } from 'uuid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotencyRetentionHoursDefault } from '../../src/config/limits.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import { DepositService } from '../../src/modules/deposits/service.js';
import { SandboxDeposits } from '../../src/providers/sandbox/deposits.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { expectOneAnswerOr409 } from '../helpers/idempotency.js';
import { createVirtualAccount, fiatBalance, moneySnapshot } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * Idempotency-Key (docs/spec.md §4 rule 8, docs/idempotency.md) on the sandbox deposit endpoint, and reused across the
 * money-moving endpoints, on the dialect of this project (creates: idempotent-creates.test.ts).
 */
describe('Idempotency-Key', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let account: { id: string };
  let other: { id: string };
  let csrf: string;

  beforeAll(async () => {
    t = await createTestApp({ env: { IDEMPOTENCY_LEASE_SECONDS: '30' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    account = await createFiatAccount(t, alice);
    other = await createFiatAccount(t, alice);
    csrf = await t.csrfToken(alice.key);
  });
  afterAll(async () => t.close());

  const depositWith = (key: string | undefined, accountId = account.id, body: unknown = { amount: 10, reference: 'idempotent' }, customer = alice, token = csrf, apiKey = customer.key) =>
    t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${accountId}/deposits`, key: apiKey, csrf: token, body, headers: key === undefined ? {} : { 'idempotency-key': key } });
  const deposits = async (accountId = account.id) =>
    (await t.storage.db.selectFrom('transactions').select('id').where('account_id', '=', accountId).where('transaction_type', '=', 'deposit').execute()).length;

  const storedKeys = async () => (await t.storage.db.selectFrom('idempotency_keys').select('key').where('customer_id', '=', alice.id).execute()).length;

  it.each([
    ['not a UUID', 'retry-1'],
    ['a UUID with a wrong variant', '3b241101-e2bb-4255-0caf-4136c566a962'],
    ['a UUID of no RFC 9562 version (0)', '3b241101-e2bb-0255-8caf-4136c566a962'],
    ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ['a UUID in braces', '{3b241101-e2bb-4255-8caf-4136c566a962}'],
    ['a UUID URN', 'urn:uuid:3b241101-e2bb-4255-8caf-4136c566a962'],
    ['empty', ''],
  ])('refuses a key that is %s with 400 on the header, moving nothing and storing nothing', async (_label, key) => {
    const before = await moneySnapshot(t, alice.id);
    const keysBefore = await storedKeys();
    const response = await depositWith(key);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_ERROR');
    expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'headers', path: '/idempotency-key' })]);
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
    expect(await storedKeys()).toBe(keysBefore);
  });

  it.each([
    ['a v7 UUID', uuidV7()],
    ['a v7 UUID in upper case', uuidV7().toUpperCase()],
    ['a v1 UUID', 'c232ab00-9414-11ec-b3c8-9f6bdeced846'],
    ['a v4 UUID in upper case', randomUUID().toUpperCase()],
  ])('accepts a key that is %s, and replays under it whatever its case', async (_label, key) => {
    const first = await depositWith(key);
    expect(first.statusCode).toBe(201);
    const retry = await depositWith(key.toLowerCase());
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.body).toBe(first.body);
  });

  it('moves the money once for 50 sequential retries, replaying the first answer byte for byte', async () => {
    const key = randomUUID();
    const before = await fiatBalance(t, alice, account.id);
    const first = await depositWith(key);
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const retry = await depositWith(key);
      expect(retry.statusCode).toBe(201);
      expect(retry.body).toBe(first.body);
      expect(retry.headers['idempotent-replayed']).toBe('true');
      expect(retry.headers['content-type']).toMatch(/^application\/json/);
    }
    expect(await fiatBalance(t, alice, account.id)).toBe(before + 10);
    expect(first.json().data).toMatchObject({ transaction_type: 'deposit', amount: 10, balance_before: before, balance_after: before + 10 });
  });

  it('treats the key case-insensitively: an upper-case retry is the same key', async () => {
    const key = randomUUID();
    const first = await depositWith(key);
    const retry = await depositWith(key.toUpperCase());
    expect(retry.body).toBe(first.body);
    expect(retry.headers['idempotent-replayed']).toBe('true');
  });

  it('runs 50 concurrent requests with one key once: the others get 409 with Retry-After, or the replay', async () => {
    const key = randomUUID();
    const before = await deposits();
    const responses = await Promise.all(Array.from({ length: 50 }, () => depositWith(key)));
    expectOneAnswerOr409(responses);
    expect(await deposits()).toBe(before + 1);
    // Once the first has finished, every retry is the replay.
    const after = await depositWith(key);
    expect(after.statusCode).toBe(201);
    expect(after.body).toBe(responses.find((response) => response.statusCode === 201)!.body);
  });

  it('stores a value the operation finds invalid (400) and replays it: a corrected retry with the same key moves nothing', async () => {
    const key = randomUUID();
    const before = await moneySnapshot(t, alice.id);
    const refused = await depositWith(key, account.id, { amount: 10.001 });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.details.fields[0].path).toBe('/amount');
    const corrected = await depositWith(key, account.id, { amount: 10 });
    expect(corrected.statusCode).toBe(400);
    expect(corrected.body).toBe(refused.body);
    expect(corrected.headers['idempotent-replayed']).toBe('true');
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
  });

  it('does not store a body the schema refuses: the corrected request with the same key runs, once', async () => {
    const key = randomUUID();
    const keysBefore = await storedKeys();
    const refused = await depositWith(key, account.id, { amount: 'ten' });
    expect(refused.statusCode).toBe(400);
    expect(await storedKeys()).toBe(keysBefore);
    const corrected = await depositWith(key, account.id, { amount: 10 });
    expect(corrected.statusCode).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    const replayed = await depositWith(key, account.id, { amount: 10 });
    expect(replayed.body).toBe(corrected.body);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
  });

  describe('a key reused on another endpoint replays only what the caller may read', () => {
    const evmDestination = '0x52908400098527886e0f7030069857d2e4169ee7';
    const transferWith = async (apiKey: string, walletId: string, key: string) =>
      t.request({
        method: 'POST',
        url: `/wallets/${walletId}/transfers`,
        key: apiKey,
        csrf: await t.csrfToken(apiKey),
        body: { asset: 'USDC', network: 'ETH', amount: '1', destination: evmDestination },
        headers: { 'idempotency-key': key },
      });
    let walletId: string;
    beforeAll(async () => {
      walletId = (await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf, body: {} })).json().data.local_id;
    });
    const outgoingTransfers = async () => (await t.storage.db.selectFrom('wallet_transfers').select('id').where('wallet_id', '=', walletId).execute()).length;

    it('refuses a wallets:write-only key reusing a fiat deposit’s key with 403 INSUFFICIENT_SCOPE; a key with fiat-accounts:read gets the replay', async () => {
      const key = randomUUID();
      const depositAnswer = await depositWith(key);
      expect(depositAnswer.statusCode).toBe(201);
      const walletsOnly = await t.createKey(alice.id, { scopes: ['wallets:write'] });
      const refused = await transferWith(walletsOnly.key, walletId, key);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'fiat-accounts:read' } });
      expect(refused.headers['idempotent-replayed']).toBeUndefined();
      expect(refused.body).not.toContain(account.id);
      const reader = await t.createKey(alice.id, { scopes: ['wallets:write', 'fiat-accounts:read'] });
      const replayed = await transferWith(reader.key, walletId, key);
      expect(replayed.statusCode).toBe(201);
      expect(replayed.body).toBe(depositAnswer.body);
      expect(replayed.headers['idempotent-replayed']).toBe('true');
      expect(await outgoingTransfers()).toBe(0);
    });

    it('asks virtual-accounts:read (fiat-accounts:read is not enough) for a virtual account deposit’s answer', async () => {
      const virtual = await createVirtualAccount(t, alice, account.id);
      const key = randomUUID();
      const depositAnswer = await depositWith(key, virtual.id);
      expect(depositAnswer.statusCode).toBe(201);
      const fiatReader = await t.createKey(alice.id, { scopes: ['wallets:write', 'fiat-accounts:read'] });
      const refused = await transferWith(fiatReader.key, walletId, key);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'virtual-accounts:read' } });
      const virtualReader = await t.createKey(alice.id, { scopes: ['wallets:write', 'virtual-accounts:read'] });
      const replayed = await transferWith(virtualReader.key, walletId, key);
      expect(replayed.statusCode).toBe(201);
      expect(replayed.body).toBe(depositAnswer.body);
      expect(await outgoingTransfers()).toBe(0);
    });

    it('asks wallets:read for a wallet transfer’s answer reused on a deposit', async () => {
      await t.request({ method: 'POST', url: `/sandbox/wallets/${walletId}/deposits`, key: alice.key, csrf, body: { asset: 'USDC', network: 'ETH', amount: '5' } });
      const key = randomUUID();
      const transfer = await transferWith(alice.key, walletId, key);
      expect(transfer.statusCode).toBe(201);
      const fiatOnly = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
      const refused = await depositWith(key, account.id, { amount: 1 }, alice, await t.csrfToken(fiatOnly.key), fiatOnly.key);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'wallets:read' } });
    });
  });

  it('stores a refusal of the operation (404, 403) and replays it, even once its cause is gone', async () => {
    const unknown = randomUUID();
    const key = randomUUID();
    const first = await depositWith(key, unknown);
    expect(first.statusCode).toBe(404);
    expect((await depositWith(key, unknown)).body).toBe(first.body);

    const virtual = await createVirtualAccount(t, alice, account.id);
    const fiatOnly = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
    const token = await t.csrfToken(fiatOnly.key);
    const scopeKey = randomUUID();
    const send = () => t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${virtual.id}/deposits`, key: fiatOnly.key, csrf: token, body: { amount: 1 }, headers: { 'idempotency-key': scopeKey } });
    const forbidden = await send();
    expect(forbidden.statusCode).toBe(403);
    expect((await send()).body).toBe(forbidden.body);
    // The cause gone: a key of the same customer that has the scope, with the same Idempotency-Key, gets the 403.
    const withScope = await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${virtual.id}/deposits`, key: alice.key, csrf, body: { amount: 1 }, headers: { 'idempotency-key': scopeKey } });
    expect(withScope.statusCode).toBe(403);
    expect(withScope.body).toBe(forbidden.body);
    expect(withScope.headers['idempotent-replayed']).toBe('true');
    expect(await t.storage.db.selectFrom('transactions').select('id').where('virtual_account_id', '=', virtual.id).execute()).toEqual([]);
  });

  it('replays the first operation’s answer when the key is reused on another one', async () => {
    const key = randomUUID();
    const first = await depositWith(key, account.id, { amount: 3 });
    const before = await deposits(other.id);
    const reused = await depositWith(key, other.id, { amount: 99 });
    expect(reused.statusCode).toBe(201);
    expect(reused.body).toBe(first.body);
    expect(reused.json().data.to_account_id).toBe(account.id);
    expect(await deposits(other.id)).toBe(before);
  });

  it('keeps keys per customer: the same key of another customer is another key', async () => {
    const key = randomUUID();
    const bobsAccount = await createFiatAccount(t, bob);
    const bobsToken = await t.csrfToken(bob.key);
    expect((await depositWith(key)).statusCode).toBe(201);
    const bobs = await depositWith(key, bobsAccount.id, { amount: 7 }, bob, bobsToken);
    expect(bobs.statusCode).toBe(201);
    expect(bobs.headers['idempotent-replayed']).toBeUndefined();
    expect(bobs.json().data.amount).toBe(7);
  });

  it('lets a key whose request stopped be retried once its lease has run out; before that, 409', async () => {
    const key = randomUUID();
    const now = t.clock.now();
    // What a process killed between the reservation and the commit leaves behind: the reservation, nothing else.
    await t.storage.db
      .insertInto('idempotency_keys')
      .values({
        customer_id: alice.id,
        key,
        operation: 'POST /sandbox/fiat-accounts/:id/deposits',
        status: 'in_progress',
        attempt_id: randomUUID(),
        lease_until: new Date(now.getTime() + 30_000).toISOString(),
        response_status: null,
        response_body: null,
        read_scope: 'fiat-accounts:read',
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + 86_400_000).toISOString(),
      })
      .execute();
    const early = await depositWith(key);
    expect(early.statusCode).toBe(409);
    const before = await deposits();
    t.clock.advance(30_001);
    const retried = await depositWith(key);
    expect(retried.statusCode).toBe(201);
    expect(await deposits()).toBe(before + 1);
    expect((await depositWith(key)).body).toBe(retried.body);
  });

  it('commits nothing for an attempt whose reservation was taken over: the money goes with the key or not at all', async () => {
    const key = randomUUID();
    await depositWith(key);
    await t.storage.db.updateTable('idempotency_keys').set({ status: 'in_progress', attempt_id: 'the-new-holder' }).where('key', '=', key).execute();
    const before = await moneySnapshot(t, alice.id);
    const service = new DepositService(t.storage, t.app.caches, new SandboxDeposits(t.app.providerEvents));
    const caller = { id: alice.keyId, customerId: alice.id, frOwnerBusinessId: alice.frOwnerBusinessId, scopes: ['*' as const] };
    await expect(service.deposit(caller, account.id, { amount: 5 }, { customerId: alice.id, key, attemptId: 'the-old-holder' })).rejects.toMatchObject({
      code: 'IDEMPOTENCY_KEY_IN_USE',
    });
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
  });

  it('keeps a key for its retention and forgets it after: the reaper deletes expired keys', async () => {
    const key = randomUUID();
    const first = await depositWith(key);
    const reaper = t.app.workers.find((worker) => worker.name === 'reaper')!;
    t.clock.advance(idempotencyRetentionHoursDefault * 3_600_000 - 1000);
    csrf = await t.csrfToken(alice.key); // the old token's window has passed with the clock
    await reaper.runOnce();
    expect((await depositWith(key)).body).toBe(first.body);
    t.clock.advance(2000);
    expect(await reaper.runOnce()).toBeGreaterThanOrEqual(1);
    const after = await depositWith(key);
    expect(after.statusCode).toBe(201);
    expect(after.headers['idempotent-replayed']).toBeUndefined();
    expect(after.json().data.id).not.toBe(first.json().data.id);
  });

  it('works without a key, and POST /payments still refuses one', async () => {
    expect((await depositWith(undefined)).statusCode).toBe(201);
    const payment = await t.request({
      method: 'POST',
      url: '/payments',
      key: alice.key,
      csrf,
      body: { fromAccountId: account.id, toAccountId: other.id, amount: 1, currency: 'EUR', reference: 'x' },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(payment.statusCode).toBe(400);
    expect(payment.json().error.code).toBe('IDEMPOTENCY_KEY_NOT_SUPPORTED');
  });

  it('leaves a ledger that verifies', async () => {
    expect((await verifyLedger(t.storage)).problems).toEqual([]);
  });

  it('documents the header and the 409 in the OpenAPI document', async () => {
    const doc = (await t.request({ url: '/openapi.json' })).json();
    const operation = doc.paths['/sandbox/fiat-accounts/{id}/deposits'].post;
    expect(operation.parameters).toContainEqual({ $ref: '#/components/parameters/IdempotencyKey' });
    expect(doc.components.parameters.IdempotencyKey).toMatchObject({ in: 'header', name: 'Idempotency-Key', required: false });
    expect(operation.responses['409']).toBeDefined();
  });
});
