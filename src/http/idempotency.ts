import { randomUUID } from 'node:crypto';
import { clockRowsToRelease } from '../storage/test-clock-rows.js';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Clock, CustomerClocks, TestClockTime } from '../clock.js';
import { idempotencyLeaseRenewalsPerLease, reaperBatchRows, testClockAdvanceBatchesMax } from '../config/limits.js';
import { DomainError } from '../errors.js';
import { idempotencyKeyLost } from '../ledger/ledger.js';
import type { KeyedAnswer, MovedRecord } from '../ledger/unit-of-work.js';
import { grants, type Scope } from '../modules/api-keys/index.js';
import type { Storage } from '../storage/database.js';
import { renewIdempotentLease, storeIdempotentAnswer, type Answer, type OnCreated, type Reservation } from '../storage/idempotency-answers.js';
import { deleteDue } from '../workers/claim.js';
import { callerOf } from './auth.js';
import { errorAnswer } from './error-handler.js';

/**
 * Idempotency-Key (docs/spec.md §4 rule 8; docs/idempotency.md): the one wrapper every money-moving route and every create
 * runs its operation in. Keyed on (customer, key), whatever the route: a key reused on another operation replays the
 * first operation's answer — to a caller allowed to read it.
 *
 * 1. The key (any RFC 9562 UUID; anything else is 400 before this runs) is reserved by inserting its row, with the
 *    scopes that read the operation's answer: the insert is the reservation, so of two requests with one key
 *    exactly one runs the operation (never read-then-insert).
 * 2. A request that finds the key completed gets the stored answer, byte for byte, with `Idempotent-Replayed: true`
 *    — or 403 INSUFFICIENT_SCOPE when its API key could not read that answer directly; one that finds it reserved
 *    and its lease running gets 409 IDEMPOTENCY_KEY_IN_USE with Retry-After.
 * 3. The answer is stored with what the operation commits: a money movement stores it with the money (its unit of
 *    work's answer, ledger/unit-of-work.ts), a create inside the transaction that writes the new resource (`create`
 *    below), each only while the reservation is still this attempt's. Either way the text stored is what the route's
 *    serializer for the answer's status writes: the operation returns a typed result, the route's response schema
 *    serialises it, and the money path is handed that serializer (KeyedAnswer) to write the answer it stores, so a
 *    replay is byte for byte the first answer. Every refusal of the operation (400, 403, 404, 422) is stored
 *    afterwards: nothing was committed with it, and a retry replays it. A 5xx or an unexpected error committed
 *    nothing either but is no outcome of the operation: the key is released and a later retry runs.
 * 4. While the operation runs, the lease is renewed: a slow request keeps its key. A reservation whose process
 *    stopped becomes retryable when its lease runs out; what it may have committed was committed with its answer, or
 *    not at all. Keys are kept for IDEMPOTENCY_RETENTION_HOURS (at least 24).
 * 5. An attempt whose key was taken over all the same (its renewals failed) answers what the key's owner answers —
 *    409 while the owner runs, its stored answer once it finished — never an outcome of its own: its commit was
 *    refused, and a refusal it met (the owner confirmed the quote, spent the balance) is the owner's doing.
 */

/**
 * The request's Idempotency-Key as the route schema declares it: a UUID of RFC 9562 (versions 1 to 8, its variant),
 * in either case. docs/spec.md §4 asks clients for v4; v7 keys are as unique. The nil and max UUIDs identify nothing.
 */
const IdempotencyKeyHeader = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$',
  description:
    'A UUID (RFC 9562, e.g. v4 or v7, either case) chosen by the client, one per operation (docs/idempotency.md); retries of the operation send the same one',
});

export function idempotencyHeaders(required: boolean) {
  return Type.Object({ 'idempotency-key': required ? IdempotencyKeyHeader : Type.Optional(IdempotencyKeyHeader) });
}


/**
 * What reading an operation's answer takes: any one of these scopes — the read scope of what it acts on, as a
 * direct read (GET) of it would. A key reused elsewhere replays the answer only to an API key that has one.
 */
export type ReadScope = Scope | readonly Scope[];

