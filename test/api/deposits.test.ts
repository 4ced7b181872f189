import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerEventLeaseMs } from '../../src/config/limits.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { Storage } from '../../src/storage/database.js';
import { createBusiness, createFiatAccount } from '../helpers/fixtures.js';
import { holdMoneyPlans } from '../helpers/held-money-plans.js';
import {
  createVirtualAccount,
  deposit,
  depositRequest,
  failingPaths,
  fiatBalance,
  moneySnapshot,
  outboxEvents,
  timestampPattern,
  transactionFields,
  uuidPattern,
  virtualBalance,
} from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '5e2d7c1a-9b3f-4a6e-8d0c-1f2a3b4c5d6e';

/**
 * Makes the next money plan fail as a lost connection would (not a refusal), where it runs: behind the per-customer
 * limit on PostgreSQL, in its transaction on SQLite (as test/helpers/held-money-plans.ts holds them). Returns the undo.
 */
function failNextMoneyPlan(storage: Storage): () => void {
  const runPerCustomer = storage.perCustomer.bind(storage);
  const runTransaction = storage.transaction.bind(storage);
  const restore = () => {
    storage.perCustomer = runPerCustomer;
    storage.transaction = runTransaction;
  };
  const fail = () => {
    restore();
    return Promise.reject(new Error('Connection terminated unexpectedly'));
  };
  if (storage.dialect === 'postgres') storage.perCustomer = fail;
  else storage.transaction = fail;
  return restore;
}

