// After each run: wait for the workers to quiesce, read back what the server holds through the API, and hold it
// against the client's book (load.mjs) and what was seen on the wire. Each invariant answers { ok, problems }.
import { readinessIntervalMs } from './instances.mjs';
import { isFinal, parseExact, softTimeoutMs, toMinor, walletAsset } from './load.mjs';

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const pageLimit = 100;
/** Problems listed per invariant (the count is always whole). */
const problemsListedMax = 20;
/** Settings the load runs with that reach the checks: wallet amounts at the asset's scale, payments at EUR's. */
const eurScale = 2;

/** A read that must eventually succeed: after a run every instance should answer again. */
async function get(client, fixture, path) {
  let last;
  for (let attempt = 0; attempt < 40; attempt += 1) {
    last = await client.send('check', { path, headers: { 'x-api-key': fixture.apiKey } });
    if (last.status === 200) return parseExact(last.text);
    await sleep(500);
  }
  throw new Error(`GET ${path} kept failing after the run: ${last.status ?? last.failure} ${last.text?.slice(0, 300) ?? ''}`);
}

/** What identifies an item of a list read back: transactions and events have `id`, wallet transfers `local_id`, OTC orders `orderId`. */
const identityOf = (item) => item.id ?? item.local_id ?? item.orderId ?? JSON.stringify(item);

/** Times a paged list is read again because it changed between its pages, before the checks give up. */
const snapshotAttemptsMax = 20;

/**
 * Every item of a paged list, read while it stood still. The pages are offsets into a newest-first list, so a row
 * written between two pages (an OTC order settling credits the wallet, say) shifts the next page by one: the row at
 * the boundary is listed twice, and would count as a second effect. A read whose total moved or that listed an id
 * twice is read again.
 */
export async function everyPage(client, fixture, path, { pauseMs = readinessIntervalMs, pageSize = pageLimit } = {}) {
  const separator = path.includes('?') ? '&' : '?';
  for (let attempt = 1; ; attempt += 1) {
    const items = [];
    const totals = new Set();
    for (let page = 1; ; page += 1) {
      const body = await get(client, fixture, `${path}${separator}page=${page}&limit=${pageSize}`);
      items.push(...body.data);
      totals.add(String(body.meta.pagination.total));
      if (body.data.length < pageSize || items.length >= Number(body.meta.pagination.total)) break;
    }
    const ids = new Set(items.map(identityOf));
    if (totals.size === 1 && ids.size === items.length) return items;
    if (attempt === snapshotAttemptsMax) throw new Error(`GET ${path} kept changing while it was paged through (${attempt} reads)`);
    process.stdout.write(`  ${path} changed while it was paged through (${items.length - ids.size} listed twice); reading it again\n`);
    await sleep(pauseMs);
  }
}

const total = async (client, fixture, path) => Number((await get(client, fixture, path)).meta.pagination.total);

/** Deliveries in a status, over all the customer's subscriptions. */
async function deliveries(client, fixture, status) {
  let sum = 0;
  for (const webhook of fixture.webhooks) sum += await total(client, fixture, `/webhooks/${webhook.id}/deliveries?status=${status}&limit=1`);
  return sum;
}

/** Every event id the receiver took a validly signed delivery of, over all subscriptions, with its count. */
function deliveredEvents(fixture) {
  const events = new Map();
  for (const webhook of fixture.webhooks) for (const [id, count] of webhook.received.events) events.set(id, (events.get(id) ?? 0) + count);
  return events;
}

/**
 * Everything the checks compare, read through the API. Payments are reconciled the way the API documents for a
 * client today (docs/payments.md): by their unique reference in GET /transactions, paged through and matched here.
 * A `reference` filter on GET /transactions (and reference and created-after filters on GET /payments) is on its
 * way; one call per unanswered payment will then do.
 */
async function readState(client, fixture) {
  return {
    transactions: await everyPage(client, fixture, '/transactions'),
    transfers: await everyPage(client, fixture, `/wallets/${fixture.wallet}/transfers`),
    orders: await everyPage(client, fixture, '/otc-exchanges/orders'),
    events: await everyPage(client, fixture, '/events'),
    pendingDeliveries: await deliveries(client, fixture, 'pending'),
    failedDeliveries: await deliveries(client, fixture, 'failed'),
    sourceBalance: (await get(client, fixture, `/fiat-accounts/${fixture.fiat.source}`)).data.balance,
    targetBalance: (await get(client, fixture, `/fiat-accounts/${fixture.fiat.target}`)).data.balance,
    wallet: (await get(client, fixture, `/otc-exchanges/wallets/${fixture.wallet}/balance?asset=${walletAsset.asset}`)).data,
  };
}