/**
 * A route's `config.idempotency`: its operation runs under the request's Idempotency-Key (installIdempotency). What
 * reading its answer takes is `readScope`. How the answer is stored:
 * - `create`: the handler passes `onCreatedOf(request)` to the service, which calls it in the transaction that
 *   writes the new resource; the answer is 201 and the resource (serialised by the route's 201 schema), stored
 *   encrypted when it `holdsSecret`;
 * - `operation`: the handler passes `reservationOf(request)` to the service, whose money movement stores its answer
 *   with the money (written by the route's serializer), and hands the service's typed result to
 *   `answered(request, createdAnswer(…))`.
 */
type IdempotentRoute = { readScope: ReadScope } & ({ kind: 'create'; holdsSecret?: boolean } | { kind: 'operation' });

/** What the handler of an idempotent route gets from installIdempotency for the attempt it runs in. */
interface KeyedAttempt {
  reservation: KeyedAnswer | undefined;
  onCreated: OnCreated<unknown> | undefined;
  answer: Answer | undefined;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's operation runs under the request's Idempotency-Key (http/idempotency.ts IdempotentRoute). */
    idempotency?: IdempotentRoute;
  }
  interface FastifyRequest {
    keyedAttempt: KeyedAttempt | null;
  }
}

function keyedAttemptOf(request: FastifyRequest): KeyedAttempt {
  if (request.keyedAttempt === null) throw new Error(`${request.method} ${request.routeOptions.url} declares no config.idempotency`);
  return request.keyedAttempt;
}

/** The reservation an `operation` route's service runs under; undefined without an Idempotency-Key. */
export const reservationOf = (request: FastifyRequest): KeyedAnswer | undefined => keyedAttemptOf(request).reservation;

/** What a `create` route's service calls in the transaction that writes the resource. */
export const onCreatedOf = (request: FastifyRequest): OnCreated<unknown> => keyedAttemptOf(request).onCreated!;

/** The answer of an `operation` route's service: sent (and stored, unless the service stored it) by installIdempotency. */
export function answered(request: FastifyRequest, answer: Answer): void {
  keyedAttemptOf(request).answer = answer;
}

/** The answer 201 `{ data }` of a money operation that may have stored it with its money. */
export function createdAnswer<T>(moved: MovedRecord<T>): Answer {
  return { status: 201, payload: { data: moved.record }, stored: moved.answerStored };
}

/** A refusal of the operation, as the error handler writes it: stored and sent as this text. */
type Refusal = { status: number; body: string };

/**
 * The one place Idempotency-Key is handled: every route that declares `config.idempotency` has its handler run as
 * the operation of `keys` (IdempotencyKeys.create or .answer), so no handler or service calls the wrapper itself.
 */
export function installIdempotency(app: FastifyInstance, keys: IdempotencyKeys): void {
  app.decorateRequest('keyedAttempt', null);
  app.addHook('onRoute', (route) => {
    const idempotent = route.config?.idempotency;
    if (idempotent === undefined) return;
    const handler = route.handler as RouteHandlerMethod;
    route.handler = async function (this: FastifyInstance, request: FastifyRequest, reply: FastifyReply) {
      if (idempotent.kind === 'create') {
        return keys.create(
          request,
          reply,
          idempotent.readScope,
          async (onCreated) => {
            request.keyedAttempt = { reservation: undefined, onCreated, answer: undefined };
            await handler.call(this, request, reply);
          },
          { holdsSecret: idempotent.holdsSecret === true },
        );
      }
      return keys.answer(request, reply, idempotent.readScope, async (reservation) => {
        const attempt: KeyedAttempt = { reservation, onCreated: undefined, answer: undefined };
        request.keyedAttempt = attempt;
        await handler.call(this, request, reply);
        if (attempt.answer === undefined) throw new Error(`${request.method} ${request.routeOptions.url} answered nothing: its handler must call answered()`);
        return attempt.answer;
      });
    };
  });
}

