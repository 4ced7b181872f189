// The mixed load of the fault harness and the client-side book it keeps: payments (no Idempotency-Key, as the spec
// says, each with a unique reference), keyed wallet transfers, OTC quote and keyed confirmation, keyed sandbox
// deposits to a fiat account and to a wallet, and reads, from `concurrency` closed-loop workers. Every HTTP exchange
// is recorded (start, end, status or transport error) for the latency and 5xx figures; every keyed operation keeps
// every answer any of its attempts got, so the checks can tell one answer from two.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'undici';

/** A request unanswered this long is slow (an invariant counts them); a keyed operation is retried alongside it. */
export const softTimeoutMs = 5_000;
/** A request is abandoned after this long. */
const hardTimeoutMs = 30_000;
/** A keyed operation is retried with its key until it has a final answer or this long has passed. */
const keyedDeadlineMs = 90_000;
/** Attempts of one keyed operation waiting for an answer at once (a slow one is not cancelled: its answer counts). */
const outstandingAttemptsMax = 3;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const slow = Symbol('slow');

/** An answer the client acts on as final: a success or a refusal, not "in progress", "slow down" or a 5xx. */
export function isFinal(status) {
  return status !== undefined && ((status >= 200 && status < 300) || (status >= 400 && status < 500 && ![408, 409, 429].includes(status)));
}

/** The transport error's code (ECONNRESET, UND_ERR_SOCKET…), kept with the exchange to tell one reset from another. */
const errorCode = (error) => error?.code ?? error?.cause?.code ?? error?.name;

