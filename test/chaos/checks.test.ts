import { describe, expect, it } from 'vitest';

/**
 * The fault harness's invariants (scripts/chaos/checks.mjs) on a run made up here: a consistent one passes every
 * invariant, and each kind of damage a fault could do fails the invariant meant to catch it. The harness runs in CI
 * against real instances (npm run chaos); this proves its checks can fail, without starting anything.
 */
const checksModule = new URL('../../scripts/chaos/checks.mjs', import.meta.url).href;
const { evaluate, everyPage } = (await import(checksModule)) as {
  evaluate: (run: any) => { invariants: Array<{ name: string; ok: boolean; problems: string[] }>; figures: any };
  everyPage: (client: unknown, fixture: unknown, path: string, options?: { pauseMs?: number; pageSize?: number }) => Promise<Array<{ local_id: string }>>;
};

const ids = { source: 'acc-source', target: 'acc-target', wallet: 'wal-1', quote: 'quote-1' };
const t0 = 1_000_000;

/** A small run in which everything the client was told happened exactly once, and nothing else. */
function consistentRun() {
  const exchange = (op: string, at: number, status: number | undefined, failure?: string) => ({ op, instance: 0, queuedAt: at, startedAt: at, endedAt: at + 20, status, failure });
  const keyed = new Map<string, any>([
    ['k-transfer', { kind: 'transfer', key: 'k-transfer', body: { note: 'chaos k-transfer' }, effect: { walletMinor: -10_000n }, answers: [{ status: 201, text: '{"t":1}' }], final: { status: 201, text: '{"t":1}' }, attempts: 1 }],
    ['k-deposit', { kind: 'fiat deposit', key: 'k-deposit', body: { reference: 'chaos-dep k-deposit' }, effect: { sourceMinor: 500n }, answers: [{ status: 201, text: '{"d":1}' }], final: { status: 201, text: '{"d":1}' }, attempts: 1 }],
    ['k-wallet', { kind: 'wallet deposit', key: 'k-wallet', body: { amount: '1.000001' }, effect: { walletMinor: 1_000_001n }, answers: [{ status: 201, text: '{"w":1}' }], final: { status: 201, text: '{"w":1}' }, attempts: 2 }],
    ['k-otc', { kind: 'otc confirm', key: 'k-otc', body: { quoteId: ids.quote }, effect: { sourceMinor: -2000n, walletMinor: 21_000_000n, quoteId: ids.quote }, answers: [{ status: 201, text: '{"o":1}' }], final: { status: 201, text: '{"o":1}' }, attempts: 1 }],
  ]);
  const payments = new Map<string, any>([
    ['pay-1', { reference: 'pay-1', target: 'account', amountMinor: 100n, feeMinor: 0n, status: 201 }],
    ['pay-2', { reference: 'pay-2', target: 'payee', amountMinor: 200n, feeMinor: 20n, status: undefined, failure: 'reset' }],
  ]);
  const received = { events: new Map([['ev-1', 1], ['ev-2', 2]]), deliveries: new Map([['d-1', 1], ['d-2', 2]]), invalid: [] as unknown[] };
  const record = (type: string, direction: string, reference: string, status = 'completed') => ({ transaction_type: type, direction, reference, status });
  return {
    load: {
      // A 503 while the fault is on, and a reset of a request in flight to the instance killed: both allowed.
      client: { exchanges: [exchange('payment', t0 + 100, 201), exchange('transfer', t0 + 2100, 503), exchange('read', t0 + 200, 200), exchange('transfer', t0 + 1990, undefined, 'reset')] },
      keyed,
      payments,
      quotesRefused: [] as unknown[],
      reads: 1,
    },
    fixture: {
      fiat: ids,
      wallet: ids.wallet,
      funding: { sourceMinor: 100_000n, walletMinor: 1_000_000_000n, walletAmount: '1000.000000' },
      webhooks: [{ id: 'hook-1', received }],
    },
    quiesced: {
      ms: 1200,
      waitedFor: {},
      state: {
        transactions: [record('deposit', 'incoming', 'chaos funding'), record('deposit', 'incoming', 'chaos-dep k-deposit'), record('payment', 'outgoing', 'pay-1'), record('payment', 'incoming', 'pay-1')],
        transfers: [
          { direction: 'incoming', amount: '1000.000000', note: null, status: 'completed' },
          { direction: 'outgoing', amount: '0.010000', note: 'chaos k-transfer', status: 'completed' },
          { direction: 'incoming', amount: '1.000001', note: null, status: 'completed' },
          { direction: 'incoming', amount: '21.000000', note: 'OTC order o-1', status: 'completed' },
        ],
        orders: [{ quoteId: ids.quote, status: 'settled' }],
        events: [{ id: 'ev-1', type: 'payment.created' }, { id: 'ev-2', type: 'fiat_account.balance_updated' }],
        pendingDeliveries: 0,
        failedDeliveries: 0,
        // 1000.00 + 5.00 deposit − 20.00 OTC − 1.00 payment
        sourceBalance: '984',
        targetBalance: '1',
        // 1000 + 1.000001 deposit + 21 OTC − 0.01 transfer
        wallet: { balance: '1021.990001', available: '1021.990001' },
      },
    },
    ledger: { ok: true },
    fleet: { crashes: [] as unknown[], restarts: [{ instance: 'instance 1', cause: 'kill -9', readyMs: 900 }], failedStarts: 0, readiness: [] as unknown[] },
    faults: [{ kind: 'kill-9', index: 0, startedAt: t0 + 2000, injectedAt: t0 + 2500, recoveredAt: t0 + 3000 }],
    policy: { allowedStatuses: [503], resetsAllowed: true, latencyBound: false },
    loadStartedAt: t0,
  };
}

