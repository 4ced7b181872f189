import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountStatusCacheTtlMs } from '../../src/config/limits.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import {
  createPayee,
  createVirtualAccount,
  deposit,
  depositRequest,
  failingPaths,
  moneySnapshot,
  outboxEvents,
  pay,
  payRequest,
  timestampPattern,
} from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const unknownId = '5e2d7c1a-9b3f-4a6e-8d0c-1f2a3b4c5d6e';

type Resource = 'fiat-accounts' | 'virtual-accounts' | 'payees';

/**
 * The sandbox simulation of status changes the provider makes (docs/payments.md "Account and payee status"):
 * POST /sandbox/{fiat-accounts,virtual-accounts,payees}/{id}/status, their status_updated events, and what a status
 * means for payments and deposits.
 */
describe('sandbox status changes', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;

  const setStatus = (customer: TestCustomer | { key: string }, resource: Resource, id: string, body: unknown) =>
    t.request({ method: 'POST', url: `/sandbox/${resource}/${id}/status`, key: customer.key, csrf: true, body });

  async function setStatusOk(customer: TestCustomer, resource: Resource, id: string, status: string) {
    const response = await setStatus(customer, resource, id, { status });
    if (response.statusCode !== 200) throw new Error(`status answered ${response.statusCode}: ${response.body}`);
    return response.json().data as Record<string, any>;
  }

  const eventsOf = async (customer: TestCustomer, type: string) => (await outboxEvents(t, customer.id)).filter((event) => event.type === type);

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
  });
  afterAll(async () => t.close());

  describe('POST /sandbox/fiat-accounts/{id}/status', () => {
    it('answers 200 with the updated record as GET presents it, and writes fiat_account.status_updated with that record', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Freezable', currency: 'EUR' });
      await deposit(t, alice, account.id, 12.5);
      t.clock.advance(60_000);
      const before = (await outboxEvents(t, alice.id)).length;

      const response = await setStatus(alice, 'fiat-accounts', account.id, { status: 'frozen' });
      expect(response.statusCode).toBe(200);
      expect(Object.keys(response.json())).toEqual(['data']);
      const record = response.json().data;
      expect(Object.keys(record).sort()).toEqual(Object.keys(account).sort());
      expect(record).toEqual({ ...account, balance: 12.5, status: 'frozen', updated_at: t.clock.now().toISOString() });
      expect(record.updated_at).toMatch(timestampPattern);
      expect(record.updated_at).not.toBe(record.created_at);

      const fetched = await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key });
      expect(fetched.json().data).toEqual(record);

      const events = (await outboxEvents(t, alice.id)).slice(before);
      expect(events.map((event) => event.type)).toEqual(['fiat_account.status_updated']);
      expect(events[0]!.data).toEqual(record);
      const row = await t.storage.db.selectFrom('outbox_events').selectAll().where('customer_id', '=', alice.id).where('event_type', '=', 'fiat_account.status_updated').executeTakeFirstOrThrow();
      expect(row.created_at).toBe(t.clock.now().toISOString());
      expect(row.published_at).toBeNull();
      expect(JSON.parse(row.payload)).toMatchObject({ id: row.id, type: 'fiat_account.status_updated', created_at: row.created_at, data: record });
    });

    it('takes the status in any case and goes back and forth between active and frozen, one event each time', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Toggle', currency: 'GBP', ibanCountry: 'GB' });
      expect((await setStatusOk(alice, 'fiat-accounts', account.id, 'FROZEN')).status).toBe('frozen');
      expect((await setStatusOk(alice, 'fiat-accounts', account.id, 'Active')).status).toBe('active');
      const events = (await eventsOf(alice, 'fiat_account.status_updated')).filter((event) => event.data.id === account.id);
      expect(events.map((event) => event.data.status)).toEqual(['frozen', 'active']);
    });

    it('answers 200 and writes no event when the account already has the status', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Unchanged', currency: 'EUR' });
      const before = await outboxEvents(t, alice.id);
      t.clock.advance(1000);
      const same = await setStatus(alice, 'fiat-accounts', account.id, { status: 'active' });
      expect(same.statusCode).toBe(200);
      // Nothing changed, updated_at included.
      expect(same.json().data).toEqual(account);
      expect(await outboxEvents(t, alice.id)).toEqual(before);

      await setStatusOk(alice, 'fiat-accounts', account.id, 'frozen');
      const frozen = await outboxEvents(t, alice.id);
      expect((await setStatus(alice, 'fiat-accounts', account.id, { status: 'frozen' })).statusCode).toBe(200);
      expect(await outboxEvents(t, alice.id)).toEqual(frozen);
    });

    it('never reopens a closed account: 422 INVALID_STATUS_TRANSITION, nothing written; closing it again answers 200', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Closing', currency: 'EUR' });
      await setStatusOk(alice, 'fiat-accounts', account.id, 'frozen');
      const closed = await setStatusOk(alice, 'fiat-accounts', account.id, 'closed');
      expect(closed.status).toBe('closed');
      const before = await outboxEvents(t, alice.id);
      t.clock.advance(1000);
      for (const status of ['active', 'frozen']) {
        const refused = await setStatus(alice, 'fiat-accounts', account.id, { status });
        expect(refused.statusCode).toBe(422);
        expect(refused.json().error).toMatchObject({ code: 'INVALID_STATUS_TRANSITION', details: { from: 'closed', to: status } });
      }
      const again = await setStatus(alice, 'fiat-accounts', account.id, { status: 'closed' });
      expect(again.statusCode).toBe(200);
      expect(again.json().data).toEqual(closed);
      expect(await outboxEvents(t, alice.id)).toEqual(before);
      expect((await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data.status).toBe('closed');
    });

    it('answers 404 for another customer’s account exactly as for an unknown id, and changes nothing', async () => {
      const bobs = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
      const bobsEvents = await outboxEvents(t, bob.id);
      const foreign = await setStatus(alice, 'fiat-accounts', bobs.id, { status: 'frozen' });
      const unknown = await setStatus(alice, 'fiat-accounts', unknownId, { status: 'frozen' });
      expect(foreign.statusCode).toBe(404);
      expect(unknown.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect(foreign.json().error.code).toBe('NOT_FOUND');
      expect((await t.request({ url: `/fiat-accounts/${bobs.id}`, key: bob.key })).json().data.status).toBe('active');
      expect(await outboxEvents(t, bob.id)).toEqual(bobsEvents);
      // A virtual account's id is not a fiat account's.
      const master = await createFiatAccount(t, alice, { accountName: 'Master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      expect((await setStatus(alice, 'fiat-accounts', virtual.id, { status: 'frozen' })).statusCode).toBe(404);
    });

    it.each([
      ['an unknown status', { status: 'open' }, '/status'],
      ['a payee status', { status: 'inactive' }, '/status'],
      ['no status', {}, '/status'],
      ['a number', { status: 1 }, '/status'],
      ['an unknown field', { status: 'frozen', reason: 'x' }, '/reason'],
    ])('refuses %s with 400 and changes nothing', async (_name, body, path) => {
      const account = await createFiatAccount(t, alice, { accountName: 'Validated', currency: 'EUR' });
      const before = await outboxEvents(t, alice.id);
      const response = await setStatus(alice, 'fiat-accounts', account.id, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(failingPaths(response)).toContain(path);
      expect(await outboxEvents(t, alice.id)).toEqual(before);
      expect((await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data.status).toBe('active');
    });

    it('refuses an id that is not a UUID with 400', async () => {
      const response = await setStatus(alice, 'fiat-accounts', 'not-a-uuid', { status: 'frozen' });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.fields[0]).toMatchObject({ location: 'params', path: '/id' });
    });

    it('needs a key, a CSRF token and the fiat-accounts:write scope', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Guarded', currency: 'EUR' });
      const url = `/sandbox/fiat-accounts/${account.id}/status`;
      expect((await t.request({ method: 'POST', url, body: { status: 'frozen' } })).statusCode).toBe(401);
      const noCsrf = await t.request({ method: 'POST', url, key: alice.key, body: { status: 'frozen' } });
      expect(noCsrf.statusCode).toBe(403);
      expect(noCsrf.json().error.code).toBe('CSRF_TOKEN_INVALID');
      for (const scope of ['fiat-accounts:read', 'virtual-accounts:write']) {
        const key = await t.createKey(alice.id, { scopes: [scope] });
        const refused = await setStatus(key, 'fiat-accounts', account.id, { status: 'frozen' });
        expect(refused.statusCode).toBe(403);
        expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'fiat-accounts:write' } });
      }
      expect((await t.request({ url: `/fiat-accounts/${account.id}`, key: alice.key })).json().data.status).toBe('active');
      const writer = await t.createKey(alice.id, { scopes: ['fiat-accounts:write'] });
      expect((await setStatus(writer, 'fiat-accounts', account.id, { status: 'frozen' })).statusCode).toBe(200);
    });
  });

  describe('POST /sandbox/virtual-accounts/{id}/status', () => {
    it('answers 200 with the updated record and writes virtual_account.status_updated; the master is untouched', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'VA master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      t.clock.advance(60_000);
      const before = (await outboxEvents(t, alice.id)).length;

      const response = await setStatus(alice, 'virtual-accounts', virtual.id, { status: 'Frozen' });
      expect(response.statusCode).toBe(200);
      const record = response.json().data;
      expect(record).toEqual({ ...virtual, status: 'frozen', updated_at: t.clock.now().toISOString() });
      expect((await t.request({ url: `/virtual-accounts/${virtual.id}`, key: alice.key })).json().data).toEqual(record);
      const events = (await outboxEvents(t, alice.id)).slice(before);
      expect(events).toEqual([{ id: expect.any(String), type: 'virtual_account.status_updated', created_at: t.clock.now().toISOString(), data: record }]);
      expect((await t.request({ url: `/fiat-accounts/${master.id}`, key: alice.key })).json().data.status).toBe('active');

      // Unchanged: 200, no event.
      const unchanged = await setStatus(alice, 'virtual-accounts', virtual.id, { status: 'frozen' });
      expect(unchanged.statusCode).toBe(200);
      expect((await outboxEvents(t, alice.id)).slice(before)).toHaveLength(1);
    });

    it('never reopens a closed virtual account', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'VA master 2', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      await setStatusOk(alice, 'virtual-accounts', virtual.id, 'closed');
      const before = await outboxEvents(t, alice.id);
      const refused = await setStatus(alice, 'virtual-accounts', virtual.id, { status: 'active' });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'INVALID_STATUS_TRANSITION', details: { from: 'closed', to: 'active' } });
      expect((await setStatus(alice, 'virtual-accounts', virtual.id, { status: 'closed' })).statusCode).toBe(200);
      expect(await outboxEvents(t, alice.id)).toEqual(before);
    });

    it('answers 404 for another customer’s virtual account as for an unknown one, 400 for a bad status, 403 without the scope', async () => {
      const bobsMaster = await createFiatAccount(t, bob, { accountName: 'Bob master', currency: 'EUR' });
      const bobsVirtual = await createVirtualAccount(t, bob, bobsMaster.id);
      const foreign = await setStatus(alice, 'virtual-accounts', bobsVirtual.id, { status: 'frozen' });
      const unknown = await setStatus(alice, 'virtual-accounts', unknownId, { status: 'frozen' });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect((await t.request({ url: `/virtual-accounts/${bobsVirtual.id}`, key: bob.key })).json().data.status).toBe('active');
      // A fiat account's id is not a virtual account's.
      expect((await setStatus(bob, 'virtual-accounts', bobsMaster.id, { status: 'frozen' })).statusCode).toBe(404);

      const bad = await setStatus(bob, 'virtual-accounts', bobsVirtual.id, { status: 'inactive' });
      expect(bad.statusCode).toBe(400);
      expect(failingPaths(bad)).toEqual(['/status']);

      for (const scope of ['virtual-accounts:read', 'fiat-accounts:write']) {
        const key = await t.createKey(bob.id, { scopes: [scope] });
        const refused = await setStatus(key, 'virtual-accounts', bobsVirtual.id, { status: 'frozen' });
        expect(refused.statusCode).toBe(403);
        expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'virtual-accounts:write' } });
      }
      expect((await t.request({ url: `/virtual-accounts/${bobsVirtual.id}`, key: bob.key })).json().data.status).toBe('active');
    });
  });

  describe('POST /sandbox/payees/{id}/status', () => {
    it('deactivates and reactivates a payee, answering the record and writing payee.status_updated each time', async () => {
      const payee = await createPayee(t, alice);
      t.clock.advance(60_000);
      const before = (await outboxEvents(t, alice.id)).length;

      const inactive = await setStatus(alice, 'payees', payee.id, { status: 'INACTIVE' });
      expect(inactive.statusCode).toBe(200);
      const record = inactive.json().data;
      expect(record).toEqual({ ...payee, status: 'inactive', updated_at: t.clock.now().toISOString() });
      expect((await t.request({ url: `/payees/${payee.id}`, key: alice.key })).json().data).toEqual(record);

      t.clock.advance(1000);
      const active = await setStatusOk(alice, 'payees', payee.id, 'active');
      expect(active).toEqual({ ...payee, status: 'active', updated_at: t.clock.now().toISOString() });

      const events = (await outboxEvents(t, alice.id)).slice(before);
      expect(events.map((event) => event.type)).toEqual(['payee.status_updated', 'payee.status_updated']);
      expect(events.map((event) => event.data)).toEqual([record, active]);

      // Unchanged: 200, no event.
      expect((await setStatus(alice, 'payees', payee.id, { status: 'active' })).statusCode).toBe(200);
      expect((await outboxEvents(t, alice.id)).slice(before)).toHaveLength(2);
    });

    it('answers 404 for another customer’s payee as for an unknown one, 400 for a bad status, 403 without payees:write', async () => {
      const bobsPayee = await createPayee(t, bob, 'GBP');
      const foreign = await setStatus(alice, 'payees', bobsPayee.id, { status: 'inactive' });
      const unknown = await setStatus(alice, 'payees', unknownId, { status: 'inactive' });
      expect(foreign.statusCode).toBe(404);
      expect(foreign.json()).toEqual(unknown.json());
      expect((await t.request({ url: `/payees/${bobsPayee.id}`, key: bob.key })).json().data.status).toBe('active');

      for (const status of ['frozen', 'closed', '']) {
        const bad = await setStatus(bob, 'payees', bobsPayee.id, { status });
        expect(bad.statusCode).toBe(400);
        expect(failingPaths(bad)).toContain('/status');
      }

      const reader = await t.createKey(bob.id, { scopes: ['payees:read'] });
      const refused = await setStatus(reader, 'payees', bobsPayee.id, { status: 'inactive' });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().error).toMatchObject({ code: 'INSUFFICIENT_SCOPE', details: { required_scope: 'payees:write' } });
      expect((await t.request({ url: `/payees/${bobsPayee.id}`, key: bob.key })).json().data.status).toBe('active');
    });
  });

  describe('what a status means', () => {
    const payment = (from: string, target: Record<string, string>, amount = 10) => ({ fromAccountId: from, amount, currency: 'EUR', reference: 'status test', ...target });

    it('refuses a payment from a frozen fiat account with 422 ACCOUNT_NOT_ACTIVE and writes nothing; thawed, it pays', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Frozen payer', currency: 'EUR' });
      const payee = await createPayee(t, alice);
      await deposit(t, alice, account.id, 100);
      // A payment first, so that the account is in the cache when it is frozen.
      await pay(t, alice, payment(account.id, { payeeId: payee.id }));
      await setStatusOk(alice, 'fiat-accounts', account.id, 'frozen');

      const before = await moneySnapshot(t, alice.id);
      const refused = await payRequest(t, alice, payment(account.id, { payeeId: payee.id }));
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: account.id, status: 'frozen' } });
      expect(refused.json().error.message).toContain('frozen');
      expect(await moneySnapshot(t, alice.id)).toEqual(before);

      await setStatusOk(alice, 'fiat-accounts', account.id, 'active');
      expect((await payRequest(t, alice, payment(account.id, { payeeId: payee.id }))).statusCode).toBe(201);
    });

    it('sees a status changed by another instance once the cached status has expired', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Elsewhere', currency: 'EUR' });
      const payee = await createPayee(t, alice);
      await deposit(t, alice, account.id, 100);
      await pay(t, alice, payment(account.id, { payeeId: payee.id }));
      // As another instance (or the provider's notification handled there) would: straight in the database.
      await t.storage.db.updateTable('fiat_accounts').set({ status: 'frozen' }).where('id', '=', account.id).execute();
      await t.storage.db.updateTable('payees').set({ status: 'inactive' }).where('id', '=', payee.id).execute();
      t.clock.advance(accountStatusCacheTtlMs);
      const refused = await payRequest(t, alice, payment(account.id, { payeeId: payee.id }));
      expect(refused.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: account.id, status: 'frozen' } });
      await setStatusOk(alice, 'fiat-accounts', account.id, 'active');
      const toPayee = await payRequest(t, alice, payment(account.id, { payeeId: payee.id }));
      expect(toPayee.json().error).toMatchObject({ code: 'PAYEE_NOT_ACTIVE', details: { payee_id: payee.id, status: 'inactive' } });
    });

    it('refuses a payment to an inactive payee with 422 PAYEE_NOT_ACTIVE and writes nothing; reactivated, it pays', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Payer', currency: 'EUR' });
      const payee = await createPayee(t, alice);
      await deposit(t, alice, account.id, 100);
      await pay(t, alice, payment(account.id, { payeeId: payee.id }));
      await setStatusOk(alice, 'payees', payee.id, 'inactive');

      const before = await moneySnapshot(t, alice.id);
      const refused = await payRequest(t, alice, payment(account.id, { payeeId: payee.id }));
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'PAYEE_NOT_ACTIVE', details: { payee_id: payee.id, status: 'inactive' } });
      expect(await moneySnapshot(t, alice.id)).toEqual(before);

      // The fee preview only prices the payment: it does not look at the payee's status.
      const preview = await t.request({ method: 'POST', url: '/fees/preview', key: alice.key, csrf: true, body: { amount: 10, currency: 'EUR', payeeId: payee.id } });
      expect(preview.statusCode).toBe(200);

      await setStatusOk(alice, 'payees', payee.id, 'active');
      expect((await payRequest(t, alice, payment(account.id, { payeeId: payee.id }))).statusCode).toBe(201);
    });

    it('refuses payments from a frozen or closed virtual account, and from a virtual account whose master is frozen', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'Pay master', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, master.id);
      const payee = await createPayee(t, alice);
      await deposit(t, alice, virtual.id, 100);
      await pay(t, alice, payment(virtual.id, { payeeId: payee.id }));

      await setStatusOk(alice, 'fiat-accounts', master.id, 'frozen');
      let before = await moneySnapshot(t, alice.id);
      const masterFrozen = await payRequest(t, alice, payment(virtual.id, { payeeId: payee.id }));
      expect(masterFrozen.statusCode).toBe(422);
      expect(masterFrozen.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: master.id, status: 'frozen' } });
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
      await setStatusOk(alice, 'fiat-accounts', master.id, 'active');
      expect((await payRequest(t, alice, payment(virtual.id, { payeeId: payee.id }))).statusCode).toBe(201);

      for (const status of ['frozen', 'closed']) {
        await setStatusOk(alice, 'virtual-accounts', virtual.id, status);
        before = await moneySnapshot(t, alice.id);
        const refused = await payRequest(t, alice, payment(virtual.id, { payeeId: payee.id }));
        expect(refused.statusCode).toBe(422);
        expect(refused.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: virtual.id, status } });
        expect(await moneySnapshot(t, alice.id)).toEqual(before);
      }
    });

    it('lets a frozen account receive a transfer between own accounts, and refuses one to a closed account', async () => {
      const from = await createFiatAccount(t, alice, { accountName: 'Source', currency: 'EUR' });
      const to = await createFiatAccount(t, alice, { accountName: 'Target', currency: 'EUR' });
      await deposit(t, alice, from.id, 100);
      await setStatusOk(alice, 'fiat-accounts', to.id, 'frozen');
      expect((await payRequest(t, alice, payment(from.id, { toAccountId: to.id }))).statusCode).toBe(201);

      await setStatusOk(alice, 'fiat-accounts', to.id, 'closed');
      const before = await moneySnapshot(t, alice.id);
      const refused = await payRequest(t, alice, payment(from.id, { toAccountId: to.id }));
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: to.id, status: 'closed' } });
      expect(await moneySnapshot(t, alice.id)).toEqual(before);
    });

    it('answers 404, not 422, for another customer’s frozen account or inactive payee', async () => {
      const bobsAccount = await createFiatAccount(t, bob, { accountName: 'Bob frozen', currency: 'EUR' });
      const bobsPayee = await createPayee(t, bob);
      await setStatusOk(bob, 'fiat-accounts', bobsAccount.id, 'frozen');
      await setStatusOk(bob, 'payees', bobsPayee.id, 'inactive');
      const mine = await createFiatAccount(t, alice, { accountName: 'Mine', currency: 'EUR' });
      const myPayee = await createPayee(t, alice);
      expect((await payRequest(t, alice, payment(bobsAccount.id, { payeeId: myPayee.id }))).statusCode).toBe(404);
      expect((await payRequest(t, alice, payment(mine.id, { payeeId: bobsPayee.id }))).statusCode).toBe(404);
    });

    it('credits a frozen account with a sandbox deposit, and refuses one into a closed account (or its virtual accounts) with 422', async () => {
      const account = await createFiatAccount(t, alice, { accountName: 'Deposits', currency: 'EUR' });
      const virtual = await createVirtualAccount(t, alice, account.id);
      await setStatusOk(alice, 'fiat-accounts', account.id, 'frozen');
      expect((await depositRequest(t, alice, account.id, { amount: 5 })).statusCode).toBe(201);
      expect((await depositRequest(t, alice, virtual.id, { amount: 5 })).statusCode).toBe(201);

      await setStatusOk(alice, 'fiat-accounts', account.id, 'closed');
      const before = await moneySnapshot(t, alice.id);
      const refused = await depositRequest(t, alice, account.id, { amount: 5 });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: account.id, status: 'closed' } });
      const intoVirtual = await depositRequest(t, alice, virtual.id, { amount: 5 });
      expect(intoVirtual.statusCode).toBe(422);
      expect(intoVirtual.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: account.id, status: 'closed' } });
      expect(await moneySnapshot(t, alice.id)).toEqual(before);

      const closedVirtual = await createVirtualAccount(t, alice, (await createFiatAccount(t, alice, { accountName: 'Open master', currency: 'EUR' })).id);
      await setStatusOk(alice, 'virtual-accounts', closedVirtual.id, 'closed');
      const refusedVirtual = await depositRequest(t, alice, closedVirtual.id, { amount: 5 });
      expect(refusedVirtual.statusCode).toBe(422);
      expect(refusedVirtual.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: closedVirtual.id, status: 'closed' } });
    });

    it('refuses a new virtual account under a closed master with 422 ACCOUNT_NOT_ACTIVE', async () => {
      const master = await createFiatAccount(t, alice, { accountName: 'Closed master', currency: 'EUR' });
      await setStatusOk(alice, 'fiat-accounts', master.id, 'closed');
      const refused = await t.request({
        method: 'POST',
        url: '/virtual-accounts',
        key: alice.key,
        csrf: true,
        body: { accountName: 'Too late', masterFiatAccountId: master.id, currency: 'EUR' },
      });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'ACCOUNT_NOT_ACTIVE', details: { account_id: master.id, status: 'closed' } });
    });
  });
});

describe('sandbox status endpoints in production', () => {
  it('are not served', async () => {
    const t = await createTestApp({ env: { API_ENVIRONMENT: 'production' }, providers: sandboxProviders() });
    try {
      const customer = await t.createCustomer();
      for (const resource of ['fiat-accounts', 'virtual-accounts', 'payees']) {
        const response = await t.request({ method: 'POST', url: `/sandbox/${resource}/${unknownId}/status`, key: customer.key, csrf: true, body: { status: 'active' } });
        expect(response.statusCode).toBe(404);
        expect(response.json().error.code).toBe('ROUTE_NOT_FOUND');
      }
    } finally {
      await t.close();
    }
  });
});