/** Encrypts the stored answers that hold a secret (storage/secret-box.ts). */
export interface AnswerSeal {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

/** A completed key's answer, and the scopes that may read it (space-separated, any one). */
interface StoredAnswer {
  status: number;
  body: string;
  readScope: string;
}

export interface IdempotencySettings {
  leaseMs: number;
  retentionMs: number;
}

const keyInUse = () =>
  new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed. Retry later with the same key.');

/** A stored answer (or a refusal, as the error handler writes it) sent as the text it is. */
function send(reply: FastifyReply, status: number, body: string, replayed: boolean): FastifyReply {
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

/** The route's serializer of its response schema for `status`: what the client is sent, and what is stored. */
function serializerOf(request: FastifyRequest, reply: FastifyReply, status: number): (payload: unknown) => string {
  const serialize = reply.getSerializationFunction(String(status));
  if (serialize === undefined) throw new Error(`${request.method} ${request.routeOptions.url} declares no ${status} response schema`);
  return serialize as (payload: unknown) => string;
}

const answerNotReadable = (readScopes: readonly Scope[]) =>
  new DomainError(
    'INSUFFICIENT_SCOPE',
    `This Idempotency-Key was first used by an operation whose answer this API key may not read: it lacks the scope ${readScopes.join(' or ')}.`,
    { required_scope: readScopes.join(' or ') },
  );

const scopeSeparator = ' ';
const scopesText = (readScope: ReadScope): string => (typeof readScope === 'string' ? readScope : readScope.join(scopeSeparator));

export class IdempotencyKeys {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly settings: IdempotencySettings,
    private readonly answerSeal: AnswerSeal,
    /** A key is kept for its retention in its customer's time: a sandbox test clock's while one is attached (docs/test-clocks.md). */
    private readonly customerClocks: CustomerClocks,
  ) {}

  /**
   * Answers the request: by running `operation` under its key (or without one), or from the key's stored answer.
   * `readScope`: what reading the answer takes (narrowReadScope when the operation learns it only as it runs).
   */
  async answer(
    request: FastifyRequest,
    reply: FastifyReply,
    readScope: ReadScope,
    operation: (key: KeyedAnswer | undefined) => Promise<Answer>,
  ): Promise<FastifyReply> {
    const header = request.headers['idempotency-key'];
    if (typeof header !== 'string') {
      const answer = await operation(undefined);
      return reply.code(answer.status).send(answer.payload);
    }
    const caller = callerOf(request);
    const reservation: KeyedAnswer = {
      customerId: caller.customerId,
      key: header.toLowerCase(),
      attemptId: randomUUID(),
      serialize: (status, payload) => serializerOf(request, reply, status)(payload),
    };
    const replay = await this.reserve(reservation, `${request.method} ${request.routeOptions.url ?? request.url}`, scopesText(readScope));
    if (replay) return this.replay(request, reply, replay);

    const renewal = this.renewWhileRunning(reservation, request.log);
    let outcome: Answer | Refusal | 'taken over';
    try {
      outcome = await this.runUnderKey(reservation, operation);
      // An answer is stored only on a key this attempt still holds: never over the answer of one that took it over.
      if (outcome !== 'taken over' && !('stored' in outcome && outcome.stored)) {
        const body = 'body' in outcome ? outcome.body : serializerOf(request, reply, outcome.status)(outcome.payload);
        if (!(await storeIdempotentAnswer(this.storage.db, reservation, outcome.status, body))) outcome = 'taken over';
      }
    } finally {
      renewal.stop();
    }
    if (outcome !== 'taken over') return 'body' in outcome ? send(reply, outcome.status, outcome.body, false) : reply.code(outcome.status).send(outcome.payload);
    // Taken over while it ran (its lease ran out all the same): nothing of it was committed, and what it met — a quote
    // confirmed, a balance spent — was the new holder's doing. The key has one answer: the new holder's.
    request.log.warn('an Idempotency-Key was taken over while its request ran: answering what its new holder answers');
    return this.answerOfHolder(request, reply, reservation);
  }

  /**
   * Runs the operation; 'taken over' when it found the reservation no longer this attempt's (its commit refused).
   * Nothing was committed otherwise on a throw (what an operation commits goes with its answer). A refusal — a value
   * the operation found invalid included — is its outcome: to be stored and replayed. A 5xx (the provider was
   * unavailable: "retry later") or an unexpected error is not: the key is released, and a retry runs the operation.
   */
  private async runUnderKey(reservation: KeyedAnswer, operation: (key: KeyedAnswer) => Promise<Answer>): Promise<Answer | Refusal | 'taken over'> {
    try {
      return await operation(reservation);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'IDEMPOTENCY_KEY_IN_USE') return 'taken over';
      if (!(error instanceof DomainError) || error.statusCode >= 500) {
        await this.release(reservation);
        throw error;
      }
      return errorAnswer(error);
    }
  }

