import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Transaction } from 'kysely';
import { Type } from 'typebox';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import { idempotencyKeyLost } from '../ledger/ledger.js';
import { grants, type Scope } from '../modules/api-keys/scopes.js';
import type { Storage } from '../storage/database.js';
import { narrowIdempotentReadScope, storeIdempotentAnswer, type KeyHold } from '../storage/idempotency-answers.js';
import type { Database } from '../storage/tables.js';
import { callerOf } from './auth.js';
import { errorAnswer } from './error-handler.js';

/**
 * Idempotency-Key (spec §4 rule 8; docs/idempotency.md): the one wrapper every money-moving route and every create
 * runs its operation in. Keyed on (customer, key), whatever the route: a key reused on another operation replays the
 * first operation's answer — to a caller allowed to read it.
 *
 * 1. The key (any RFC 9562 UUID; anything else is 400 before this runs) is reserved by inserting its row, with the
 *    scopes that read the operation's answer: the insert is the reservation, so of two requests with one key
 *    exactly one runs the operation (never read-then-insert).
 * 2. A request that finds the key completed gets the stored answer, byte for byte, with `Idempotent-Replayed: true`
 *    — or 403 INSUFFICIENT_SCOPE when its API key could not read that answer directly; one that finds it reserved
 *    and its lease running gets 409 IDEMPOTENCY_KEY_IN_USE with Retry-After.
 * 3. The answer is stored with what the operation commits: a money plan stores it with the money (money-plan.ts
 *    PlannedResponse), a create inside the transaction that writes the new resource (`create` below), each only
 *    while the reservation is still this attempt's. Every refusal of the operation (400, 403, 404, 422) is stored
 *    afterwards: nothing was committed with it, and a retry replays it. A 5xx or an unexpected error committed
 *    nothing either but is no outcome of the operation: the key is released and a later retry runs.
 * 4. A reservation whose process stopped becomes retryable when its lease runs out; what it may have committed was
 *    committed with its answer, or not at all. Keys are kept for IDEMPOTENCY_RETENTION_HOURS (at least 24).
 */

/**
 * The request's Idempotency-Key as the route schema declares it: a UUID of RFC 9562 (versions 1 to 8, its variant),
 * in either case. Spec §4 asks clients for v4; v7 keys are as unique. The nil and max UUIDs identify nothing.
 */