/** Transport failures by kind: the connection was reset or closed under the request, or no answer came in time. */
function failureKind(error) {
  const code = errorCode(error);
  if (code === 'ECONNREFUSED') return 'refused';
  if (['ECONNRESET', 'UND_ERR_SOCKET', 'EPIPE', 'UND_ERR_CLOSED'].includes(code)) return 'reset';
  if (['TimeoutError', 'AbortError', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_ABORTED'].includes(code)) return 'timeout';
  return String(code ?? error);
}

/** Exact JSON: every number kept as its source text, so amounts and balances are read without floating point. */
export function parseExact(text) {
  return JSON.parse(text, (_key, value, context) => (typeof value === 'number' ? context.source : value));
}

/** "12.5" at scale 2 → 1250n. */
export function toMinor(decimal, scale) {
  const [whole, fraction = ''] = String(decimal).split('.');
  if (fraction.length > scale) throw new Error(`${decimal} has more than ${scale} decimals`);
  return BigInt(whole) * 10n ** BigInt(scale) + BigInt(fraction.padEnd(scale, '0') || '0');
}

/**
 * HTTP to the instances through a load balancer of the simplest kind: round robin, and a refused connection (nothing
 * listens: the instance is down) goes to the next instance at once, since nothing was sent. Every other failure is
 * the client's to handle.
 */
export class Client {
  constructor(urls) {
    this.urls = urls;
    this.next = 0;
    this.agent = new Agent({ keepAliveTimeout: 10_000, connections: 32 });
    /** { op, instance, queuedAt, startedAt, endedAt, status, failure, error } for every exchange. */
    this.exchanges = [];
    this.inFlight = new Set();
  }

  /** Resolves { status, text } or { failure }; never rejects. */
  send(op, { method = 'GET', path, headers = {}, body }) {
    const exchange = this.exchange(op, method, path, headers, body === undefined ? undefined : JSON.stringify(body));
    this.inFlight.add(exchange);
    exchange.finally(() => this.inFlight.delete(exchange));
    return exchange;
  }

  async exchange(op, method, path, headers, body) {
    // Latency as the client lives it counts from queuedAt; whether the server answered in time, from startedAt,
    // when an instance took the connection (time spent while every instance refused is not any server's slowness).
    const queuedAt = Date.now();
    const deadline = queuedAt + hardTimeoutMs;
    for (let refusals = 1; ; refusals += 1) {
      const instance = this.next++ % this.urls.length;
      const record = { op, instance, queuedAt, startedAt: Date.now(), endedAt: undefined, status: undefined, failure: undefined };
      try {
        const response = await request(`${this.urls[instance]}${path}`, {
          method,
          headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
          body,
          dispatcher: this.agent,
          signal: AbortSignal.timeout(Math.max(1, deadline - Date.now())),
        });
        const text = await response.body.text();
        record.endedAt = Date.now();
        record.status = response.statusCode;
        this.exchanges.push(record);
        return { status: response.statusCode, text, instance };
      } catch (error) {
        const failure = failureKind(error);
        if (failure === 'refused' && Date.now() < deadline) {
          // Every instance refused: all are down at once (a restart of all of them); wait a little.
          if (refusals % this.urls.length === 0) await sleep(100);
          continue;
        }
        record.endedAt = Date.now();
        record.failure = failure;
        record.error = `${errorCode(error)}: ${error?.message ?? error}`.slice(0, 200);
        this.exchanges.push(record);
        return { failure, instance };
      }
    }
  }

  /** Waits for every request still in flight (each ends by its hard timeout). */
  async drain() {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  async close() {
    await this.drain();
    await this.agent.close();
  }
}

/** The asset the wallet holds, moves and receives from OTC orders. */
export const walletAsset = { asset: 'USDC', network: 'ETH', scale: 6 };
/** The operations' amounts, in base units (EUR cents, USDC millionths). */
const transferDestination = '0x52908400098527886e0f7030069857d2e4169ee7';
const internalPaymentMinor = 100n;
const payeePaymentMinor = 200n;
const depositMinor = 500n;
const transferMinor = 10_000n;
const otcSourceEur = '20';

/**
 * The mixed load and its book. The book is what the client knows: every operation sent, every answer received,
 * and from those (not from the server's records) what each balance must be.
 */
export class Load {
  constructor({ client, fixture, concurrency, runId }) {
    this.client = client;
    this.fixture = fixture;
    this.concurrency = concurrency;
    this.runId = runId;
    /** reference → { reference, target, amountMinor, feeMinor, status, failure, answeredAt } */
    this.payments = new Map();
    /** key → { kind, key, path, body, effect, answers: [], final, attempts, gaveUp } */
    this.keyed = new Map();
    /** amount (decimal string) → key, for wallet deposits, which carry no reference. */
    this.walletDepositKeys = new Map();
    this.quotesRefused = [];
    this.reads = 0;
    this.sequence = 0;
  }

  start() {
    this.running = true;
    this.workers = Array.from({ length: this.concurrency }, () => this.work());
  }

  async stop() {
    this.running = false;
    await Promise.all(this.workers);
    await this.client.drain();
  }

  async work() {
    const mix = [
      [30, () => this.payment()],
      [18, () => this.transfer()],
      [14, () => this.otc()],
      [14, () => this.fiatDeposit()],
      [14, () => this.walletDeposit()],
      [10, () => this.read()],
    ];
    const total = mix.reduce((sum, [weight]) => sum + weight, 0);
    while (this.running) {
      let pick = Math.random() * total;
      const [, operation] = mix.find(([weight]) => (pick -= weight) < 0) ?? mix[0];
      await operation();
    }
  }

  headers(key) {
    return { 'x-api-key': this.fixture.apiKey, 'x-csrf-token': this.fixture.csrf, ...(key ? { 'idempotency-key': key } : {}) };
  }

  /** A payment has no Idempotency-Key (docs/spec.md §4): sent once; an unanswered one is reconciled by its reference later. */
  async payment() {
    const n = (this.sequence += 1);
    const toPayee = n % 2 === 1;
    const reference = `chaos-${this.runId}-pay-${n}`;
    const entry = {
      reference,
      target: toPayee ? 'payee' : 'account',
      amountMinor: toPayee ? payeePaymentMinor : internalPaymentMinor,
      feeMinor: toPayee ? this.fixture.payeeFeeMinor : this.fixture.internalFeeMinor,
    };
    this.payments.set(reference, entry);
    const { fiat, payee } = this.fixture;
    const body = { fromAccountId: fiat.source, amount: Number(entry.amountMinor) / 100, currency: 'EUR', reference, ...(toPayee ? { payeeId: payee } : { toAccountId: fiat.target }) };
    const answer = await this.client.send('payment', { method: 'POST', path: '/payments', headers: this.headers(), body });
    entry.status = answer.status;
    entry.failure = answer.failure;
    entry.text = answer.status === 201 ? undefined : answer.text?.slice(0, 300);
  }

  transfer() {
    const key = randomUUID();
    const { asset, network } = walletAsset;
    return this.keyedOperation('transfer', key, `/wallets/${this.fixture.wallet}/transfers`, { asset, network, amount: '0.01', destination: transferDestination, note: `chaos ${key}` }, {
      walletMinor: -transferMinor,
    });
  }

  fiatDeposit() {
    const key = randomUUID();
    return this.keyedOperation('fiat deposit', key, `/sandbox/fiat-accounts/${this.fixture.fiat.source}/deposits`, { amount: Number(depositMinor) / 100, reference: `chaos-dep ${key}` }, {
      sourceMinor: depositMinor,
    });
  }

  /** A wallet deposit carries no reference: its amount, unique in the run (1.000001, 1.000002 …), identifies it. */
  walletDeposit() {
    const key = randomUUID();
    const n = (this.sequence += 1);
    const amount = `1.${String(n % 1_000_000).padStart(6, '0')}`;
    this.walletDepositKeys.set(amount, key);
    const { asset, network, scale } = walletAsset;
    return this.keyedOperation('wallet deposit', key, `/sandbox/wallets/${this.fixture.wallet}/deposits`, { asset, network, amount }, { walletMinor: toMinor(amount, scale) });
  }

  /** A quote (no effect, simply asked again until one comes), then its confirmation with a key. */
  async otc() {
    const body = { sourceFrAccountId: this.fixture.fiat.source, destinationProviderWalletId: this.fixture.wallet, sourceAmountEur: otcSourceEur };
    const deadline = Date.now() + keyedDeadlineMs;
    let quote;
    while (!quote && Date.now() < deadline) {
      const answer = await this.client.send('otc quote', { method: 'POST', path: '/otc-exchanges/quote', headers: this.headers(), body });
      if (answer.status === 200) quote = parseExact(answer.text).data;
      else if (isFinal(answer.status)) {
        this.quotesRefused.push({ status: answer.status, text: answer.text.slice(0, 300) });
        return;
      } else await sleep(200 + Math.random() * 300);
    }
    if (!quote) return;
    const key = randomUUID();
    await this.keyedOperation('otc confirm', key, '/otc-exchanges', { quoteId: quote.quoteId }, {
      sourceMinor: -toMinor(otcSourceEur, 2),
      walletMinor: toMinor(quote.destinationAmount, walletAsset.scale),
      quoteId: quote.quoteId,
    });
  }

  async read() {
    this.reads += 1;
    await this.client.send('read', { path: `/fiat-accounts/${this.fixture.fiat.source}`, headers: this.headers() });
  }

  /**
   * A keyed operation as a careful client runs it: the same key on every attempt until a final answer; an attempt
   * unanswered after `softTimeoutMs` is not cancelled but raced by a new one (at most three at once), and every
   * answer any attempt gets is kept on the key, late ones included.
   */
  keyedOperation(kind, key, path, body, effect) {
    const entry = { kind, key, path, body, effect, answers: [], final: undefined, attempts: 0, gaveUp: false };
    this.keyed.set(key, entry);
    return this.pursue(entry);
  }

  /** Attempts with the entry's key until it has a final answer or the deadline passes; used again by settleUp. */
  async pursue(entry) {
    const deadline = Date.now() + keyedDeadlineMs;
    const outstanding = new Set();
    entry.gaveUp = false;
    while (!entry.final && Date.now() < deadline) {
      if (outstanding.size < outstandingAttemptsMax) {
        entry.attempts += 1;
        const attempt = this.client.send(entry.kind, { method: 'POST', path: entry.path, headers: this.headers(entry.key), body: entry.body }).then((answer) => {
          entry.answers.push({ status: answer.status, failure: answer.failure, text: answer.text, at: Date.now() });
          if (!entry.final && isFinal(answer.status)) entry.final = { status: answer.status, text: answer.text };
          return answer;
        });
        outstanding.add(attempt);
        attempt.finally(() => outstanding.delete(attempt));
      }
      const answered = await Promise.race([...outstanding, sleep(softTimeoutMs).then(() => slow)]);
      if (entry.final) break;
      if (answered !== slow) await sleep(Math.min(2000, 100 * 2 ** Math.min(entry.attempts, 4)) * (0.5 + Math.random()));
    }
    if (!entry.final) entry.gaveUp = true;
  }

  /** After the load: every keyed operation still without a final answer is pursued again with its key. */
  async settleUp() {
    const open = [...this.keyed.values()].filter((entry) => !entry.final);
    await Promise.all(open.map((entry) => this.pursue(entry)));
    await this.client.drain();
    return open.length;
  }
}