  /** A stored answer, sent again — to a caller allowed to read it: a key reused elsewhere must not show more than a GET would. */
  private replay(request: FastifyRequest, reply: FastifyReply, stored: StoredAnswer): FastifyReply {
    const readScopes = stored.readScope.split(scopeSeparator) as Scope[];
    if (!readScopes.some((scope) => grants(callerOf(request).scopes, scope))) throw answerNotReadable(readScopes);
    return send(reply, stored.status, stored.body, true);
  }

  /** What the key's current holder answers: its stored answer once it finished, 409 while it runs. */
  private async answerOfHolder(request: FastifyRequest, reply: FastifyReply, reservation: Reservation): Promise<FastifyReply> {
    const stored = await this.findKey(reservation);
    if (stored?.answer === undefined) throw keyInUse();
    return this.replay(request, reply, stored.answer);
  }

  /**
   * Keeps the reservation this attempt's while its operation runs: several times a lease, the lease moves a whole
   * lease ahead (only while this attempt still holds it). A slow request — queued behind the per-customer limit,
   * waiting on a provider or a busy database — is so never taken over, and a retry meanwhile gets 409; only an attempt
   * whose process stopped lets its lease run out. A renewal that fails is logged and tried again at the next beat;
   * should the lease run out all the same, the commit is fenced by the attempt (step 3 above) and step 5 answers.
   */
  private renewWhileRunning(reservation: Reservation, log: FastifyBaseLogger): { stop(): void } {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const beat = async () => {
      try {
        const leaseUntil = new Date(this.clock.now().getTime() + this.settings.leaseMs).toISOString();
        // Not held any more (taken over, or finished as this ran): nothing left to keep.
        if (!(await renewIdempotentLease(this.storage.db, reservation, leaseUntil))) return;
      } catch (error) {
        log.warn({ err: error }, 'could not renew the lease of an Idempotency-Key; trying again');
      }
      schedule();
    };
    const schedule = () => {
      if (stopped) return;
      timer = setTimeout(() => void beat(), this.settings.leaseMs / idempotencyLeaseRenewalsPerLease);
      // A request in flight keeps the process up; its renewals alone must not.
      timer.unref();
    };
    schedule();
    return {
      stop() {
        stopped = true;
        clearTimeout(timer);
      },
    };
  }

  /**
   * Answers a create (201 and the new resource, as the route's schema serialises it) under the request's key: `create`
   * calls its `onCreated` inside the transaction that writes the resource, and the answer is stored there. An answer
   * that `holdsSecret` (the signing secret of POST /webhooks) is stored encrypted.
   */
  async create(
    request: FastifyRequest,
    reply: FastifyReply,
    readScope: ReadScope,
    create: (onCreated: OnCreated<unknown>) => Promise<unknown>,
    options: { holdsSecret?: boolean } = {},
  ): Promise<FastifyReply> {
    const serialize = serializerOf(request, reply, 201);
    return this.answer(request, reply, readScope, async (reservation) => {
      let answer: Answer | undefined;
      await create(async (trx, record) => {
        const payload = { data: record };
        if (reservation) {
          const body = serialize(payload);
          const sealed = options.holdsSecret === true;
          if (!(await storeIdempotentAnswer(trx, reservation, 201, sealed ? this.answerSeal.seal(body) : body, sealed))) throw idempotencyKeyLost();
        }
        answer = { status: 201, payload, stored: reservation !== undefined };
      });
      if (answer === undefined) throw new Error('a create finished without calling onCreated in its transaction');
      return answer;
    });
  }