function pendingIn(state) {
  return {
    'transaction records': state.transactions.filter((record) => record.status === 'pending').length,
    'wallet transfers': state.transfers.filter((transfer) => transfer.status === 'pending').length,
    'OTC orders': state.orders.filter((order) => order.status !== 'settled' && order.status !== 'failed').length,
    'webhook deliveries': state.pendingDeliveries,
  };
}

/**
 * Waits until nothing is pending (payments and OTC records, wallet transfers, OTC orders, webhook deliveries) and
 * the receiver has every event, or `timeoutMs` passes; answers how long it took and the state read last.
 */
export async function quiesce(client, fixture, timeoutMs) {
  const startedAt = Date.now();
  /** What was still awaited at the last look before all was quiet: says where a long wait went. */
  let lastWaitedFor = {};
  for (;;) {
    const waitingFor = {
      'transaction records': await total(client, fixture, '/transactions?status=pending&limit=1'),
      'webhook deliveries': await deliveries(client, fixture, 'pending'),
      'undelivered events': Math.max(0, (await total(client, fixture, '/events?limit=1')) - deliveredEvents(fixture).size),
    };
    let cheap = Object.values(waitingFor).every((count) => count === 0);
    const late = Date.now() - startedAt > timeoutMs;
    if (cheap || late) {
      const state = await readState(client, fixture);
      const pending = pendingIn(state);
      if (Object.values(pending).some((count) => count > 0)) {
        cheap = false;
        Object.assign(waitingFor, pending);
      }
      if (cheap || late) return { ms: Date.now() - startedAt, state, quiet: cheap, waitedFor: cheap ? lastWaitedFor : waitingFor };
    }
    lastWaitedFor = Object.fromEntries(Object.entries(waitingFor).filter(([, count]) => count > 0));
    await sleep(500);
  }
}

function invariant(name, problems) {
  return { name, ok: problems.length === 0, problemCount: problems.length, problems: problems.slice(0, problemsListedMax) };
}

