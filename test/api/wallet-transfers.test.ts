import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { base58, bech32, createBase58check } from '@scure/base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { eip55, eip55Examples } from '../helpers/addresses.js';
import { outboxEvents, timestampPattern, uuidPattern } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '0d4c8f8e-2b7a-4c1e-9f3d-5a6b7c8d9e0f';

/** docs/spec.md §2 wallet transfer, then the additive fields (docs/wallets.md). */
const transferFields = [
  'local_id', 'status', 'amount', 'asset', 'network', 'destination',
  'wallet_id', 'direction', 'note', 'tx_hash', 'failure_reason', 'created_at', 'updated_at', 'completed_at',
].sort();

// Addresses and transaction ids made and checked with the field's libraries, not with the server's code.
const tronCheck = createBase58check((data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest()));
const evmAddress = () => eip55(randomBytes(20).toString('hex'));
const solanaAddress = () => base58.encode(randomBytes(32));
const tronAddress = () => tronCheck.encode(Uint8Array.of(0x41, ...randomBytes(20)));
const bitcoinAddress = () => bech32.encode('bc', [0, ...bech32.toWords(randomBytes(20))]);

function isTransactionIdOf(network: string, hash: string): boolean {
  if (['ETH', 'ARB', 'BASE', 'MATIC'].includes(network)) return /^0x[0-9a-f]{64}$/.test(hash);
  if (network === 'SOL') return base58.decode(hash).length === 64;
  return /^[0-9a-f]{64}$/.test(hash);
}