/** Sandbox funding (docs/architecture.md, Sandbox simulation): POST /sandbox/fiat-accounts/{id}/deposits. */
describe('sandbox deposits', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let eur: Awaited<ReturnType<typeof createFiatAccount>>;
  let bobsEur: Awaited<ReturnType<typeof createFiatAccount>>;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    eur = await createFiatAccount(t, alice, { accountName: 'Main EUR', currency: 'EUR' });
    bobsEur = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
  });
  afterAll(async () => t.close());

  it('credits a fiat account and answers 201 with the incoming, completed deposit record, every spec §2 field typed', async () => {
    const account = await createFiatAccount(t, alice, { accountName: 'Funded', currency: 'EUR' });
    const response = await depositRequest(t, alice, account.id, { amount: 1234.5, reference: 'Top-up 1', counterpartyName: 'Ada Lovelace' });
    expect(response.statusCode).toBe(201);
    expect(Object.keys(response.json())).toEqual(['data']);
    const record = response.json().data;
    expect(Object.keys(record).sort()).toEqual(transactionFields);
    expect(record.id).toMatch(uuidPattern);
    expect(record.fr_transaction_id).toMatch(/^txn_[0-9a-f]+$/);
    expect(record.transaction_type).toBe('deposit');
    expect(record.amount).toBe(1234.5);
    expect(record.currency).toBe('EUR');
    expect(record.status).toBe('completed');
    expect(record.direction).toBe('incoming');
    expect(record.from_account_id).toBeNull();
    expect(record.from_account_type).toBe('external');
    expect(record.to_account_id).toBe(account.id);
    expect(record.to_account_type).toBe('fiat_account');
    expect(record.reference).toBe('Top-up 1');
    expect(record.counterparty_name).toBe('Ada Lovelace');
    expect(typeof record.description).toBe('string');
    expect(record.fee_amount).toBe(0);
    expect(record.fee_currency).toBe('EUR');
    expect(record.fr_owner_business_id).toBe(alice.frOwnerBusinessId);
    expect(record.virtual_account_id).toBeNull();
    expect(record.payee_id).toBeNull();
    expect(record.payment_id).toBeNull();
    expect(record.account_id).toBe(account.id);
    expect(record.balance_before).toBe(0);
    expect(record.balance_after).toBe(1234.5);
    expect(record.created_at).toMatch(timestampPattern);
    expect(record.completed_at).toBe(record.created_at);
    expect(record.created_at).toBe(t.clock.now().toISOString());

    expect(await fiatBalance(t, alice, account.id)).toBe(1234.5);
    const again = await deposit(t, alice, account.id, 0.5);
    expect(again.balance_before).toBe(1234.5);
    expect(again.balance_after).toBe(1235);
    expect(again.reference).toBeNull();
    expect(again.counterparty_name).toBeNull();
    expect(await fiatBalance(t, alice, account.id)).toBe(1235);

    const fetched = await t.request({ url: `/transactions/${record.id}`, key: alice.key });
    expect(fetched.statusCode).toBe(200);
    expect(fetched.json().data).toEqual(record);
  });

  it('emits fiat_account.balance_updated with the new and previous balance and the explaining transaction', async () => {
    const account = await createFiatAccount(t, alice, { accountName: 'Evented', currency: 'GBP', ibanCountry: 'GB' });
    const before = (await outboxEvents(t, alice.id)).length;
    const record = await deposit(t, alice, account.id, 75.25);
    const events = (await outboxEvents(t, alice.id)).slice(before);
    expect(events.map((event) => event.type)).toEqual(['fiat_account.balance_updated']);
    const fetched = (await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data;
    expect(fetched).toMatchObject({ balance: 75.25, updated_at: record.created_at });
    expect(events[0]!.data).toEqual({ ...fetched, previous_balance: 0, transaction_id: record.id });
  });

  it('credits a virtual account and its master (id of the virtual account), with both balance events', async () => {
    const master = await createFiatAccount(t, alice, { accountName: 'Master', currency: 'EUR' });
    const virtual = await createVirtualAccount(t, alice, master.id);
    await deposit(t, alice, master.id, 100);
    const before = (await outboxEvents(t, alice.id)).length;

    const record = await deposit(t, alice, virtual.id, 40.1, { reference: 'Invoice 7' });
    expect(record.transaction_type).toBe('deposit');
    expect(record.direction).toBe('incoming');
    expect(record.status).toBe('completed');
    expect(record.to_account_id).toBe(virtual.id);
    expect(record.to_account_type).toBe('virtual_account');
    expect(record.virtual_account_id).toBe(virtual.id);
    expect(record.account_id).toBe(master.id);
    // A virtual account's record shows the virtual account's own balance (docs/transactions.md).
    expect(record.balance_before).toBe(0);
    expect(record.balance_after).toBe(40.1);

    expect(await virtualBalance(t, alice, virtual.id)).toBe(40.1);
    expect(await fiatBalance(t, alice, master.id)).toBe(140.1);
    const events = (await outboxEvents(t, alice.id)).slice(before);
    expect(events.map((event) => event.type).sort()).toEqual(['fiat_account.balance_updated', 'virtual_account.balance_updated']);
    const masterRecord = (await t.request({ url: `/fiat-accounts/${master.id}`, key: alice.key })).json().data;
    const virtualRecord = (await t.request({ url: `/virtual-accounts/${virtual.id}`, key: alice.key })).json().data;
    expect(events.find((event) => event.type === 'fiat_account.balance_updated')!.data).toEqual({ ...masterRecord, balance: 140.1, previous_balance: 100, transaction_id: record.id });
    expect(events.find((event) => event.type === 'virtual_account.balance_updated')!.data).toEqual({ ...virtualRecord, balance: 40.1, previous_balance: 0, transaction_id: record.id });
    const row = await t.storage.db.selectFrom('fiat_accounts').select(['balance_minor', 'allocated_minor']).where('id', '=', master.id).executeTakeFirstOrThrow();
    expect(BigInt(row.balance_minor)).toBe(14010n);
    expect(BigInt(row.allocated_minor)).toBe(4010n);
  });

  it('credits a non-master account of a business end user', async () => {
    const business = await createBusiness(t, alice);
    const linked = await createFiatAccount(t, alice, { accountName: 'Linked', currency: 'USD', linkedBusinessId: business.id });
    const record = await deposit(t, alice, linked.id, 9.99);
    expect(record.currency).toBe('USD');
    expect(await fiatBalance(t, alice, linked.id)).toBe(9.99);
  });

  it('accepts the amount just inside each boundary: 0.01 and 10,000,000', async () => {
    const account = await createFiatAccount(t, alice, { accountName: 'Bounds', currency: 'EUR' });
    expect((await depositRequest(t, alice, account.id, { amount: 0.01 })).statusCode).toBe(201);
    expect((await depositRequest(t, alice, account.id, { amount: 10_000_000 })).statusCode).toBe(201);
    expect(await fiatBalance(t, alice, account.id)).toBe(10_000_000.01);
  });

  it.each([
    ['zero', { amount: 0 }, '/amount'],
    ['negative', { amount: -5 }, '/amount'],
    ['more than 2 decimals', { amount: 1.001 }, '/amount'],
    ['above 10,000,000', { amount: 10_000_000.01 }, '/amount'],
    ['a string', { amount: '10.00' }, '/amount'],
    ['missing', {}, '/amount'],
    ['an empty reference', { amount: 1, reference: '' }, '/reference'],
    ['a 201-character reference', { amount: 1, reference: 'r'.repeat(201) }, '/reference'],
    ['an empty counterpartyName', { amount: 1, counterpartyName: '' }, '/counterpartyName'],
    ['an unknown field', { amount: 1, currency: 'EUR' }, '/currency'],
  ])('refuses %s with 400 and moves nothing', async (_name, body, path) => {
    const before = await moneySnapshot(t, alice.id);
    const response = await depositRequest(t, alice, eur.id, body);
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('VALIDATION_ERROR');
    expect(failingPaths(response)).toContain(path);
    expect(await moneySnapshot(t, alice.id)).toEqual(before);
  });

  it('answers 404 for another customer’s account exactly as for an unknown one, and credits nothing', async () => {
    const bobsBefore = await moneySnapshot(t, bob.id);
    const foreign = await depositRequest(t, alice, bobsEur.id, { amount: 10 });
    const unknown = await depositRequest(t, alice, unknownId, { amount: 10 });
    expect(foreign.statusCode).toBe(404);
    expect(unknown.statusCode).toBe(404);
    expect(foreign.json()).toEqual(unknown.json());
    expect(await moneySnapshot(t, bob.id)).toEqual(bobsBefore);
    expect((await depositRequest(t, alice, 'not-a-uuid', { amount: 10 })).statusCode).toBe(400);
  });

  it('needs a key, a CSRF token and the fiat-accounts:write scope', async () => {
    expect((await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${eur.id}/deposits`, body: { amount: 1 } })).statusCode).toBe(401);
    expect((await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${eur.id}/deposits`, key: alice.key, body: { amount: 1 } })).statusCode).toBe(403);
    const reader = await t.createKey(alice.id, { scopes: ['fiat-accounts:read'] });
    const refused = await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${eur.id}/deposits`, key: reader.key, csrf: true, body: { amount: 1 } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('INSUFFICIENT_SCOPE');
  });

  it('takes the scope of the account credited: fiat-accounts:write for a fiat account, virtual-accounts:write for a virtual one', async () => {
    const virtual = await createVirtualAccount(t, alice, eur.id);
    const fiatWriter = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
    const virtualWriter = await t.createKey(alice.id, { scopes: ['virtual-accounts:write'] });
    const send = (key: string, accountId: string) => t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${accountId}/deposits`, key, csrf: true, body: { amount: 1 } });

    const before = await moneySnapshot(t, alice.id);
    const refused = await send(fiatWriter.key, virtual.id);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'virtual-accounts:write' } });
    expect((await send(virtualWriter.key, eur.id)).statusCode).toBe(403);
    expect(await moneySnapshot(t, alice.id)).toEqual(before);

    expect((await send(virtualWriter.key, virtual.id)).statusCode).toBe(201);
    expect((await send(fiatWriter.key, eur.id)).statusCode).toBe(201);
    // Another customer's id answers 404 to either key, as an unknown id does.
    expect((await send(virtualWriter.key, bobsEur.id)).statusCode).toBe(404);
  });

  describe('as a provider outcome (docs/providers.md): money arriving is a deposit.received event, applied by the deposit lifecycle', () => {
    const applyDue = () => t.app.workers.find((worker) => worker.name === 'provider-events')!.runOnce();
    const eventsOf = (reference: string) => t.storage.db.selectFrom('provider_events').selectAll().where('reference', '=', reference).orderBy('id').execute();
    const linesOf = async (accountId: string) =>
      (await t.request({ url: `/transactions?account_id=${accountId}&limit=100`, key: alice.key })).json().data as Array<Record<string, unknown>>;
    let counter = 0;
    const arrival = (payload: Record<string, unknown>) => {
      counter += 1;
      return { provider: 'test-bank', type: 'deposit.received' as const, reference: `in_${counter}_${Date.now()}`, idempotencyKey: `evt_${counter}_${Date.now()}`, payload };
    };

    it('reports a sandbox deposit as the simulated bank\'s event, applied with the money: its reference is the line\'s fr_transaction_id', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Reported', currency: 'EUR' });
      const record = await deposit(t, alice, account.id, 12.34, { reference: 'Top-up', counterpartyName: 'Ada Lovelace' });
      const [event, ...others] = await eventsOf(record.fr_transaction_id as string);
      expect(others).toEqual([]);
      expect(event).toMatchObject({ provider: 'sandbox', event_type: 'deposit.received', state: 'applied', error_code: null });
      expect(JSON.parse(event!.payload)).toEqual({ account: account.fr_account_id, amount: '12.34', currency: 'EUR', reference: 'Top-up', counterpartyName: 'Ada Lovelace' });
      expect(record.description).toBe('Deposit (sandbox)');
    });

    it('credits nothing for a request that failed after its bank reported the arrival: the worker never applies it, and a retry with the key credits once', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Flaky', currency: 'EUR' });
      const key = randomUUID();
      const send = () => t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${account.id}/deposits`, key: alice.key, csrf: true, headers: { 'idempotency-key': key }, body: { amount: 30 } });
      // The connection is lost as the credit is written: the request fails, its event already written.
      const restore = failNextMoneyPlan(t.storage);
      try {
        expect((await send()).statusCode).toBeGreaterThanOrEqual(500);
      } finally {
        restore();
      }
      t.clock.advance(providerEventLeaseMs + 1);
      await applyDue();
      expect(await fiatBalance(t, alice, account.id)).toBe(0);
      const retried = await send();
      expect(retried.statusCode, retried.body).toBe(201);
      expect(await fiatBalance(t, alice, account.id)).toBe(30);
      await applyDue();
      expect(await fiatBalance(t, alice, account.id)).toBe(30);
      const events = await t.storage.db.selectFrom('provider_events').selectAll().where('event_type', '=', 'deposit.received').where('payload', 'like', `%${account.fr_account_id as string}%`).orderBy('id').execute();
      expect(events.map((event) => [event.state, event.error_code])).toEqual([['failed', 'INTERNAL_ERROR'], ['applied', null]]);
    });

    it('keeps the event its request\'s while the request runs, however long: the worker does not apply it meanwhile', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Slow', currency: 'EUR' });
      const plans = holdMoneyPlans(t.storage);
      try {
        const pending = depositRequest(t, alice, account.id, { amount: 15 });
        const held = await plans.arrived();
        // Far past any lease a reporter holds: were the event the worker's to take now, it would credit it too.
        t.clock.advance(providerEventLeaseMs * 10);
        plans.stop();
        expect(await applyDue()).toBe(0);
        held.release();
        const response = await pending;
        expect(response.statusCode, response.body).toBe(201);
      } finally {
        plans.stop();
      }
      expect(await fiatBalance(t, alice, account.id)).toBe(15);
    });

    it('credits the account its bank names once, however often the event is written, through the worker', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Bank-fed', currency: 'EUR' });
      const event = arrival({ account: account.fr_account_id, amount: '250.10', currency: 'EUR', reference: 'Invoice 9', counterpartyName: 'Grace Hopper' });
      await t.app.providerEvents.record(event);
      await t.app.providerEvents.record(event);
      expect(await applyDue()).toBe(1);
      expect(await applyDue()).toBe(0);
      expect(await fiatBalance(t, alice, account.id)).toBe(250.1);
      const [line, ...others] = await linesOf(account.id);
      expect(others).toEqual([]);
      expect(line).toMatchObject({
        fr_transaction_id: event.reference,
        transaction_type: 'deposit',
        direction: 'incoming',
        status: 'completed',
        amount: 250.1,
        reference: 'Invoice 9',
        counterparty_name: 'Grace Hopper',
        description: 'Deposit (test-bank)',
      });
      expect((await eventsOf(event.reference)).map((row) => row.state)).toEqual(['applied']);
      const balanceEvents = (await outboxEvents(t, alice.id)).filter((outbox) => outbox.type === 'fiat_account.balance_updated' && outbox.data.id === account.id);
      expect(balanceEvents).toHaveLength(1);
    });

    it('credits a virtual account and its master when its bank names the virtual account', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'Bank master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      await t.app.providerEvents.record(arrival({ account: virtual.fr_virtual_account_id, amount: '40', currency: 'EUR' }));
      expect(await applyDue()).toBe(1);
      expect(await virtualBalance(t, alice, virtual.id)).toBe(40);
      expect(await fiatBalance(t, alice, master.id)).toBe(40);
    });

    it('refuses money for a closed account, an unknown account, another currency or a bad amount: the event is left failed and nothing moves', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Closing', currency: 'EUR' });
      const closed = await t.request({ method: 'POST', url: `/sandbox/fiat-accounts/${account.id}/status`, key: alice.key, csrf: true, body: { status: 'closed' } });
      expect(closed.statusCode, closed.body).toBe(200);
      const before = await moneySnapshot(t, alice.id);
      const refused = [
        [arrival({ account: account.fr_account_id, amount: '10', currency: 'EUR' }), 'ACCOUNT_NOT_ACTIVE'],
        [arrival({ account: 'facc_unknown', amount: '10', currency: 'EUR' }), 'NOT_FOUND'],
        [arrival({ account: eur.fr_account_id, amount: '10', currency: 'USD' }), 'VALIDATION_ERROR'],
        [arrival({ account: eur.fr_account_id, amount: '10.001', currency: 'EUR' }), 'VALIDATION_ERROR'],
        [arrival({ account: eur.fr_account_id, amount: '0', currency: 'EUR' }), 'VALIDATION_ERROR'],
      ] as const;
      for (const [event] of refused) await t.app.providerEvents.record(event);
      expect(await applyDue()).toBe(refused.length);
      for (const [event, code] of refused) expect(await eventsOf(event.reference), code).toMatchObject([{ state: 'failed', error_code: code }]);
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
    });
  });

  it('leaves a ledger that verifies', async () => {
    const report = await verifyLedger(t.storage);
    expect(report.problems).toEqual([]);
    expect(report.ok).toBe(true);
  });
});