const failing = (run: ReturnType<typeof consistentRun>) =>
  evaluate(run)
    .invariants.filter((check) => !check.ok)
    .map((check) => check.name);

describe('fault harness invariants', () => {
  it('a run where every answer matches one effect passes every invariant, and its figures add up', () => {
    const result = evaluate(consistentRun());
    expect(result.invariants.filter((check) => !check.ok)).toEqual([]);
    expect(result.invariants).toHaveLength(10);
    expect(result.figures).toMatchObject({ effects: 5, duplicates: 0, unansweredPayments: 1, unansweredPaymentsCommitted: 0, webhookDuplicateDeliveries: 1, serverErrors: { 503: 1 } });
  });

  it('an unanswered payment found in the history counts as committed in the balances', () => {
    const run = consistentRun();
    run.quiesced.state.transactions.push({ transaction_type: 'payment', direction: 'outgoing', reference: 'pay-2', status: 'completed' });
    expect(failing(run)).toEqual(['balances exact']);
    run.quiesced.state.sourceBalance = '981.8';
    expect(failing(run)).toEqual([]);
    expect(evaluate(run).figures.unansweredPaymentsCommitted).toBe(1);
  });

  const damage: Array<[string, (run: ReturnType<typeof consistentRun>) => void, string[]]> = [
    [
      'a keyed transfer that moved money twice',
      (run) => run.quiesced.state.transfers.push({ direction: 'outgoing', amount: '0.010000', note: 'chaos k-transfer', status: 'completed' }),
      ['keyed retries: one effect, one answer'],
    ],
    [
      'one key answered 201 and, to a late attempt, 422',
      (run) => run.load.keyed.get('k-otc').answers.push({ status: 422, text: '{"error":{"code":"QUOTE_ALREADY_CONFIRMED"}}' }),
      ['keyed retries: one effect, one answer'],
    ],
    [
      'a key refused with 422 whose money moved anyway',
      (run) => Object.assign(run.load.keyed.get('k-deposit'), { final: { status: 422, text: 'refused' }, answers: [{ status: 422, text: 'refused' }] }),
      ['keyed retries: one effect, one answer', 'balances exact'],
    ],
    ['a payment answered 201 that is not in the history', (run) => run.quiesced.state.transactions.splice(2, 1), ['unkeyed payments reconciled', 'balances exact']],
    ['a balance one cent off', (run) => (run.quiesced.state.targetBalance = '1.01'), ['balances exact']],
    ['ledger verify finding a problem', (run) => (run.ledger = { ok: false }), ['ledger verify ok']],
    ['an event never delivered', (run) => run.quiesced.state.events.push({ id: 'ev-3', type: 'payment.completed' }), ['events delivered, signatures valid']],
    ['a delivery with a bad signature', (run) => run.fixture.webhooks[0]!.received.invalid.push({ webhookId: 'd-9', reason: 'No matching signature found' }), ['events delivered, signatures valid']],
    ['a transfer still pending', (run) => (run.quiesced.state.transfers[1]!.status = 'pending'), ['nothing pending after quiesce']],
    ['a 500 during the fault', (run) => (run.load.client.exchanges[1]!.status = 500), ['no 5xx but 503 (507 disk full) in the fault']],
    ['a 503 long after the fault', (run) => (run.load.client.exchanges[2]!.status = 503), ['no 5xx but 503 (507 disk full) in the fault']],
    ['an instance that exited by itself', (run) => run.fleet.crashes.push({ instance: 'instance 2', code: 1, cause: 'error: terminating connection due to administrator command' }), ['no crash, clean exits']],
    ['a request unanswered for 6 s', (run) => (run.load.client.exchanges[2]!.endedAt = t0 + 6200), ['answers in time']],
    ['a reset outside a kill', (run) => Object.assign(run.load.client.exchanges[2]!, { status: undefined, failure: 'reset' }), ['no connection reset']],
    ['a reset of a request to the instance not killed', (run) => Object.assign(run.load.client.exchanges[1]!, { instance: 1, status: undefined, failure: 'reset' }), ['no connection reset']],
  ];
  it.each(damage)('%s fails the invariant that watches for it', (_label, harm, expected) => {
    const run = consistentRun();
    harm(run);
    expect(failing(run)).toEqual(expected);
  });
});

describe('fault harness reads', () => {
  /**
   * A newest-first list served 2 items a page, like GET /wallets/{id}/transfers with offset pages, where an OTC order
   * settles (a new incoming transfer on top) after the first page of the first read: read as it came, the item at the
   * page boundary is listed twice and counts as a second effect of its request.
   */
  it('a list that changes while it is paged through is read again, so no item counts twice', async () => {
    const items = [{ local_id: 'c' }, { local_id: 'b' }, { local_id: 'a' }];
    const seen: string[] = [];
    let inserted = false;
    const client = {
      send: async (_op: string, request: { path: string }) => {
        const query = new URL(request.path, 'http://harness').searchParams;
        const page = Number(query.get('page'));
        const limit = Number(query.get('limit'));
        const data = items.slice((page - 1) * limit, page * limit);
        seen.push(`page ${page}: ${data.map((item) => item.local_id).join('')}`);
        if (!inserted) {
          inserted = true;
          items.unshift({ local_id: 'd' });
        }
        return { status: 200, text: JSON.stringify({ data, meta: { pagination: { total: items.length } } }) };
      },
    };
    const read = await everyPage(client, { apiKey: 'k' }, '/wallets/w/transfers', { pauseMs: 0, pageSize: 2 });
    expect(read.map((item) => item.local_id)).toEqual(['d', 'c', 'b', 'a']);
    // The first read listed b on both of its pages.
    expect(seen.slice(0, 2)).toEqual(['page 1: cb', 'page 2: ba']);
  });
});