export const IdempotencyKeyHeader = Type.String({
  pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[1-8][0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$',
  description:
    'A UUID (RFC 9562, e.g. v4 or v7, either case) chosen by the client, one per operation (docs/idempotency.md); retries of the operation send the same one',
});

export function idempotencyHeaders(required: boolean) {
  return Type.Object({ 'idempotency-key': required ? IdempotencyKeyHeader : Type.Optional(IdempotencyKeyHeader) });
}

/** A reservation held by this attempt; the money plan or the create commits only while it still is. */
export type Reservation = KeyHold;

/** What an operation answers: the status and the exact JSON body; `stored` when it stored it already. */
export interface Answer {
  status: number;
  body: string;
  stored: boolean;
}

/**
 * What reading an operation's answer takes: any one of these scopes — the read scope of what it acts on, as a
 * direct read (GET) of it would. A key reused elsewhere replays the answer only to an API key that has one.
 */
export type ReadScope = Scope | readonly Scope[];

/**
 * Called by a create inside the transaction that writes the new resource, with the resource as the API presents
 * it: under an Idempotency-Key its answer is stored right there, so the resource and its answer commit together.
 */
export type OnCreated<T> = (trx: Transaction<Database>, record: T) => Promise<void>;

/** Encrypts the stored answers that hold a secret (storage/secret-box.ts). */
export interface AnswerSeal {
  seal(plaintext: string): string;
  open(sealed: string): string;
}

export interface IdempotencySettings {
  leaseMs: number;
  retentionMs: number;
}

const keyInUse = () =>
  new DomainError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed. Retry later with the same key.');

function send(reply: FastifyReply, status: number, body: string, replayed: boolean): FastifyReply {
  if (replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

const answerNotReadable = (readScopes: readonly Scope[]) =>
  new DomainError(
    'INSUFFICIENT_SCOPE',
    `This Idempotency-Key was first used by an operation whose answer this API key may not read: it lacks the scope ${readScopes.join(' or ')}.`,
    { required_scope: readScopes.join(' or ') },
  );

const scopeSeparator = ' ';
const scopesText = (readScope: ReadScope): string => (typeof readScope === 'string' ? readScope : readScope.join(scopeSeparator));

/**
 * Narrows what reading the key's answer takes once the operation knows what it acts on (a deposit: a fiat or a
 * virtual account), before its answer shows that resource.
 */
export async function narrowReadScope(storage: Storage, reservation: Reservation, readScope: ReadScope): Promise<void> {
  if (!(await narrowIdempotentReadScope(storage.db, reservation, scopesText(readScope)))) throw idempotencyKeyLost();
}

export class IdempotencyKeys {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly settings: IdempotencySettings,
    private readonly answerSeal: AnswerSeal,
  ) {}

  /**
   * Answers the request: by running `operation` under its key (or without one), or from the key's stored answer.
   * `readScope`: what reading the answer takes (narrowReadScope when the operation learns it only as it runs).
   */
  async answer(
    request: FastifyRequest,
    reply: FastifyReply,
    readScope: ReadScope,
    operation: (reservation: Reservation | undefined) => Promise<Answer>,
  ): Promise<FastifyReply> {
    const header = request.headers['idempotency-key'];
    if (typeof header !== 'string') {
      const answer = await operation(undefined);
      return send(reply, answer.status, answer.body, false);
    }
    const caller = callerOf(request);
    const reservation: Reservation = { customerId: caller.customerId, key: header.toLowerCase(), attemptId: randomUUID() };
    const replay = await this.reserve(reservation, `${request.method} ${request.routeOptions.url ?? request.url}`, scopesText(readScope));
    if (replay) {
      // A key reused on another endpoint must not read what the caller could not read directly.
      const readScopes = replay.readScope.split(scopeSeparator) as Scope[];
      if (!readScopes.some((scope) => grants(caller.scopes, scope))) throw answerNotReadable(readScopes);
      return send(reply, replay.status, replay.body, true);
    }

    let answer: Answer;
    try {
      answer = await operation(reservation);
    } catch (error) {
      // Taken over meanwhile: the new holder's answer is the one that counts.
      if (error instanceof DomainError && error.code === 'IDEMPOTENCY_KEY_IN_USE') throw error;
      // Nothing was committed (what an operation commits goes with its answer). A refusal — a value the operation
      // found invalid included — is its outcome: stored and replayed. A 5xx (the provider was unavailable: "retry
      // later") or an unexpected error is not: the key is released, and a retry runs the operation.
      if (!(error instanceof DomainError) || error.statusCode >= 500) {
        await this.release(reservation);
        throw error;
      }
      answer = { ...errorAnswer(error), stored: false };
    }
    if (!answer.stored) await storeIdempotentAnswer(this.storage.db, reservation, answer.status, answer.body);
    return send(reply, answer.status, answer.body, false);
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
    const serialize = reply.getSerializationFunction('201');
    if (serialize === undefined) throw new Error(`${request.method} ${request.routeOptions.url} declares no 201 response schema`);
    return this.answer(request, reply, readScope, async (reservation) => {
      let answer: Answer | undefined;
      await create(async (trx, record) => {
        const body = serialize({ data: record });
        const sealed = options.holdsSecret === true;
        if (reservation && !(await storeIdempotentAnswer(trx, reservation, 201, sealed ? this.answerSeal.seal(body) : body, sealed))) {
          throw idempotencyKeyLost();
        }
        answer = { status: 201, body, stored: reservation !== undefined };
      });
      if (answer === undefined) throw new Error('a create finished without calling onCreated in its transaction');
      return answer;
    });
  }

  /** Reserves the key for this attempt; answers the stored answer instead when there is one. */
  private async reserve(reservation: Reservation, operation: string, readScope: string): Promise<{ status: number; body: string; readScope: string } | undefined> {
    const now = this.clock.now();
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
        expires_at: new Date(now.getTime() + this.settings.retentionMs).toISOString(),
      })
      .onConflict((conflict) => conflict.columns(['customer_id', 'key']).doNothing())
      .executeTakeFirst();
    if (inserted.numInsertedOrUpdatedRows === 1n) return undefined;

    const existing = await this.storage.db
      .selectFrom('idempotency_keys')
      .select(['status', 'attempt_id', 'lease_until', 'response_status', 'response_body', 'read_scope', 'response_sealed'])
      .where('customer_id', '=', reservation.customerId)
      .where('key', '=', reservation.key)
      .executeTakeFirst();
    // Expired and reaped between the two statements: as good as new, but let the client retry rather than race.
    if (!existing) throw keyInUse();
    if (existing.status === 'completed' && existing.response_body !== null) {
      const body = Number(existing.response_sealed) === 1 ? this.answerSeal.open(existing.response_body) : existing.response_body;
      return { status: Number(existing.response_status), body, readScope: existing.read_scope };
    }
    if (existing.lease_until > now.toISOString()) throw keyInUse();
    // The attempt that held it stopped: take the reservation over, unless another request just did. The operation
    // runs again from the start, so what reads its answer is declared again.
    const taken = await this.storage.db
      .updateTable('idempotency_keys')
      .set({ attempt_id: reservation.attemptId, lease_until: new Date(now.getTime() + this.settings.leaseMs).toISOString(), read_scope: readScope })
      .where('customer_id', '=', reservation.customerId)
      .where('key', '=', reservation.key)
      .where('attempt_id', '=', existing.attempt_id)
      .where('status', '=', 'in_progress')
      .executeTakeFirst();
    if (taken.numUpdatedRows !== 1n) throw keyInUse();
    return undefined;
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

  /** One pass of the reaper: deletes up to `limit` keys past their retention, oldest first; returns how many. */
  async deleteExpired(limit: number): Promise<number> {
    const now = this.clock.now().toISOString();
    const deleted = await this.storage.db
      .deleteFrom('idempotency_keys')
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('customer_id', 'key'),
          'in',
          selectFrom('idempotency_keys').select(['customer_id', 'key']).where('expires_at', '<=', now).orderBy('expires_at').limit(limit).$asTuple('customer_id', 'key'),
        ),
      )
      .executeTakeFirst();
    return Number(deleted.numDeletedRows);
  }
}