  /** Reserves the key for this attempt; answers the stored answer instead when there is one. */
  private async reserve(reservation: Reservation, operation: string, readScope: string): Promise<StoredAnswer | undefined> {
    const now = this.clock.now();
    const testClock = await this.customerClocks.testClockOf(reservation.customerId);
    const inserted = await this.storage.db
      .insertInto('idempotency_keys')
      .values({
        customer_id: reservation.customerId,
        key: reservation.key,
        operation,
        status: 'in_progress',
        attempt_id: reservation.attemptId,
        lease_until: new Date(now.getTime() + this.settings.leaseMs).toISOString(),
        response_status: null,
        response_body: null,
        read_scope: readScope,
        created_at: now.toISOString(),
        expires_at: new Date((testClock?.now ?? now).getTime() + this.settings.retentionMs).toISOString(),
        clock_id: testClock?.clockId ?? null,
      })
      .onConflict((conflict) => conflict.columns(['customer_id', 'key']).doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows === 1n) return undefined;

    const existing = await this.findKey(reservation);
    // Expired and reaped between the two statements: as good as new, but let the client retry rather than race.
    if (!existing) throw keyInUse();
    if (existing.answer) return existing.answer;
    if (existing.leaseUntil > now.toISOString()) throw keyInUse();
    // The attempt that held it stopped: take the reservation over, unless another request just did. The operation
    // runs again from the start, so what reads its answer is declared again.
    const taken = await this.storage.db
      .updateTable('idempotency_keys')
      .set({ attempt_id: reservation.attemptId, lease_until: new Date(now.getTime() + this.settings.leaseMs).toISOString(), read_scope: readScope })
      .where('customer_id', '=', reservation.customerId)
      .where('key', '=', reservation.key)
      .where('attempt_id', '=', existing.attemptId)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    if (taken.numUpdatedRows !== 1n) throw keyInUse();
    return undefined;
  }

  /** The key's row as it stands: its stored answer once completed, else who holds it and until when. */
  private async findKey(reservation: Reservation): Promise<{ answer?: StoredAnswer; attemptId: string; leaseUntil: string } | undefined> {
    const row = await this.storage.db
      .selectFrom('idempotency_keys')
      .select(['status', 'attempt_id', 'lease_until', 'response_status', 'response_body', 'read_scope', 'response_sealed'])
      .where('customer_id', '=', reservation.customerId)
      .where('key', '=', reservation.key)
      .executeTakeFirst();
    if (!row) return undefined;
    const found = { attemptId: row.attempt_id, leaseUntil: row.lease_until };
    if (row.status !== 'completed' || row.response_body === null) return found;
    const body = Number(row.response_sealed) === 1 ? this.answerSeal.open(row.response_body) : row.response_body;
    return { ...found, answer: { status: Number(row.response_status), body, readScope: row.read_scope } };
  }

  private async release(reservation: Reservation): Promise<void> {
    await this.storage.db
      .deleteFrom('idempotency_keys')
      .where('customer_id', '=', reservation.customerId)
      .where('key', '=', reservation.key)
      .where('attempt_id', '=', reservation.attemptId)
      .where('status', '=', 'in_progress')
      .execute();
  }

  /** The reaper's batch (workers/reaper.ts): up to `limit` keys past their retention at `now`, oldest first; how many went. Keys in a test clock's time are its advances'. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    return deleteDue(this.storage, { table: 'idempotency_keys', key: ['customer_id', 'key'], due: sql`expires_at <= ${now.toISOString()} and clock_id is null`, orderBy: 'expires_at', limit });
  }

  /** A test clock's advance: its keys past their retention by the clock's time go, reaper batches at a time, before it answers. */
  async deleteExpiredOnClock(testClock: TestClockTime): Promise<void> {
    const due = sql`clock_id = ${testClock.clockId} and expires_at <= ${testClock.now.toISOString()}`;
    for (let batch = 0; batch < testClockAdvanceBatchesMax; batch += 1) {
      if ((await deleteDue(this.storage, { table: 'idempotency_keys', key: ['customer_id', 'key'], due, orderBy: 'expires_at', limit: reaperBatchRows })) < reaperBatchRows) return;
    }
  }

  /** A deleted test clock's keys keep their expiry, read by the server clock from now on. */
  async releaseClock(clockId: string | null): Promise<void> {
    await this.storage.db.updateTable('idempotency_keys').set({ clock_id: null }).where(clockRowsToRelease('idempotency_keys', clockId)).execute();
  }
}
