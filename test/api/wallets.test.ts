import { createHash } from 'node:crypto';
import { base58, bech32, createBase58check } from '@scure/base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eip55 } from '../helpers/addresses.js';
import { createIndividual } from '../helpers/fixtures.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { RecordingProviders } from '../helpers/providers.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const timestampPattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';

const walletFields = [
  // docs/spec.md §2 wallet record.
  'local_id', 'provider', 'display_name', 'status', 'currency', 'deposit_address',
  // Additive (docs/wallets.md).
  'fr_wallet_id', 'end_user_id', 'umbrella_link_id', 'created_at', 'updated_at',
].sort();
const addressFields = ['local_id', 'asset', 'network', 'address', 'is_default', 'wallet_id', 'created_at'].sort();

/** The catalogue of docs/wallets.md, written out: what a client may ask for. */
const catalogue: Array<[asset: string, network: string]> = [
  ['USDC', 'ETH'], ['USDC', 'ARB'], ['USDC', 'BASE'], ['USDC', 'MATIC'], ['USDC', 'SOL'],
  ['USDT', 'ETH'], ['USDT', 'TRX'], ['EURC', 'ETH'], ['EURC', 'SOL'], ['BTC', 'BTC'], ['SOL', 'SOL'], ['ETH', 'ETH'],
];

// Each format checked with the field's libraries directly, not with the server's code.
const tronCheck = createBase58check((data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest()));
function isValidAddressOf(network: string, address: string): boolean {
  try {
    switch (network) {
      case 'ETH':
      case 'ARB':
      case 'BASE':
      case 'MATIC':
        // EIP-55: mixed case, and exactly the checksummed form.
        return /^0x[0-9a-fA-F]{40}$/.test(address) && eip55(address) === address && address !== address.toLowerCase();
      case 'SOL':
        return base58.decode(address).length === 32;
      case 'TRX': {
        const decoded = tronCheck.decode(address);
        return address.startsWith('T') && decoded.length === 21 && decoded[0] === 0x41;
      }
      case 'BTC': {
        const { prefix, words } = bech32.decode(address as `${string}1${string}`);
        return prefix === 'bc' && words[0] === 0 && bech32.fromWords(words.slice(1)).length === 20 && address.startsWith('bc1q');
      }
      default:
        return false;
    }
  } catch {
    return false;
  }
}

