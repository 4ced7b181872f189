import { afterAll, beforeAll, expect } from 'vitest';
import { verifyLedger } from '../../src/ledger/verify.js';
import { createFiatAccount } from './fixtures.js';
import { deposit, pay } from './money.js';
import { createTestApp, type TestApp, type TestCustomer } from './test-app.js';

/** What the provider events tests work with: an app, a customer with two EUR accounts (`from` funded), payments. */
export interface ProviderEventsSetup {
  t: TestApp;
  alice: TestCustomer;
  from: { id: string };
  to: { id: string };
  /** One pass of the named worker. */
  runWorker: (name: string) => Promise<number>;
  /** One pass of the worker `provider-events`. */
  applyDue: () => Promise<number>;
  /** GET /payments/{id}, as alice. */
  paymentOf: (id: string) => Promise<Record<string, unknown>>;
  /** A pending payment of `amount` EUR from `from` to `to`. */
  newPayment: (reference: string, amount?: number) => ReturnType<typeof pay>;
}

/**
 * Registers the setup the provider events tests share (the inbox's, the HTTP adapter's): before all, an app with `env`
 * (read then: it may name a provider double started by an earlier hook) and a customer whose `from` account holds
 * 1000 EUR; after all, a ledger with no problems, and the app closed. The fields are there once the hooks have run.
 */
export function providerEventsSetup(env: () => Record<string, string>): ProviderEventsSetup {
  const setup = {
    runWorker: (name: string) => setup.t.app.workers.find((worker) => worker.name === name)!.runOnce(),
    applyDue: () => setup.runWorker('provider-events'),
    paymentOf: async (id: string) => (await setup.t.request({ url: `/payments/${id}`, key: setup.alice.key })).json<{ data: Record<string, unknown> }>().data,
    newPayment: (reference: string, amount = 10) => pay(setup.t, setup.alice, { fromAccountId: setup.from.id, toAccountId: setup.to.id, amount, currency: 'EUR', reference }),
  } as ProviderEventsSetup;

  beforeAll(async () => {
    setup.t = await createTestApp({ env: env() });
    setup.alice = await setup.t.createCustomer('Alice Ltd');
    setup.from = await createFiatAccount(setup.t, setup.alice, { accountName: 'From', currency: 'EUR' });
    setup.to = await createFiatAccount(setup.t, setup.alice, { accountName: 'To', currency: 'EUR' });
    await deposit(setup.t, setup.alice, setup.from.id, 1000);
  });
  afterAll(async () => {
    expect((await verifyLedger(setup.t.storage)).problems).toEqual([]);
    await setup.t.close();
  });
  return setup;
}
