import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PollingWorker } from '../../src/workers/polling-worker.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

const minute = 60_000;
const day = 24 * 60 * minute;

/**
 * The one reaper (docs/operations.md "Retention"): what expires is deleted by one claimed, batched worker, and what
 * is inside its retention is left as it was. Time moves on the app's clock; each check runs the worker once.
 */
describe('retention', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let reaper: PollingWorker;

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    reaper = t.app.workers.find((worker) => worker.name === 'reaper')!;
  });
  afterAll(async () => {
    await t.close();
  });

  describe('provider operations', () => {
    it('deletes an operation 30 days after it finished, and not before', async () => {
      const since = t.clock.now().toISOString();
      const finishedSince = async () =>
        Number((await t.storage.db.selectFrom('provider_operations').select((eb) => eb.fn.countAll().as('count')).where('updated_at', '>=', since).where('status', '=', 'done').executeTakeFirstOrThrow()).count);
      await createFiatAccount(t, alice, { accountName: 'Operations', currency: 'EUR' });
      const finished = await finishedSince();
      expect(finished).toBeGreaterThan(0);
      t.clock.advance(30 * day - minute);
      await reaper.runOnce();
      expect(await finishedSince()).toBe(finished);
      t.clock.advance(2 * minute);
      await reaper.runOnce();
      expect(await finishedSince()).toBe(0);
    });
  });
});