describe('wallets', () => {
  let t: TestApp;
  let recording: RecordingProviders;
  let alice: TestCustomer;
  let bob: TestCustomer;

  beforeAll(async () => {
    recording = new RecordingProviders();
    t = await createTestApp({ providers: recording.providers });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
  });
  afterAll(async () => t.close());

  const createWallet = (customer: TestCustomer, body: unknown = {}) => t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf: true, body });
  const addAddress = (customer: TestCustomer, walletId: string, body: unknown) =>
    t.request({ method: 'POST', url: `/wallets/${walletId}/addresses`, key: customer.key, csrf: true, body });
  const newWallet = async (customer: TestCustomer) => {
    const response = await createWallet(customer);
    expect(response.statusCode).toBe(201);
    return response.json().data as { local_id: string; deposit_address: string };
  };
  const walletRows = async (customerId: string) => t.storage.db.selectFrom('wallets').select('id').where('customer_id', '=', customerId).execute();
  const addressRows = async (walletId: string) => t.storage.db.selectFrom('wallet_addresses').selectAll().where('wallet_id', '=', walletId).execute();

  describe('POST /wallets', () => {
    it('creates a wallet with an empty body: the spec §2 record, USDC, and a checksummed deposit address on ETH', async () => {
      const response = await createWallet(alice, {});
      expect(response.statusCode).toBe(201);
      const wallet = response.json().data;
      expect(Object.keys(wallet).sort()).toEqual(walletFields);
      expect(wallet.local_id).toMatch(uuidPattern);
      expect(wallet.provider).toBe('sandbox');
      expect(wallet.display_name).toBe('USDC wallet');
      expect(wallet.status).toBe('active');
      expect(wallet.currency).toBe('USDC');
      expect(isValidAddressOf('ETH', wallet.deposit_address)).toBe(true);
      expect(wallet.fr_wallet_id).toMatch(/^wal_[0-9a-f]{24}$/);
      expect(wallet.end_user_id).toBeNull();
      expect(wallet.umbrella_link_id).toBeNull();
      expect(wallet.created_at).toMatch(timestampPattern);
      expect(wallet.updated_at).toBe(wallet.created_at);
    });

    it('creates a wallet with the defaults when the request has no body at all', async () => {
      const response = await t.request({ method: 'POST', url: '/wallets', key: alice.key, csrf: true });
      expect(response.statusCode).toBe(201);
      expect(response.json().data.display_name).toBe('USDC wallet');
    });

    it('takes a display name, an end user of the caller and an umbrella link id; null means absent', async () => {
      const endUser = await createIndividual(t, alice);
      const umbrellaLinkId = '7E57D004-2B97-4E7A-B45F-5387367791CD';
      const named = (await createWallet(alice, { displayName: 'Treasury', endUserId: endUser.id, umbrellaLinkId })).json().data;
      expect(named.display_name).toBe('Treasury');
      expect(named.end_user_id).toBe(endUser.id);
      expect(named.umbrella_link_id).toBe(umbrellaLinkId.toLowerCase());
      const nulls = await createWallet(alice, { displayName: null, endUserId: null });
      expect(nulls.statusCode).toBe(201);
      expect(nulls.json().data.display_name).toBe('USDC wallet');
      expect(nulls.json().data.end_user_id).toBeNull();
    });

    it("answers another customer's end user exactly like an unknown one, and creates nothing", async () => {
      const bobsEndUser = await createIndividual(t, bob);
      const before = (await walletRows(alice.id)).length;
      const calls = recording.calls.length;
      const foreign = await createWallet(alice, { endUserId: bobsEndUser.id });
      const unknown = await createWallet(alice, { endUserId: unknownId });
      expect(foreign.statusCode).toBe(404);
      expect(unknown.statusCode).toBe(404);
      expect(foreign.json().error).toEqual(unknown.json().error);
      expect((await walletRows(alice.id)).length).toBe(before);
      expect(recording.calls.length).toBe(calls);
    });

    it.each([
      ['an empty display name', { displayName: '' }],
      ['a display name of 101 characters', { displayName: 'x'.repeat(101) }],
      ['an end user id that is not a UUID', { endUserId: 'nope' }],
      ['an umbrella link id that is not a UUID', { umbrellaLinkId: 'nope' }],
      ['an unknown field', { currency: 'BTC' }],
    ])('refuses %s with 400 and creates nothing', async (_case, body) => {
      const before = (await walletRows(alice.id)).length;
      const response = await createWallet(alice, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect((await walletRows(alice.id)).length).toBe(before);
    });

    it('accepts a display name of exactly 100 characters', async () => {
      const response = await createWallet(alice, { displayName: 'w'.repeat(100) });
      expect(response.statusCode).toBe(201);
      expect(response.json().data.display_name).toBe('w'.repeat(100));
    });

    it('needs wallets:write and a CSRF token', async () => {
      const reader = await t.createKey(alice.id, { scopes: ['wallets:read'] });
      const other = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
      const writer = await t.createKey(alice.id, { scopes: ['wallets:write'] });
      for (const key of [reader.key, other.key]) {
        const refused = await t.request({ method: 'POST', url: '/wallets', key, csrf: true, body: {} });
        expect(refused.statusCode).toBe(403);
        expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
      }
      const withoutToken = await t.request({ method: 'POST', url: '/wallets', key: writer.key, body: {} });
      expect(withoutToken.statusCode).toBe(403);
      expect(withoutToken.json().error.code).toBe('CSRF_TOKEN_INVALID');
      expect((await t.request({ method: 'POST', url: '/wallets', key: writer.key, csrf: true, body: {} })).statusCode).toBe(201);
      expect((await t.request({ url: '/wallets', key: reader.key })).statusCode).toBe(200);
      expect((await t.request({ url: '/wallets', key: other.key })).statusCode).toBe(403);
    });

    it('refuses a wallet past the limit of 1,000 per customer with 422 LIMIT_EXCEEDED', async () => {
      const carol = await t.createCustomer('Carol');
      const now = new Date().toISOString();
      await t.storage.transaction(async (trx) => {
        for (let index = 0; index < 1000; index += 1) {
          const id = `00000000-0000-4000-8000-${String(index).padStart(12, '0')}`;
          await trx
            .insertInto('wallets')
            .values({ id, customer_id: carol.id, fr_wallet_id: `wal_carol_${index}`, provider: 'sandbox', display_name: 'x', status: 'active', end_user_id: null, umbrella_link_id: null, created_at: now, updated_at: now })
            .execute();
        }
      });
      const refused = await createWallet(carol);
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 1000 } });
      expect((await walletRows(carol.id)).length).toBe(1000);
    });
  });

  describe('GET /wallets and GET /wallets/{id}', () => {
    it("lists the caller's wallets only, oldest first, and shows one with its addresses", async () => {
      t.clock.advance(1);
      const first = await newWallet(bob);
      t.clock.advance(1);
      const second = await newWallet(bob);
      const listed = await t.request({ url: '/wallets', key: bob.key });
      expect(listed.statusCode).toBe(200);
      const ids = listed.json().data.map((wallet: { local_id: string }) => wallet.local_id);
      expect(ids.sort()).toEqual((await walletRows(bob.id)).map((row) => row.id).sort());
      const inOrder = listed.json().data.map((wallet: { local_id: string }) => wallet.local_id);
      expect(inOrder.indexOf(first.local_id)).toBe(inOrder.length - 2);
      expect(inOrder.indexOf(second.local_id)).toBe(inOrder.length - 1);
      const aliceIds = (await t.request({ url: '/wallets', key: alice.key })).json().data.map((wallet: { local_id: string }) => wallet.local_id);
      expect(aliceIds).not.toContain(first.local_id);

      const shown = await t.request({ url: `/wallets/${first.local_id}`, key: bob.key });
      expect(shown.statusCode).toBe(200);
      const detail = shown.json().data;
      expect(Object.keys(detail).sort()).toEqual([...walletFields, 'addresses', 'balances'].sort());
      expect(detail.balances).toEqual([{ asset: 'USDC', balance: '0.000000', available: '0.000000' }]);
      expect(detail.addresses).toHaveLength(1);
      expect(detail.addresses[0]).toMatchObject({ asset: 'USDC', network: 'ETH', address: first.deposit_address, is_default: true, wallet_id: first.local_id });
      expect(Object.keys(detail.addresses[0]).sort()).toEqual(addressFields);
    });

    it("answers another customer's wallet exactly like an unknown one", async () => {
      const bobs = await newWallet(bob);
      const foreign = await t.request({ url: `/wallets/${bobs.local_id}`, key: alice.key });
      const unknown = await t.request({ url: `/wallets/${unknownId}`, key: alice.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
      expect((await t.request({ url: '/wallets/not-a-uuid', key: alice.key })).statusCode).toBe(400);
    });
  });

  describe('POST /wallets/{id}/addresses', () => {
    it.each(catalogue)('generates a %s address on %s that is valid for the network', async (asset, network) => {
      const wallet = await newWallet(alice);
      const response = await addAddress(alice, wallet.local_id, { asset, network });
      expect(response.statusCode).toBe(201);
      const address = response.json().data;
      expect(Object.keys(address).sort()).toEqual(addressFields);
      expect(address).toMatchObject({ asset, network, wallet_id: wallet.local_id });
      expect(address.local_id).toMatch(uuidPattern);
      expect(isValidAddressOf(network, address.address)).toBe(true);
      // The wallet's first USDC address (on ETH) came with it; any other asset's first address is its default.
      expect(address.is_default).toBe(asset !== 'USDC');
    });

    it('matches codes and long network names in any case, and presents the canonical codes', async () => {
      const wallet = await newWallet(alice);
      const cases: Array<[string, string, string, string]> = [
        ['usdc', 'Polygon', 'USDC', 'MATIC'],
        ['Usdt', 'TRON', 'USDT', 'TRX'],
        ['eurc', 'solana', 'EURC', 'SOL'],
        ['btc', 'Bitcoin', 'BTC', 'BTC'],
        ['USDC', 'arbitrum', 'USDC', 'ARB'],
        ['usdc', 'base', 'USDC', 'BASE'],
        ['eth', 'Ethereum', 'ETH', 'ETH'],
      ];
      for (const [asset, network, canonicalAsset, canonicalNetwork] of cases) {
        const response = await addAddress(alice, wallet.local_id, { asset, network });
        expect(response.statusCode).toBe(201);
        expect(response.json().data).toMatchObject({ asset: canonicalAsset, network: canonicalNetwork });
        expect(isValidAddressOf(canonicalNetwork, response.json().data.address)).toBe(true);
      }
    });

    it('makes the first address of an asset its default and the next ones not, and lists them in GET /wallets/{id}', async () => {
      const wallet = await newWallet(alice);
      t.clock.advance(1);
      const first = (await addAddress(alice, wallet.local_id, { asset: 'USDT', network: 'ETH' })).json().data;
      t.clock.advance(1);
      const second = (await addAddress(alice, wallet.local_id, { asset: 'USDT', network: 'TRX' })).json().data;
      t.clock.advance(1);
      const third = (await addAddress(alice, wallet.local_id, { asset: 'USDT', network: 'ETH' })).json().data;
      expect([first.is_default, second.is_default, third.is_default]).toEqual([true, false, false]);
      expect(third.address).not.toBe(first.address);
      const detail = (await t.request({ url: `/wallets/${wallet.local_id}`, key: alice.key })).json().data;
      expect(detail.addresses.map((address: { local_id: string }) => address.local_id)).toEqual([
        detail.addresses[0].local_id,
        first.local_id,
        second.local_id,
        third.local_id,
      ]);
    });

    it.each([
      ['a pair outside the catalogue', { asset: 'BTC', network: 'ETH' }],
      ['an unknown asset', { asset: 'DOGE', network: 'ETH' }],
      ['an unknown network', { asset: 'USDC', network: 'avalanche' }],
    ])('refuses %s with 400 naming the supported pairs, and creates nothing', async (_case, body) => {
      const wallet = await newWallet(alice);
      const calls = recording.calls.length;
      const response = await addAddress(alice, wallet.local_id, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.message).toContain('USDC on ETH, ARB, BASE, MATIC, SOL; USDT on ETH, TRX; EURC on ETH, SOL; BTC on BTC; SOL on SOL; ETH on ETH');
      expect(await addressRows(wallet.local_id)).toHaveLength(1);
      expect(recording.calls.length).toBe(calls);
    });

    it.each([
      ['an empty asset', { asset: '', network: 'ETH' }],
      ['an asset of 21 characters', { asset: 'U'.repeat(21), network: 'ETH' }],
      ['a network of 51 characters', { asset: 'USDC', network: 'E'.repeat(51) }],
      ['a missing network', { asset: 'USDC' }],
      ['a non-string asset', { asset: 1, network: 'ETH' }],
    ])('refuses %s with 400', async (_case, body) => {
      const wallet = await newWallet(alice);
      const response = await addAddress(alice, wallet.local_id, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
    });

    it("answers another customer's wallet exactly like an unknown one, and adds nothing to it", async () => {
      const bobs = await newWallet(bob);
      const foreign = await addAddress(alice, bobs.local_id, { asset: 'USDC', network: 'SOL' });
      const unknown = await addAddress(alice, unknownId, { asset: 'USDC', network: 'SOL' });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
      expect(await addressRows(bobs.local_id)).toHaveLength(1);
    });

    it('needs wallets:write', async () => {
      const wallet = await newWallet(alice);
      const reader = await t.createKey(alice.id, { scopes: ['wallets:read'] });
      const refused = await t.request({ method: 'POST', url: `/wallets/${wallet.local_id}/addresses`, key: reader.key, csrf: true, body: { asset: 'USDC', network: 'SOL' } });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
      expect(await addressRows(wallet.local_id)).toHaveLength(1);
    });

    it("stores a custodian's lower-case EVM address checksummed, and refuses one that is not valid for its network with 502", async () => {
      const wallet = await newWallet(alice);
      const createAddress = recording.providers.custody.createAddress.bind(recording.providers.custody);
      try {
        recording.providers.custody.createAddress = async (request, key) => {
          const created = await createAddress(request, key);
          return { ...created, address: created.address.toLowerCase() };
        };
        const lowered = await addAddress(alice, wallet.local_id, { asset: 'USDT', network: 'ETH' });
        expect(lowered.statusCode).toBe(201);
        expect(isValidAddressOf('ETH', lowered.json().data.address)).toBe(true);

        // Straight from the sandbox: the recording would count the sandbox's own valid address as made.
        recording.providers.custody.createAddress = async (request, key) => ({ ...(await sandboxProviders().custody.createAddress(request, key)), address: 'T-not-an-address' });
        const invalid = await addAddress(alice, wallet.local_id, { asset: 'USDT', network: 'TRX' });
        expect(invalid.statusCode).toBe(502);
        expect(invalid.json().error.code).toBe('PROVIDER_UNAVAILABLE');
        expect(await addressRows(wallet.local_id)).toHaveLength(2);
        expect(recording.calls.at(-1)).toBe('undo USDT:TRX:T-not-an-address');
      } finally {
        recording.providers.custody.createAddress = createAddress;
      }
    });

    // On SQLite, BEGIN IMMEDIATE already makes these requests take turns; the PostgreSQL run is what tests the wallet's lock.
    it('holds the limit of 100 addresses and one default per asset under concurrent requests, undoing what it refuses', async () => {
      const wallet = await newWallet(alice);
      const callsBefore = recording.calls.length;
      const answers = await Promise.all(
        Array.from({ length: 110 }, (_, index) => addAddress(alice, wallet.local_id, { asset: index % 2 === 0 ? 'USDT' : 'EURC', network: 'ETH' })),
      );
      const statuses = answers.map((answer) => answer.statusCode);
      expect(statuses.filter((status) => status === 201)).toHaveLength(99);
      expect(statuses.filter((status) => status === 422)).toHaveLength(11);
      for (const refused of answers.filter((answer) => answer.statusCode === 422)) {
        expect(refused.json().error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { limit: 100 } });
      }
      const rows = await addressRows(wallet.local_id);
      expect(rows).toHaveLength(100);
      for (const asset of ['USDC', 'USDT', 'EURC']) expect(rows.filter((row) => row.asset === asset && Number(row.is_default) === 1)).toHaveLength(1);
      // Every address the custodian made for a refused request was retired: each live one is recorded.
      const recorded = new Set(
        (await t.storage.db.selectFrom('wallet_addresses').select(['asset', 'network', 'address']).execute()).map((row) => `${row.asset}:${row.network}:${row.address}`),
      );
      const liveAddresses = [...recording.live].filter((id) => /^[A-Z]+:[A-Z]+:/.test(id));
      // The 11 refused after their address was made (past the check before the call) had it retired.
      const undone = recording.calls.slice(callsBefore).filter((call) => /^undo [A-Z]+:ETH:/.test(call));
      expect(undone.length).toBe(recording.calls.slice(callsBefore).filter((call) => call === 'createAddress').length - 99);
      expect(liveAddresses.filter((address) => !recorded.has(address))).toEqual([]);
    });
  });
});
