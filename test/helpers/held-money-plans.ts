import type { Storage } from '../../src/storage/database.js';

/** A money plan held before it runs; `release` lets it run. */
interface HeldPlan {
  release(): void;
}

export interface MoneyPlanHold {
  /** The next plan held, in the order they arrived. */
  arrived(): Promise<HeldPlan>;
  /** Lets every held plan run and holds no more. */
  stop(): void;
}

/**
 * Holds every money plan the app executes until the test releases it: where a money operation waits its turn
 * behind the per-customer limit on PostgreSQL (Storage.perCustomer), or behind a busy writer on SQLite (its plan
 * runs in Storage.transaction). A request can so be kept in flight, its key reserved, for as long as a test needs.
 */
export function holdMoneyPlans(storage: Storage): MoneyPlanHold {
  const held: HeldPlan[] = [];
  const waiting: Array<(plan: HeldPlan) => void> = [];
  const releases = new Set<() => void>();
  const hold = () =>
    new Promise<void>((resolve) => {
      releases.add(resolve);
      const plan = { release: () => { releases.delete(resolve); resolve(); } };
      const waiter = waiting.shift();
      if (waiter) waiter(plan);
      else held.push(plan);
    });

  const runPerCustomer = storage.perCustomer.bind(storage);
  const runTransaction = storage.transaction.bind(storage);
  if (storage.dialect === 'postgres') {
    storage.perCustomer = async (customerId, work) => {
      await hold();
      return runPerCustomer(customerId, work);
    };
  } else {
    storage.transaction = async (work) => {
      await hold();
      return runTransaction(work);
    };
  }
  return {
    arrived: () =>
      new Promise<HeldPlan>((resolve) => {
        const plan = held.shift();
        if (plan) resolve(plan);
        else waiting.push(resolve);
      }),
    stop() {
      storage.perCustomer = runPerCustomer;
      storage.transaction = runTransaction;
      for (const release of releases) release();
      releases.clear();
    },
  };
}