describe('wallet money: deposits, balances, transfers', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let csrf: string;
  let worker: PollingWorker;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: '2000' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    csrf = await t.csrfToken(alice.key);
    const found = t.app.workers.find((candidate) => candidate.name === 'sandbox-wallet-settlement');
    if (!found) throw new Error('no sandbox-wallet-settlement worker');
    worker = found;
  });
  afterAll(async () => {
    const report = await verifyLedger(t.storage);
    expect(report.problems).toEqual([]);
    await t.close();
  });

  const newWallet = async (customer: TestCustomer = alice) => {
    const response = await t.request({ method: 'POST', url: '/wallets', key: customer.key, csrf: true, body: {} });
    expect(response.statusCode).toBe(201);
    return response.json().data as { local_id: string; deposit_address: string };
  };
  const addAddress = async (walletId: string, asset: string, network: string) => {
    const response = await t.request({ method: 'POST', url: `/wallets/${walletId}/addresses`, key: alice.key, csrf, body: { asset, network } });
    expect(response.statusCode).toBe(201);
    return response.json().data as { address: string };
  };
  const depositRequest = (walletId: string, body: unknown, headers: Record<string, string> = {}, customer = alice) =>
    t.request({ method: 'POST', url: `/sandbox/wallets/${walletId}/deposits`, key: customer.key, csrf: customer === alice ? csrf : true, body, headers });
  const fund = async (walletId: string, amount: string, asset = 'USDC', network = 'ETH') => {
    const response = await depositRequest(walletId, { asset, network, amount });
    expect(response.statusCode).toBe(201);
    return response.json().data;
  };
  const transferRequest = (walletId: string, body: unknown, headers: Record<string, string> = {}, customer = alice) =>
    t.request({ method: 'POST', url: `/wallets/${walletId}/transfers`, key: customer.key, csrf: customer === alice ? csrf : true, body, headers });
  const send = async (walletId: string, body: Record<string, unknown>) => {
    const response = await transferRequest(walletId, { asset: 'USDC', network: 'ETH', destination: evmAddress(), ...body });
    expect(response.statusCode).toBe(201);
    return response.json().data;
  };
  const balance = async (walletId: string, asset = 'USDC') => {
    const response = await t.request({ url: `/otc-exchanges/wallets/${walletId}/balance?asset=${asset}`, key: alice.key });
    expect(response.statusCode).toBe(200);
    return response.json().data as { walletId: string; asset: string; balance: string; available: string };
  };
  const settleRequest = (transferId: string, outcome: unknown, customer = alice) =>
    t.request({ method: 'POST', url: `/sandbox/wallet-transfers/${transferId}/settle`, key: customer.key, csrf: customer === alice ? csrf : true, body: { outcome } });
  const transferRows = async (walletId: string) => t.storage.db.selectFrom('wallet_transfers').selectAll().where('wallet_id', '=', walletId).execute();

  it('asks every wallet-money endpoint for a key (401) and for its scope (403), before looking anything up', async () => {
    const wallet = await newWallet();
    await fund(wallet.local_id, '5');
    const transfer = await send(wallet.local_id, { amount: '1' });
    const endpoints: Array<{ method: 'GET' | 'POST'; url: string; scope: string; body?: unknown }> = [
      { method: 'POST', url: `/wallets/${wallet.local_id}/transfers`, scope: 'wallets:write', body: { asset: 'USDC', network: 'ETH', amount: '1', destination: evmAddress() } },
      { method: 'GET', url: `/wallets/${wallet.local_id}/transfers`, scope: 'wallets:read' },
      { method: 'GET', url: `/wallet-transfers/${transfer.local_id}`, scope: 'wallets:read' },
      { method: 'GET', url: `/otc-exchanges/wallets/${wallet.local_id}/balance`, scope: 'otc-exchanges:read' },
      { method: 'POST', url: `/sandbox/wallets/${wallet.local_id}/deposits`, scope: 'wallets:write', body: { asset: 'USDC', network: 'ETH', amount: '1' } },
      { method: 'POST', url: `/sandbox/wallet-transfers/${transfer.local_id}/settle`, scope: 'wallets:write', body: { outcome: 'failed' } },
    ];
    const otherScope = await t.createKey(alice.id, { scopes: ['payments:read', 'payments:write'] });
    for (const { method, url, scope, body } of endpoints) {
      expect((await t.request({ method, url, body })).statusCode, `${method} ${url} without a key`).toBe(401);
      const refused = await t.request({ method, url, key: otherScope.key, csrf: method === 'POST' ? true : undefined, body });
      expect(refused.statusCode, `${method} ${url} without ${scope}`).toBe(403);
      expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
      const allowed = await t.createKey(alice.id, { scopes: [scope] });
      const answered = await t.request({ method, url, key: allowed.key, csrf: method === 'POST' ? true : undefined, body });
      expect(answered.statusCode, `${method} ${url} with ${scope}: ${answered.body}`).toBeLessThan(300);
    }
    expect(await balance(wallet.local_id)).toMatchObject({ balance: '6.000000', available: '5.000000' });
  });

  describe('POST /sandbox/wallets/{id}/deposits', () => {
    it('credits the wallet as a completed incoming transfer to its address, with a transaction id of the network', async () => {
      const wallet = await newWallet();
      const deposit = await fund(wallet.local_id, '250.5');
      expect(Object.keys(deposit).sort()).toEqual(transferFields);
      expect(deposit).toMatchObject({
        status: 'completed',
        amount: '250.500000',
        asset: 'USDC',
        network: 'ETH',
        destination: wallet.deposit_address,
        wallet_id: wallet.local_id,
        direction: 'incoming',
        failure_reason: null,
      });
      expect(deposit.local_id).toMatch(uuidPattern);
      expect(isTransactionIdOf('ETH', deposit.tx_hash)).toBe(true);
      expect(deposit.completed_at).toMatch(timestampPattern);
      expect(await balance(wallet.local_id)).toEqual({ walletId: wallet.local_id, asset: 'USDC', balance: '250.500000', available: '250.500000' });
      const detail = (await t.request({ url: `/wallets/${wallet.local_id}`, key: alice.key })).json().data;
      expect(detail.balances).toEqual([{ asset: 'USDC', balance: '250.500000', available: '250.500000' }]);
    });

    it.each([
      ['BTC', 'bitcoin', '0.00000001', '0.00000001'],
      ['SOL', 'Solana', '1.5', '1.500000000'],
      ['USDT', 'trx', '12', '12.000000'],
      ['ETH', 'ETH', '0.000000001', '0.000000001'],
    ])('keeps %s at its own scale: a deposit on %s of %s shows %s', async (asset, network, amount, shown) => {
      const wallet = await newWallet();
      await addAddress(wallet.local_id, asset, network);
      const deposit = await fund(wallet.local_id, amount, asset, network);
      expect(deposit.amount).toBe(shown);
      expect(isTransactionIdOf(deposit.network, deposit.tx_hash)).toBe(true);
      expect((await balance(wallet.local_id, asset.toLowerCase())).balance).toBe(shown);
    });

    it('accepts the amount as a JSON number too', async () => {
      const wallet = await newWallet();
      expect((await depositRequest(wallet.local_id, { asset: 'usdc', network: 'ethereum', amount: 12.25 })).json().data.amount).toBe('12.250000');
    });

    it('refuses a pair the wallet has no address for with 422 ADDRESS_REQUIRED, and one outside the catalogue with 400', async () => {
      const wallet = await newWallet();
      const noAddress = await depositRequest(wallet.local_id, { asset: 'USDC', network: 'SOL', amount: '1' });
      expect(noAddress.statusCode).toBe(422);
      expect(noAddress.json().error).toMatchObject({ code: 'ADDRESS_REQUIRED', details: { asset: 'USDC', network: 'SOL' } });
      const unsupported = await depositRequest(wallet.local_id, { asset: 'USDT', network: 'SOL', amount: '1' });
      expect(unsupported.statusCode).toBe(400);
      expect(unsupported.json().error.message).toContain('USDC on ETH, ARB, BASE, MATIC, SOL');
      expect(await transferRows(wallet.local_id)).toEqual([]);
    });

    it.each([
      ['zero', '0'],
      ['more decimals than USDC has', '1.0000001'],
      ['negative', '-1'],
      ['an exponent', '1e3'],
      ['beyond the largest single movement', '1000000000.000001'],
    ])('refuses an amount that is %s with 400, crediting nothing', async (_label, amount) => {
      const wallet = await newWallet();
      const response = await depositRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount });
      expect(response.statusCode).toBe(400);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '0.000000' });
    });

    it('refuses a credit that would take a balance beyond its ceiling with 422 LIMIT_EXCEEDED, on both databases alike', async () => {
      const wallet = await newWallet();
      // Set at the ceiling directly (a thousand deposits of the largest amount reach it too), and restored after.
      const atCeiling = () => t.storage.db.updateTable('wallet_balances').set({ balance_minor: 10n ** 18n }).where('wallet_id', '=', wallet.local_id).execute();
      await atCeiling();
      const providerEvents = async () => (await t.storage.db.selectFrom('provider_events').select('id').execute()).length;
      const eventsBefore = await providerEvents();
      const response = await depositRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '0.000001' });
      expect(response.statusCode).toBe(422);
      expect(response.json().error).toMatchObject({ code: 'LIMIT_EXCEEDED', details: { wallet_id: wallet.local_id, asset: 'USDC' } });
      expect(await transferRows(wallet.local_id)).toEqual([]);
      // A refused request writes nothing, not even the custodian's event it was refused on.
      expect(await providerEvents()).toBe(eventsBefore);
      await t.storage.db.updateTable('wallet_balances').set({ balance_minor: 0n }).where('wallet_id', '=', wallet.local_id).execute();
    });

    it("answers another customer's wallet exactly like an unknown one, crediting nothing", async () => {
      const bobs = await newWallet(bob);
      const foreign = await depositRequest(bobs.local_id, { asset: 'USDC', network: 'ETH', amount: '1' });
      const unknown = await depositRequest(unknownId, { asset: 'USDC', network: 'ETH', amount: '1' });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
      expect(await transferRows(bobs.local_id)).toEqual([]);
    });

    describe('as a provider outcome (docs/providers.md): crypto arriving is a wallet_deposit.received event, applied by the deposit lifecycle', () => {
      const applyDue = () => t.app.workers.find((candidate) => candidate.name === 'provider-events')!.runOnce();
      const eventsOf = (reference: string) => t.storage.db.selectFrom('provider_events').selectAll().where('reference', '=', reference).orderBy('id').execute();
      const arrival = (payload: Record<string, unknown>, reference = `in_${randomUUID()}`) => ({
        provider: 'test-custodian',
        type: 'wallet_deposit.received' as const,
        reference,
        idempotencyKey: `evt_${randomUUID()}`,
        payload,
      });

      it("reports a sandbox deposit as the simulated custodian's event, applied with the money: the transfer carries its id and transaction id", async () => {
        const wallet = await newWallet();
        const deposit = await fund(wallet.local_id, '3');
        const [row] = await transferRows(wallet.local_id);
        const [event, ...others] = await eventsOf(row!.fr_transfer_id);
        expect(others).toEqual([]);
        expect(event).toMatchObject({ provider: 'sandbox', event_type: 'wallet_deposit.received', state: 'applied', error_code: null });
        expect(JSON.parse(event!.payload)).toEqual({ address: wallet.deposit_address, asset: 'USDC', network: 'ETH', amount: '3.000000', txHash: deposit.tx_hash });
        expect(deposit.note).toBe('Deposit (sandbox)');
      });

      it('credits the wallet owning the address its custodian names, once per transfer however often reported, through the worker', async () => {
        const wallet = await newWallet();
        const txHash = `0x${randomBytes(32).toString('hex')}`;
        const event = arrival({ address: wallet.deposit_address, asset: 'USDC', network: 'ETH', amount: '7.5', txHash });
        await t.app.providerEvents.record(event);
        await t.app.providerEvents.record(event);
        // The same transfer reported again under another event id.
        const again = { ...event, idempotencyKey: `evt_${randomUUID()}` };
        await t.app.providerEvents.record(again);
        expect(await applyDue()).toBe(1);
        expect(await applyDue()).toBe(1);
        expect(await balance(wallet.local_id)).toMatchObject({ balance: '7.500000' });
        const [row, ...others] = await transferRows(wallet.local_id);
        expect(others).toEqual([]);
        expect(row).toMatchObject({ fr_transfer_id: event.reference, tx_hash: txHash, direction: 'incoming', status: 'completed', note: 'Deposit (test-custodian)' });
        expect((await eventsOf(event.reference)).map((stored) => [stored.state, stored.error_code])).toEqual([['applied', null], ['failed', 'INVALID_STATUS_TRANSITION']]);
        const created = (await outboxEvents(t, alice.id)).filter((outbox) => outbox.type === 'wallet_transfer.completed' && outbox.data.local_id === row!.id);
        expect(created).toHaveLength(1);
      });

      it('refuses crypto at an unknown address, of a pair the address is not for, or with a bad amount: the event is left failed and nothing moves', async () => {
        const wallet = await newWallet();
        const txHash = `0x${randomBytes(32).toString('hex')}`;
        const refused = [
          [arrival({ address: evmAddress(), asset: 'USDC', network: 'ETH', amount: '1', txHash }), 'NOT_FOUND'],
          [arrival({ address: wallet.deposit_address, asset: 'USDC', network: 'ARB', amount: '1', txHash }), 'NOT_FOUND'],
          [arrival({ address: wallet.deposit_address, asset: 'USDC', network: 'ETH', amount: '1.0000001', txHash }), 'VALIDATION_ERROR'],
          [arrival({ address: wallet.deposit_address, asset: 'USDC', network: 'ETH', amount: '1' }), 'VALIDATION_ERROR'],
        ] as const;
        for (const [event] of refused) await t.app.providerEvents.record(event);
        expect(await applyDue()).toBe(refused.length);
        for (const [event, code] of refused) expect(await eventsOf(event.reference), code).toMatchObject([{ state: 'failed', error_code: code }]);
        expect(await transferRows(wallet.local_id)).toEqual([]);
      });
    });
  });

  describe('GET /otc-exchanges/wallets/{id}/balance', () => {
    it('answers USDC when no asset is named, any case otherwise, and zero for an asset the wallet has no address for', async () => {
      const wallet = await newWallet();
      const response = await t.request({ url: `/otc-exchanges/wallets/${wallet.local_id}/balance`, key: alice.key });
      expect(response.json()).toEqual({ data: { walletId: wallet.local_id, asset: 'USDC', balance: '0.000000', available: '0.000000' } });
      expect(await balance(wallet.local_id, 'btc')).toEqual({ walletId: wallet.local_id, asset: 'BTC', balance: '0.00000000', available: '0.00000000' });
      const unknownAsset = await t.request({ url: `/otc-exchanges/wallets/${wallet.local_id}/balance?asset=DOGE`, key: alice.key });
      expect(unknownAsset.statusCode).toBe(400);
      expect(unknownAsset.json().error.details.fields[0]).toMatchObject({ location: 'query', path: '/asset' });
      const tooLong = await t.request({ url: `/otc-exchanges/wallets/${wallet.local_id}/balance?asset=${'A'.repeat(11)}`, key: alice.key });
      expect(tooLong.statusCode).toBe(400);
    });

    it('needs otc-exchanges:read (wallets:read is not enough), and answers another customer’s wallet like an unknown one', async () => {
      const wallet = await newWallet();
      const walletsReader = await t.createKey(alice.id, { scopes: ['wallets:read'] });
      const otcReader = await t.createKey(alice.id, { scopes: ['otc-exchanges:read'] });
      expect((await t.request({ url: `/otc-exchanges/wallets/${wallet.local_id}/balance`, key: walletsReader.key })).statusCode).toBe(403);
      expect((await t.request({ url: `/otc-exchanges/wallets/${wallet.local_id}/balance`, key: otcReader.key })).statusCode).toBe(200);
      const bobs = await newWallet(bob);
      const foreign = await t.request({ url: `/otc-exchanges/wallets/${bobs.local_id}/balance`, key: alice.key });
      const unknown = await t.request({ url: `/otc-exchanges/wallets/${unknownId}/balance`, key: alice.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
    });
  });

  describe('POST /wallets/{id}/transfers', () => {
    it('creates a pending transfer that reserves its amount: balance unchanged, available reduced', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '100');
      const destination = evmAddress();
      const response = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '40.25', destination, note: 'Invoice 7' });
      expect(response.statusCode).toBe(201);
      const transfer = response.json().data;
      expect(Object.keys(transfer).sort()).toEqual(transferFields);
      expect(transfer).toMatchObject({
        status: 'pending',
        amount: '40.250000',
        asset: 'USDC',
        network: 'ETH',
        destination,
        wallet_id: wallet.local_id,
        direction: 'outgoing',
        note: 'Invoice 7',
        tx_hash: null,
        failure_reason: null,
        completed_at: null,
      });
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '100.000000', available: '59.750000' });
      const shown = await t.request({ url: `/wallet-transfers/${transfer.local_id}`, key: alice.key });
      expect(shown.json().data).toEqual(transfer);
      const types = (await outboxEvents(t, alice.id)).filter((event) => event.data.local_id === transfer.local_id);
      expect(types.map((event) => event.type)).toEqual(['wallet_transfer.created']);
    });

    it.each([
      ['ETH in lower case, presented checksummed', 'USDC', 'ETH', () => evmAddress().toLowerCase(), (sent: string) => eip55(sent)],
      ['Solana', 'USDC', 'SOL', solanaAddress, (sent: string) => sent],
      ['Tron', 'USDT', 'TRX', tronAddress, (sent: string) => sent],
      ['Bitcoin in upper case, presented in lower case', 'BTC', 'BTC', () => bitcoinAddress().toUpperCase(), (sent: string) => sent.toLowerCase()],
    ])('takes a destination of %s', async (_label, asset, network, make, presented) => {
      const wallet = await newWallet();
      if (asset !== 'USDC' || network !== 'ETH') await addAddress(wallet.local_id, asset, network);
      await fund(wallet.local_id, '1', asset, network);
      const destination = make();
      const response = await transferRequest(wallet.local_id, { asset, network, amount: '0.5', destination });
      expect(response.statusCode).toBe(201);
      expect(response.json().data.destination).toBe(presented(destination));
    });

    it('takes every standard Bitcoin address (BIP-173 and BIP-350 vectors, legacy 1… and 3…) and refuses mixed case or another network', async () => {
      const wallet = await newWallet();
      await addAddress(wallet.local_id, 'BTC', 'BTC');
      await fund(wallet.local_id, '1', 'BTC', 'BTC');
      const accepted: Array<[sent: string, presented: string]> = [
        ['BC1QW508D6QEJXTDG4Y5R3ZARVARY0C5XW7KV8F3T4', 'bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4'], // P2WPKH, upper case
        ['bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3', 'bc1qrp33g0q5c5txsp9arysrx4k6zdkfs4nce4xj0gdcccefvpysxf3qccfmv3'], // P2WSH
        ['bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0', 'bc1p0xlxvlhemja6c4dqv22uapctqupfhlxm9h8z3k2e72q4k9hcz7vqzk5jj0'], // Taproot
        ['1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2'], // P2PKH
        ['3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy', '3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy'], // P2SH
      ];
      for (const [sent, presented] of accepted) {
        const response = await transferRequest(wallet.local_id, { asset: 'BTC', network: 'BTC', amount: '0.001', destination: sent });
        expect(response.statusCode, sent).toBe(201);
        expect(response.json().data.destination).toBe(presented);
      }
      for (const refused of ['bC1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4', 'tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx', '1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3']) {
        expect((await transferRequest(wallet.local_id, { asset: 'BTC', network: 'BTC', amount: '0.001', destination: refused })).statusCode, refused).toBe(400);
      }
    });

    it.each([
      // EIP-55's own example, 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed, with the case of its last letter flipped.
      ['a mixed-case EVM address with a bad checksum', 'ETH', () => '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD'],
      ['a Solana address on ETH', 'ETH', solanaAddress],
      ['an EVM address on SOL', 'SOL', evmAddress],
      ['a Tron address with a broken checksum', 'TRX', () => {
        const valid = tronAddress();
        return `${valid.slice(0, -1)}${valid.endsWith('1') ? '2' : '1'}`;
      }],
      ['text that is no address at all', 'ETH', () => 'hello world'],
    ])('refuses %s with 400 on /destination, reserving nothing', async (_label, network, make) => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const asset = network === 'TRX' ? 'USDT' : 'USDC';
      const response = await transferRequest(wallet.local_id, { asset, network, amount: '1', destination: make() });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields).toEqual([expect.objectContaining({ location: 'body', path: '/destination' })]);
      expect(await balance(wallet.local_id)).toMatchObject({ available: '10.000000' });
    });

    it("takes EIP-55's own examples as written, and presents each sent in lower case as the EIP writes it", async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      for (const example of eip55Examples) {
        for (const sent of [example, example.toLowerCase()]) {
          const response = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '0.1', destination: sent });
          expect(response.statusCode, sent).toBe(201);
          expect(response.json().data.destination, sent).toBe(example);
        }
      }
    });

    it('holds the mixed-case checksum rule both ways: a correct checksum passes, one flipped letter fails', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const good = evmAddress();
      const letterAt = [...good].findIndex((character, index) => index > 1 && /[a-fA-F]/.test(character));
      const flipped = good.slice(0, letterAt) + (good[letterAt] === good[letterAt]!.toUpperCase() ? good[letterAt].toLowerCase() : good[letterAt]!.toUpperCase()) + good.slice(letterAt + 1);
      expect((await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1', destination: good })).statusCode).toBe(201);
      expect((await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1', destination: flipped })).statusCode).toBe(400);
    });

    it.each([
      ['amount not matching the pattern', { amount: '1.' }, '/amount'],
      ['amount with a sign', { amount: '+1' }, '/amount'],
      ['amount as a number', { amount: 1 }, '/amount'],
      ['amount of zero', { amount: '0.000' }, '/amount'],
      ['amount with more decimals than USDC has', { amount: '0.0000001' }, '/amount'],
      ['destination of 4 characters', { destination: '0xab' }, '/destination'],
      ['destination of 201 characters', { destination: 'a'.repeat(201) }, '/destination'],
      ['note of 501 characters', { note: 'n'.repeat(501) }, '/note'],
      ['asset of 21 characters', { asset: 'A'.repeat(21) }, '/asset'],
      ['network of 51 characters', { network: 'N'.repeat(51) }, '/network'],
      ['unknown field', { memo: 'x' }, '/memo'],
    ])('refuses an %s with 400', async (_label, change, path) => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const response = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1', destination: evmAddress(), ...change });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.details.fields.map((field: { path: string }) => field.path)).toContain(path);
      expect(await balance(wallet.local_id)).toMatchObject({ available: '10.000000' });
    });

    it('takes a note of exactly 500 characters and null as no note', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      expect((await send(wallet.local_id, { amount: '1', note: 'n'.repeat(500) })).note).toHaveLength(500);
      expect((await send(wallet.local_id, { amount: '1', note: null })).note).toBeNull();
    });

    it('refuses more than the available balance with 422 INSUFFICIENT_FUNDS, writing nothing; pending transfers count', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      await send(wallet.local_id, { amount: '7' });
      const rowsBefore = (await transferRows(wallet.local_id)).length;
      const response = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '3.000001', destination: evmAddress() });
      expect(response.statusCode).toBe(422);
      expect(response.json().error).toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { wallet_id: wallet.local_id, asset: 'USDC' } });
      expect((await transferRows(wallet.local_id)).length).toBe(rowsBefore);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '10.000000', available: '3.000000' });
      expect((await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '3', destination: evmAddress() })).statusCode).toBe(201);
      // An asset the wallet holds nothing of.
      const noBalance = await transferRequest(wallet.local_id, { asset: 'BTC', network: 'BTC', amount: '0.1', destination: bitcoinAddress() });
      expect(noBalance.statusCode).toBe(422);
      expect(noBalance.json().error.code).toBe('INSUFFICIENT_FUNDS');
    });

    it('never reserves more than the balance under 20 concurrent transfers', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const responses = await Promise.all(
        Array.from({ length: 20 }, () => transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1', destination: evmAddress() })),
      );
      expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(10);
      expect(responses.filter((response) => response.statusCode === 422)).toHaveLength(10);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '10.000000', available: '0.000000' });
    });

    it('asks for wallets:write and X-CSRF-Token, and answers another customer’s wallet like an unknown one', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const body = { asset: 'USDC', network: 'ETH', amount: '1', destination: evmAddress() };
      const reader = await t.createKey(alice.id, { scopes: ['wallets:read'] });
      expect((await t.request({ method: 'POST', url: `/wallets/${wallet.local_id}/transfers`, key: reader.key, csrf: true, body })).statusCode).toBe(403);
      const noCsrf = await t.request({ method: 'POST', url: `/wallets/${wallet.local_id}/transfers`, key: alice.key, body });
      expect(noCsrf.statusCode).toBe(403);
      expect(noCsrf.json().error.code).toBe('CSRF_TOKEN_INVALID');
      const foreign = await transferRequest(wallet.local_id, body, {}, bob);
      const unknown = await transferRequest(unknownId, body, {}, bob);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
      expect(await balance(wallet.local_id)).toMatchObject({ available: '10.000000' });
    });
  });

  describe('settlement', () => {
    it('completes a transfer by hand: a transaction id of the network, the money out, the reservation gone; once only', async () => {
      const wallet = await newWallet();
      await addAddress(wallet.local_id, 'USDC', 'SOL');
      await fund(wallet.local_id, '20', 'USDC', 'SOL');
      const transfer = await send(wallet.local_id, { network: 'solana', amount: '5', destination: solanaAddress() });
      t.clock.advance(500);
      const settled = await settleRequest(transfer.local_id, 'completed');
      expect(settled.statusCode).toBe(200);
      const record = settled.json().data;
      expect(record).toMatchObject({ status: 'completed', network: 'SOL', failure_reason: null, completed_at: t.clock.now().toISOString() });
      expect(isTransactionIdOf('SOL', record.tx_hash)).toBe(true);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '15.000000', available: '15.000000' });
      const again = await settleRequest(transfer.local_id, 'failed');
      expect(again.statusCode).toBe(422);
      expect(again.json().error.code).toBe('INVALID_STATUS_TRANSITION');
      expect((await t.request({ url: `/wallet-transfers/${transfer.local_id}`, key: alice.key })).json().data).toEqual(record);
    });

    it('fails a transfer by hand: the reservation released, the balance untouched, no transaction id', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '20');
      const transfer = await send(wallet.local_id, { amount: '5' });
      const settled = (await settleRequest(transfer.local_id, 'FAILED')).json().data;
      expect(settled).toMatchObject({ status: 'failed', tx_hash: null, completed_at: null });
      expect(settled.failure_reason).toEqual(expect.any(String));
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '20.000000', available: '20.000000' });
    });

    it('refuses a deposit, another customer’s transfer and an unknown outcome', async () => {
      const wallet = await newWallet();
      const deposit = await fund(wallet.local_id, '1');
      expect((await settleRequest(deposit.local_id, 'completed')).statusCode).toBe(422);
      const transfer = await send(wallet.local_id, { amount: '1' });
      const foreign = await settleRequest(transfer.local_id, 'completed', bob);
      const unknown = await settleRequest(unknownId, 'completed', bob);
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
      expect((await settleRequest(transfer.local_id, 'reversed')).statusCode).toBe(400);
    });

    it('settles by itself once SANDBOX_AUTO_SETTLE_MS has passed, not before; a "sandbox-fail" note fails', async () => {
      // Transfers of earlier tests settle first.
      t.clock.advance(2000);
      while ((await worker.runOnce()) > 0);
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const passing = await send(wallet.local_id, { amount: '2' });
      const failing = await send(wallet.local_id, { amount: '3', note: 'Sandbox-fail please' });
      expect(await worker.runOnce()).toBe(0);
      t.clock.advance(1999);
      expect(await worker.runOnce()).toBe(0);
      t.clock.advance(1);
      expect(await worker.runOnce()).toBe(2);
      const get = async (id: string) => (await t.request({ url: `/wallet-transfers/${id}`, key: alice.key })).json().data;
      expect(await get(passing.local_id)).toMatchObject({ status: 'completed', completed_at: t.clock.now().toISOString() });
      expect(await get(failing.local_id)).toMatchObject({ status: 'failed', failure_reason: expect.stringContaining('sandbox') });
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '8.000000', available: '8.000000' });
      const types = (await outboxEvents(t, alice.id))
        .filter((event) => [passing.local_id, failing.local_id].includes(event.data.local_id))
        .map((event) => event.type);
      expect(types.sort()).toEqual(
        ['wallet_transfer.created', 'wallet_transfer.created', 'wallet_transfer.status_updated', 'wallet_transfer.status_updated', 'wallet_transfer.completed', 'wallet_transfer.failed'].sort(),
      );
    });
  });

  describe('GET /wallets/{id}/transfers and GET /wallet-transfers/{id}', () => {
    it('lists a wallet’s transfers and deposits newest first, paginated, clamped to 100', async () => {
      const wallet = await newWallet();
      const deposit = await fund(wallet.local_id, '10');
      t.clock.advance(1);
      const first = await send(wallet.local_id, { amount: '1' });
      t.clock.advance(1);
      const second = await send(wallet.local_id, { amount: '2' });
      const page = await t.request({ url: `/wallets/${wallet.local_id}/transfers?limit=2`, key: alice.key });
      expect(page.statusCode).toBe(200);
      expect(page.json().data.map((transfer: { local_id: string }) => transfer.local_id)).toEqual([second.local_id, first.local_id]);
      expect(page.json().meta.pagination).toEqual({ page: 1, limit: 2, total: 3 });
      const next = (await t.request({ url: `/wallets/${wallet.local_id}/transfers?limit=2&page=2`, key: alice.key })).json();
      expect(next.data.map((transfer: { local_id: string }) => transfer.local_id)).toEqual([deposit.local_id]);
      expect((await t.request({ url: `/wallets/${wallet.local_id}/transfers?limit=500`, key: alice.key })).json().meta.pagination.limit).toBe(100);
    });

    it('answers another customer’s wallet and transfer exactly like unknown ones', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '1');
      const transfer = await send(wallet.local_id, { amount: '1' });
      const foreignList = await t.request({ url: `/wallets/${wallet.local_id}/transfers`, key: bob.key });
      const unknownList = await t.request({ url: `/wallets/${unknownId}/transfers`, key: bob.key });
      expect(foreignList.statusCode).toBe(404);
      expect(foreignList.body).toBe(unknownList.body);
      const foreign = await t.request({ url: `/wallet-transfers/${transfer.local_id}`, key: bob.key });
      const unknown = await t.request({ url: `/wallet-transfers/${unknownId}`, key: bob.key });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.body).toBe(unknown.body);
    });
  });

  describe('Idempotency-Key', () => {
    it('replays the stored transfer on a retry and never sends twice', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const key = randomUUID();
      const body = { asset: 'USDC', network: 'ETH', amount: '4', destination: evmAddress() };
      const first = await transferRequest(wallet.local_id, body, { 'idempotency-key': key });
      expect(first.statusCode).toBe(201);
      for (let attempt = 0; attempt < 5; attempt += 1) {
        const retry = await transferRequest(wallet.local_id, body, { 'idempotency-key': key.toUpperCase() });
        expect(retry.statusCode).toBe(201);
        expect(retry.headers['idempotent-replayed']).toBe('true');
        expect(retry.body).toBe(first.body);
      }
      expect((await transferRows(wallet.local_id)).filter((row) => row.direction === 'outgoing')).toHaveLength(1);
      expect(await balance(wallet.local_id)).toMatchObject({ available: '6.000000' });
    });

    it('creates one transfer for 10 concurrent requests with one key: the others replay it or get 409', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '100');
      const key = randomUUID();
      const body = { asset: 'USDC', network: 'ETH', amount: '5', destination: evmAddress() };
      const responses = await Promise.all(Array.from({ length: 10 }, () => transferRequest(wallet.local_id, body, { 'idempotency-key': key })));
      const created = responses.filter((response) => response.statusCode === 201);
      expect(created.length).toBeGreaterThanOrEqual(1);
      for (const response of created) expect(response.body).toBe(created[0]!.body);
      for (const response of responses.filter((candidate) => candidate.statusCode !== 201)) {
        expect(response.statusCode).toBe(409);
        expect(response.headers['retry-after']).toBeDefined();
      }
      expect((await transferRows(wallet.local_id)).filter((row) => row.direction === 'outgoing')).toHaveLength(1);
      expect(await balance(wallet.local_id)).toMatchObject({ available: '95.000000' });
    });

    it('replays a stored 422 even once the money has arrived', async () => {
      const wallet = await newWallet();
      const key = randomUUID();
      const body = { asset: 'USDC', network: 'ETH', amount: '4', destination: evmAddress() };
      const refused = await transferRequest(wallet.local_id, body, { 'idempotency-key': key });
      expect(refused.statusCode).toBe(422);
      await fund(wallet.local_id, '10');
      const retry = await transferRequest(wallet.local_id, body, { 'idempotency-key': key });
      expect(retry.statusCode).toBe(422);
      expect(retry.body).toBe(refused.body);
      expect(await balance(wallet.local_id)).toMatchObject({ available: '10.000000' });
    });

    it('stores a 400 the operation raises (a USDC amount with 7 decimals) and replays it: a corrected retry with the same key moves nothing', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const key = randomUUID();
      const destination = evmAddress();
      // Matches the schema's amount pattern; only the operation knows USDC has 6 decimals.
      const invalid = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1.0000001', destination }, { 'idempotency-key': key });
      expect(invalid.statusCode).toBe(400);
      expect(invalid.json().error.details.fields[0].path).toBe('/amount');
      const corrected = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1', destination }, { 'idempotency-key': key });
      expect(corrected.statusCode).toBe(400);
      expect(corrected.body).toBe(invalid.body);
      expect(corrected.headers['idempotent-replayed']).toBe('true');
      expect((await transferRows(wallet.local_id)).filter((row) => row.direction === 'outgoing')).toEqual([]);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '10.000000', available: '10.000000' });
    });

    it('replays the first operation’s answer when the key is reused on a deposit, and the other way round', async () => {
      const wallet = await newWallet();
      await fund(wallet.local_id, '10');
      const key = randomUUID();
      const transfer = await transferRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '1', destination: evmAddress() }, { 'idempotency-key': key });
      const reused = await depositRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '50' }, { 'idempotency-key': key });
      expect(reused.statusCode).toBe(201);
      expect(reused.body).toBe(transfer.body);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '10.000000' });
      const depositKey = randomUUID();
      const deposit = await depositRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '2' }, { 'idempotency-key': depositKey });
      const replayed = await depositRequest(wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '2' }, { 'idempotency-key': depositKey });
      expect(replayed.body).toBe(deposit.body);
      expect(await balance(wallet.local_id)).toMatchObject({ balance: '12.000000' });
    });
  });
});