function countBy(items, keyOf) {
  const counts = new Map();
  for (const item of items) {
    const key = keyOf(item);
    if (key !== undefined) counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

function percentile(values, fraction) {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
}

function latency(exchanges) {
  const durations = exchanges.map((exchange) => exchange.endedAt - exchange.queuedAt);
  return { count: durations.length, p50Ms: percentile(durations, 0.5), p99Ms: percentile(durations, 0.99) };
}

/** A fault is still in effect this long after every instance answers /ready again (pools refilling, say). */
const faultGraceMs = 2000;
const overlaps = (exchange, window) => exchange.startedAt <= window.end && exchange.endedAt >= window.start;

/**
 * The invariants and the figures of one run.
 * - `faults`: what was injected, each { kind, startedAt, injectedAt (end of the injection), recoveredAt, index (of
 *   the instance signalled), exit }, the last two where they apply.
 * - `policy`: { allowedStatuses: 5xx statuses allowed while a fault is in effect, resetsAllowed, latencyBound }.
 */
export function evaluate({ load, fixture, quiesced, ledger, fleet, faults, policy, loadStartedAt }) {
  const { state } = quiesced;
  const exchanges = load.client.exchanges.filter((exchange) => exchange.op !== 'setup' && exchange.op !== 'check');
  const windows = faults.map((fault) => ({ start: fault.startedAt, end: (fault.recoveredAt ?? fault.injectedAt) + faultGraceMs, killed: fault.index }));
  const inFault = (exchange) => windows.some((window) => overlaps(exchange, window));
  const invariants = [];

  // --- Effects on the server, by what identifies each operation.
  const outgoingPayments = countBy(
    state.transactions.filter((record) => record.transaction_type === 'payment' && record.direction === 'outgoing'),
    (record) => record.reference,
  );
  const depositsByReference = countBy(
    state.transactions.filter((record) => record.transaction_type === 'deposit'),
    (record) => record.reference,
  );
  const transfersByNote = countBy(
    state.transfers.filter((transfer) => transfer.direction === 'outgoing'),
    (transfer) => transfer.note,
  );
  const walletDepositsByAmount = countBy(
    state.transfers.filter((transfer) => transfer.direction === 'incoming' && !String(transfer.note ?? '').startsWith('OTC order')),
    (transfer) => transfer.amount,
  );
  const ordersByQuote = countBy(state.orders, (order) => order.quoteId);
  const walletAmount = (amount) => {
    const minor = toMinor(amount, walletAsset.scale).toString().padStart(walletAsset.scale + 1, '0');
    return `${minor.slice(0, -walletAsset.scale)}.${minor.slice(-walletAsset.scale)}`;
  };
  const effectsOf = (entry) => {
    switch (entry.kind) {
      case 'transfer':
        return transfersByNote.get(entry.body.note) ?? 0;
      case 'fiat deposit':
        return depositsByReference.get(entry.body.reference) ?? 0;
      case 'wallet deposit':
        return walletDepositsByAmount.get(walletAmount(entry.body.amount)) ?? 0;
      case 'otc confirm':
        return ordersByQuote.get(entry.effect.quoteId) ?? 0;
      default:
        throw new Error(`unknown operation ${entry.kind}`);
    }
  };

  // --- Keyed retries: one effect and one answer per key.
  const keyedProblems = [];
  let keyedEffects = 0;
  let keyedDuplicates = 0;
  const keyed = [...load.keyed.values()];
  for (const entry of keyed) {
    const effects = effectsOf(entry);
    keyedEffects += effects;
    keyedDuplicates += Math.max(0, effects - 1);
    const finals = [...new Set(entry.answers.filter((answer) => isFinal(answer.status)).map((answer) => `${answer.status} ${answer.text}`))];
    const label = `${entry.kind} ${entry.key}`;
    if (!entry.final) keyedProblems.push(`${label}: no final answer after ${entry.attempts} attempts (${entry.answers.map((answer) => answer.status ?? answer.failure).join(', ')})`);
    else if (entry.final.status < 300 && effects !== 1) keyedProblems.push(`${label}: answered ${entry.final.status} but has ${effects} effects`);
    else if (entry.final.status >= 400 && effects !== 0) keyedProblems.push(`${label}: answered ${entry.final.status} ${entry.final.text.slice(0, 160)} but has ${effects} effect(s)`);
    if (finals.length > 1) keyedProblems.push(`${label}: ${finals.length} different final answers: ${finals.map((answer) => answer.slice(0, 160)).join(' | ')}`);
  }
  const knownNotes = new Set(keyed.filter((entry) => entry.kind === 'transfer').map((entry) => entry.body.note));
  const knownDepositReferences = new Set(['chaos funding', ...keyed.filter((entry) => entry.kind === 'fiat deposit').map((entry) => entry.body.reference)]);
  const knownWalletAmounts = new Set([fixture.funding.walletAmount, ...keyed.filter((entry) => entry.kind === 'wallet deposit').map((entry) => walletAmount(entry.body.amount))]);
  const knownQuotes = new Set(keyed.filter((entry) => entry.kind === 'otc confirm').map((entry) => entry.effect.quoteId));
  for (const [note, count] of transfersByNote) if (!knownNotes.has(note)) keyedProblems.push(`${count} wallet transfer(s) no request of this run made (note ${note})`);
  for (const [reference, count] of depositsByReference) if (!knownDepositReferences.has(reference)) keyedProblems.push(`${count} deposit(s) no request made (reference ${reference})`);
  for (const [amount, count] of walletDepositsByAmount) if (!knownWalletAmounts.has(amount)) keyedProblems.push(`${count} wallet deposit(s) of ${amount} no request made`);
  for (const [quoteId, count] of ordersByQuote) if (!knownQuotes.has(quoteId)) keyedProblems.push(`${count} OTC order(s) of quote ${quoteId} no request confirmed`);
  for (const refused of load.quotesRefused) keyedProblems.push(`an OTC quote was refused: ${refused.status} ${refused.text}`);
  invariants.push(invariant('keyed retries: one effect, one answer', keyedProblems));

  // --- Unkeyed payments, reconciled by reference.
  const paymentProblems = [];
  let unanswered = 0;
  let unansweredCommitted = 0;
  let paymentDuplicates = 0;
  const committedPayments = [];
  for (const entry of load.payments.values()) {
    const count = outgoingPayments.get(entry.reference) ?? 0;
    paymentDuplicates += Math.max(0, count - 1);
    if (count > 1) paymentProblems.push(`payment ${entry.reference}: ${count} records`);
    if (entry.status === 201) {
      if (count === 0) paymentProblems.push(`payment ${entry.reference}: answered 201 but is not in GET /transactions`);
    } else if (isFinal(entry.status)) {
      paymentProblems.push(`payment ${entry.reference}: refused ${entry.status} ${entry.text}`);
      if (count > 0) paymentProblems.push(`payment ${entry.reference}: refused ${entry.status} but recorded`);
    } else {
      unanswered += 1;
      if (count > 0) unansweredCommitted += 1;
    }
    if (count > 0) committedPayments.push(entry);
  }
  for (const [reference, count] of outgoingPayments) if (!load.payments.has(reference)) paymentProblems.push(`${count} payment(s) no request made (reference ${reference})`);
  invariants.push(invariant('unkeyed payments reconciled', paymentProblems));

  // --- Balances: the client's book against the API's balances.
  const balanceProblems = [];
  let sourceMinor = fixture.funding.sourceMinor;
  let targetMinor = 0n;
  let walletMinor = fixture.funding.walletMinor;
  for (const entry of keyed) {
    if (!entry.final || entry.final.status >= 300) continue;
    sourceMinor += entry.effect.sourceMinor ?? 0n;
    walletMinor += entry.effect.walletMinor ?? 0n;
  }
  for (const entry of committedPayments) {
    sourceMinor -= entry.amountMinor + entry.feeMinor;
    if (entry.target === 'account') targetMinor += entry.amountMinor;
  }
  const compare = (label, expected, actual, scale) => {
    if (expected !== actual) balanceProblems.push(`${label}: expected ${formatMinor(expected, scale)}, the API says ${formatMinor(actual, scale)} (off by ${formatMinor(actual - expected, scale)})`);
  };
  compare('source account', sourceMinor, toMinor(state.sourceBalance, eurScale), eurScale);
  compare('target account', targetMinor, toMinor(state.targetBalance, eurScale), eurScale);
  compare('wallet balance', walletMinor, toMinor(state.wallet.balance, walletAsset.scale), walletAsset.scale);
  compare('wallet available', walletMinor, toMinor(state.wallet.available, walletAsset.scale), walletAsset.scale);
  invariants.push(invariant('balances exact', balanceProblems));

  invariants.push(invariant('ledger verify ok', ledger.ok ? [] : [`ledger verify: ${String(JSON.stringify(ledger.report ?? ledger.error)).slice(0, 600)}`]));

  // --- Webhooks: every event delivered at least once, every delivery signed.
  const delivered = deliveredEvents(fixture);
  const webhookProblems = [];
  const missing = state.events.filter((event) => !delivered.has(event.id));
  if (missing.length > 0) webhookProblems.push(`${missing.length} of ${state.events.length} events never delivered (first: ${missing.slice(0, 3).map((event) => `${event.type} ${event.id}`).join(', ')})`);
  for (const webhook of fixture.webhooks) {
    for (const invalid of webhook.received.invalid) webhookProblems.push(`delivery ${invalid.webhookId}: signature refused (${invalid.reason})`);
  }
  const deliveryDuplicates = fixture.webhooks.reduce((sum, webhook) => sum + [...webhook.received.deliveries.values()].reduce((more, count) => more + count - 1, 0), 0);
  invariants.push(invariant('events delivered, signatures valid', webhookProblems));

  // --- Nothing pending once the workers are quiet.
  const pending = pendingIn(state);
  const pendingProblems = Object.entries(pending)
    .filter(([, count]) => count > 0)
    .map(([what, count]) => `${count} ${what} still pending ${Math.round(quiesced.ms / 1000)} s after the load stopped`);
  if (state.failedDeliveries > 0) pendingProblems.push(`${state.failedDeliveries} webhook deliveries failed for good`);
  invariants.push(invariant('nothing pending after quiesce', pendingProblems));

  // --- 5xx: only the documented ones, only while a fault is in effect.
  const serverErrors = exchanges.filter((exchange) => exchange.status >= 500);
  const statusCounts = Object.fromEntries([...countBy(serverErrors, (exchange) => exchange.status)].sort());
  const unexpected = serverErrors.filter((exchange) => !(policy.allowedStatuses.includes(exchange.status) && inFault(exchange)));
  invariants.push(
    invariant(
      'no 5xx but 503 (507 disk full) in the fault',
      [...countBy(unexpected, (exchange) => `${exchange.status} ${inFault(exchange) ? 'during' : 'outside'} the fault`)].map(
        ([what, count]) => `${count} × ${what} (allowed: ${policy.allowedStatuses.join(', ')} while the fault is on)`,
      ),
    ),
  );

  // --- The process survives: no exit the harness did not cause, and SIGTERM exits 0.
  const crashProblems = fleet.crashes.map((crash) => `${crash.instance} exited by itself (exit ${crash.code ?? crash.signal}): ${crash.cause}`);
  for (const fault of faults) if (fault.exit && fault.exit.code !== 0 && fault.kind === 'sigterm') crashProblems.push(`SIGTERM: exit ${fault.exit.code ?? fault.exit.signal} (a clean shutdown exits 0)`);
  invariants.push(invariant('no crash, clean exits', crashProblems));

  // --- Answers in time: no request waits past the client's timeout; latency bound while Redis is away.
  const slowExchanges = exchanges.filter((exchange) => exchange.failure === 'timeout' || exchange.endedAt - exchange.startedAt > softTimeoutMs);
  const before = latency(exchanges.filter((exchange) => exchange.queuedAt >= loadStartedAt && exchange.endedAt < (faults[0]?.startedAt ?? Infinity)));
  const during = latency(exchanges.filter((exchange) => faults.some((fault) => exchange.queuedAt >= fault.startedAt && exchange.queuedAt <= (fault.recoveredAt ?? fault.injectedAt))));
  const timeProblems = slowExchanges.length > 0 ? [`${slowExchanges.length} requests waited more than ${softTimeoutMs / 1000} s (longest ${Math.round(Math.max(...slowExchanges.map((exchange) => exchange.endedAt - exchange.startedAt)) / 1000)} s)`] : [];
  if (policy.latencyBound && before.p50Ms !== undefined) {
    const away = latency(exchanges.filter((exchange) => faults.some((fault) => exchange.queuedAt >= fault.startedAt && exchange.queuedAt <= fault.injectedAt)));
    const bound = Math.max(2 * before.p50Ms, before.p50Ms + 50);
    if (away.p50Ms > bound) timeProblems.push(`p50 ${away.p50Ms} ms while the dependency was away, over 2× the ${before.p50Ms} ms before (bound ${bound} ms)`);
  }
  invariants.push(invariant('answers in time', timeProblems));

  // --- Connections closed cleanly: no reset, except where a process was killed.
  const resets = exchanges.filter((exchange) => exchange.failure === 'reset');
  const killedUnder = (exchange) => windows.some((window) => window.killed === exchange.instance && overlaps(exchange, window));
  const badResets = resets.filter((exchange) => !(policy.resetsAllowed && killedUnder(exchange)));
  // Each reset said with where and when it happened, relative to the fault: what tells one race from another.
  const faultStart = faults[0]?.startedAt;
  const describeReset = (exchange) =>
    `${exchange.op} to instance ${exchange.instance + 1}, sent ${faultStart === undefined ? '' : `${exchange.startedAt - faultStart} ms after the fault began (on instance ${(faults[0].index ?? -1) + 1}, injected in ${faults[0].injectedAt - faultStart} ms), `}` +
    `cut after ${exchange.endedAt - exchange.startedAt} ms: ${exchange.error}`;
  invariants.push(
    invariant('no connection reset', badResets.length > 0 ? [`${badResets.length} requests reset (connection closed under them)`, ...badResets.slice(0, 5).map(describeReset)] : []),
  );

  const operations = {
    payments: load.payments.size,
    keyed: keyed.length,
    reads: load.reads,
  };
  const figures = {
    operations: operations.payments + operations.keyed + operations.reads,
    operationsByKind: { ...operations, ...Object.fromEntries(countBy(keyed, (entry) => entry.kind)) },
    requests: exchanges.length,
    faults: faults.length,
    effects: keyedEffects + committedPayments.length,
    duplicates: keyedDuplicates + paymentDuplicates,
    keyedRetried: keyed.filter((entry) => entry.attempts > 1).length,
    unansweredPayments: unanswered,
    unansweredPaymentsCommitted: unansweredCommitted,
    webhookEvents: state.events.length,
    webhookDuplicateDeliveries: deliveryDuplicates,
    restarts: fleet.restarts,
    failedStarts: fleet.failedStarts,
    crashes: fleet.crashes.length,
    timeToReadyMs: fleet.restarts.length > 0 ? Math.max(...fleet.restarts.map((restart) => restart.readyMs)) : undefined,
    recoveryMs: faults.length > 0 ? Math.max(...faults.map((fault) => (fault.recoveredAt === undefined ? Infinity : fault.recoveredAt - fault.injectedAt))) : undefined,
    latencyBefore: before,
    latencyDuringFault: during,
    serverErrors: statusCounts,
    resets: resets.length,
    slow: slowExchanges.length,
    // How long a health-checking load balancer would have taken instances out while a fault was in effect.
    notReadyDuringFaultMs: fleet.readiness.filter((sample) => !sample.ready && windows.some((window) => sample.at >= window.start && sample.at <= window.end)).length * readinessIntervalMs,
    quiesceMs: quiesced.ms,
    quiesceWaitedFor: quiesced.waitedFor,
  };
  return { invariants, figures };
}

function formatMinor(minor, scale) {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(scale + 1, '0');
  return `${negative ? '-' : ''}${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
}
