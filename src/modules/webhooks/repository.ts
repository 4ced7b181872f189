import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import { clockRowsToRelease } from '../../storage/test-clock-rows.js';
import { webhookAttemptsListedMax } from '../../config/limits.js';
import type { CustomerTime } from '../../clock.js';
import { retryTransient, type Storage } from '../../storage/database.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import { nameStatement } from '../../storage/named-statements.js';
import { queryTemplate } from '../../storage/query-template.js';
import { runOnWriter, type WriterStatement } from '../../storage/sqlite-group-commit.js';
import type {
  Database,
  WebhookAttemptsTable,
  WebhookDeliveriesTable,
  WebhookSubscriptionsTable,
} from '../../storage/tables.js';
import { newId } from '../../ids.js';
import { claimDue, deleteDue, type ClaimOptions } from '../../workers/claim.js';
import { eventsByIds, type DeliveredEvent } from '../events/index.js';
import type { AttemptExchange } from './sender.js';

/** Reads and writes of the webhook tables, always scoped to the customer where a request asks. */

type Db = Kysely<Database> | Transaction<Database>;

export type SubscriptionRow = Selectable<WebhookSubscriptionsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;
export type AttemptRow = Selectable<WebhookAttemptsTable>;

export async function countSubscriptions(db: Db, customerId: string): Promise<number> {
  const row = await db.selectFrom('webhook_subscriptions').select(sql<number>`count(*)`.as('count')).where('customer_id', '=', customerId).executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertSubscription(db: Db, row: SubscriptionRow): Promise<void> {
  await db.insertInto('webhook_subscriptions').values(row).execute();
}

export async function listSubscriptions(db: Db, customerId: string): Promise<SubscriptionRow[]> {
  return db.selectFrom('webhook_subscriptions').selectAll().where('customer_id', '=', customerId).orderBy('created_at').orderBy('id').execute();
}

/** `forUpdate` (PostgreSQL, in a transaction): the row stays locked until it commits. */
export async function findSubscription(db: Db, customerId: string, id: string, forUpdate = false): Promise<SubscriptionRow | undefined> {
  const query = db.selectFrom('webhook_subscriptions').selectAll().where('customer_id', '=', customerId).where('id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/**
 * docs/spec.md §4 PATCH. `isActive` is decided against the row as it is when written, not as read before (the delivery
 * worker may have disabled it meanwhile): turning it on clears the run of failures and the reason; turning off an
 * active one records when, "disabled by request".
 */
export async function updateSubscription(
  db: Db,
  customerId: string,
  id: string,
  changes: Partial<SubscriptionRow>,
  isActive: boolean | undefined,
  now: string,
): Promise<SubscriptionRow | undefined> {
  return db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      ...changes,
      ...(isActive === true ? { is_active: 1, consecutive_failures: 0, failing_since: null, disabled_at: null, disabled_reason: null } : {}),
      ...(isActive === false
        ? {
            is_active: 0,
            disabled_at: eb.case().when('is_active', '=', 1).then(now).else(eb.ref('disabled_at')).end(),
            disabled_reason: eb.case().when('is_active', '=', 1).then('disabled by request').else(eb.ref('disabled_reason')).end(),
          }
        : {}),
    }))
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** A new secret; the current one becomes the previous, column to column, so two rotations at once lose neither. */
export async function rotateSubscriptionSecret(db: Db, customerId: string, id: string, sealedSecret: string, prefix: string, previousExpiresAt: string, now: string) {
  return db
    .updateTable('webhook_subscriptions')
    .set((eb) => ({
      secret_encrypted: sealedSecret,
      signing_secret_prefix: prefix,
      previous_secret_encrypted: eb.ref('secret_encrypted'),
      previous_secret_expires_at: previousExpiresAt,
      updated_at: now,
    }))
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteSubscription(db: Db, customerId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_subscriptions').where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * The deliveries filter: a status, or `failing` — failed, or pending after a failed attempt (retrying), which is
 * what someone looking for the failures of a receiver that is down wants to see (docs/webhooks.md "Deliveries list").
 */
export type DeliveryFilter = DeliveryRow['status'] | 'failing';

export async function listDeliveries(db: Kysely<Database>, customerId: string, subscriptionId: string, filter: DeliveryFilter | undefined, offset: number, limit: number) {
  let query = db.selectFrom('webhook_deliveries').where('customer_id', '=', customerId).where('subscription_id', '=', subscriptionId);
  if (filter === 'failing') {
    query = query.where((eb) => eb.or([eb('status', '=', 'failed'), eb.and([eb('status', '=', 'pending'), eb('last_error', 'is not', null)])]));
  } else if (filter !== undefined) {
    query = query.where('status', '=', filter);
  }
  return newestFirstPage<DeliveryRow>(query, offset, limit);
}

export async function findDelivery(db: Db, customerId: string, subscriptionId: string, deliveryId: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('subscription_id', '=', subscriptionId)
    .where('id', '=', deliveryId)
    .executeTakeFirst();
}

/**
 * Makes one delivery due now (POST …/deliveries/{id}/retry): a succeeded or failed one goes back to pending, a
 * pending one waiting for a later retry is brought forward. One being attempted is left as it is: an instance's lease
 * on it has not run out, and moving it would let a second attempt start beside the one in flight. A lease is in the
 * time of the clock the delivery is read by: a test clock's (`due`, the customer's time, docs/test-clocks.md) when it
 * has one, else the server's (`now`). The attempt count and the last outcome stay: the attempt made is the next of the
 * delivery's (docs/webhooks.md "Retrying one delivery"). Returns undefined when nothing was changed.
 */
export async function retryDelivery(db: Db, customerId: string, subscriptionId: string, deliveryId: string, due: CustomerTime, now: string): Promise<DeliveryRow | undefined> {
  return db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: due.now.toISOString(), clock_id: due.clockId, leased_until: null, updated_at: now })
    .where('customer_id', '=', customerId)
    .where('subscription_id', '=', subscriptionId)
    .where('id', '=', deliveryId)
    .where((eb) =>
      eb.or([
        eb('status', '<>', 'pending'),
        eb('leased_until', 'is', null),
        eb.and([eb('clock_id', 'is', null), eb('leased_until', '<=', now)]),
        eb.and([eb('clock_id', 'is not', null), eb('leased_until', '<=', due.now.toISOString())]),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Event ids bound per statement: well under SQLite's and PostgreSQL's bound parameters. */
const eventIdsPerStatement = 1000;

/** Of these events, those whose delivery to this subscription has failed (a replay with onlyFailed). */
export async function failedDeliveryEventIds(db: Db, subscriptionId: string, eventIds: readonly string[]): Promise<Set<string>> {
  const failed = new Set<string>();
  for (let start = 0; start < eventIds.length; start += eventIdsPerStatement) {
    const rows = await db
      .selectFrom('webhook_deliveries')
      .select('event_id')
      .where('subscription_id', '=', subscriptionId)
      .where('status', '=', 'failed')
      .where('event_id', 'in', eventIds.slice(start, start + eventIdsPerStatement))
      .execute();
    for (const row of rows) failed.add(row.event_id);
  }
  return failed;
}

/**
 * One event's deliveries to the customer's subscriptions, oldest first. Read through the customer's subscriptions
 * (at most 10), so each is found by the unique (subscription, event) index.
 */
export async function deliveriesOfEvent(db: Kysely<Database>, customerId: string, eventId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('event_id', '=', eventId)
    .where('subscription_id', 'in', (eb) => eb.selectFrom('webhook_subscriptions').select('id').where('customer_id', '=', customerId))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * What a subscription's health is read from: its last successful attempt, and its attempts since `since` by outcome,
 * each an index range of (subscription, succeeded, created_at).
 */
export async function attemptStats(db: Kysely<Database>, subscriptionId: string, since: string) {
  const { rows } = await sql<{ last_success_at: string | null; succeeded: number | string; failed: number | string }>`select
      (select max(created_at) from webhook_attempts where subscription_id = ${subscriptionId} and succeeded = 1) as last_success_at,
      (select count(*) from webhook_attempts where subscription_id = ${subscriptionId} and succeeded = 1 and created_at >= ${since}) as succeeded,
      (select count(*) from webhook_attempts where subscription_id = ${subscriptionId} and succeeded = 0 and created_at >= ${since}) as failed`.execute(db);
  const row = rows[0]!;
  return { lastSuccessAt: row.last_success_at, succeeded: Number(row.succeeded), failed: Number(row.failed) };
}

/** The most recent attempts of each delivery, newest first. */
export async function recentAttempts(db: Kysely<Database>, deliveryIds: readonly string[]): Promise<AttemptRow[]> {
  if (deliveryIds.length === 0) return [];
  const ranked = db
    .selectFrom('webhook_attempts')
    .selectAll()
    .select(sql<number>`row_number() over (partition by delivery_id order by created_at desc, id desc)`.as('rank'))
    .where('delivery_id', 'in', [...deliveryIds])
    .as('ranked');
  const rows = await db.selectFrom(ranked).selectAll().where('rank', '<=', webhookAttemptsListedMax).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
  return rows;
}

/** The active subscriptions of these customers: who an event is fanned out to. */
export async function activeSubscriptionsOf(db: Db, customerIds: readonly string[], keyShare: boolean) {
  if (customerIds.length === 0) return [];
  const query = db
    .selectFrom('webhook_subscriptions')
    .select(['id', 'customer_id', 'event_types'])
    .where('customer_id', 'in', [...customerIds])
    .where('is_active', '=', 1);
  return (keyShare ? query.forKeyShare() : query).execute();
}

export type NewDelivery = Pick<DeliveryRow, 'id' | 'subscription_id' | 'customer_id' | 'event_id' | 'event_type' | 'status' | 'next_attempt_at' | 'clock_id' | 'created_at' | 'updated_at'>;

/**
 * A delivery of one event to one subscription, due at once: `now` on the server clock, or `due`, its customer's time
 * (a sandbox test clock's while one is attached, docs/test-clocks.md: only an advance of that clock attempts it).
 */
export function newDelivery(subscriptionId: string, customerId: string, event: { id: string; event_type: string }, now: string, due?: CustomerTime): NewDelivery {
  return {
    id: newId(),
    subscription_id: subscriptionId,
    customer_id: customerId,
    event_id: event.id,
    event_type: event.event_type,
    status: 'pending',
    next_attempt_at: due?.now.toISOString() ?? now,
    clock_id: due?.clockId ?? null,
    created_at: now,
    updated_at: now,
  };
}

/** The columns a new delivery is written with, in the order of newDeliveryRows' arrays. */
const newDeliveryColumns = ['id', 'subscription_id', 'customer_id', 'event_id', 'event_type', 'status', 'next_attempt_at', 'clock_id', 'created_at', 'updated_at'] as const;

/** Rows per insert statement on SQLite: 10 bound parameters each, well under its bound. */
const deliveriesPerSqliteStatement = 1000;

/**
 * The rows to insert, as the statement's source: on PostgreSQL one array per column, unnested — one statement of ten
 * parameters however many rows, which PostgreSQL parses, plans and binds in half the time of a VALUES list of
 * thousands (a replay's 10,000, docs/benchmarks.md); on SQLite a VALUES list, a chunk at a time.
 */
function newDeliveryRows(dialect: Storage['dialect'], rows: readonly NewDelivery[]): RawBuilder<unknown>[] {
  const columns = sql.join(newDeliveryColumns.map((column) => sql.ref(column)));
  if (dialect === 'postgres') {
    const arrays = newDeliveryColumns.map((column) => sql`cast(${rows.map((row) => row[column])} as text[])`);
    return [sql`(${columns}) select * from unnest(${sql.join(arrays)})`];
  }
  const statements: RawBuilder<unknown>[] = [];
  for (let start = 0; start < rows.length; start += deliveriesPerSqliteStatement) {
    const values = rows.slice(start, start + deliveriesPerSqliteStatement).map((row) => sql`(${sql.join(newDeliveryColumns.map((column) => row[column]))})`);
    statements.push(sql`(${columns}) values ${sql.join(values)}`);
  }
  return statements;
}

/** New deliveries; one that exists already (the same event to the same subscription) is left as it is. */
export async function insertDeliveries(db: Db, dialect: Storage['dialect'], rows: readonly NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  for (const source of newDeliveryRows(dialect, rows)) {
    await sql`insert into webhook_deliveries ${source} on conflict (subscription_id, event_id) do nothing`.execute(db);
  }
}

/**
 * Replay: each delivery starts over — a new one, or a finished one (same webhook-id) back to pending, now. A pending
 * one is left alone: it will be sent anyway, and it may be in the middle of an attempt.
 */
export async function restartDeliveries(db: Db, dialect: Storage['dialect'], rows: readonly NewDelivery[]): Promise<void> {
  if (rows.length === 0) return;
  for (const source of newDeliveryRows(dialect, rows)) {
    await sql`insert into webhook_deliveries ${source}
      on conflict (subscription_id, event_id) do update set
        status = 'pending', attempt_count = 0, next_attempt_at = excluded.next_attempt_at, clock_id = excluded.clock_id, leased_until = null,
        last_attempt_at = null, last_status_code = null, last_error = null, updated_at = excluded.updated_at
      where webhook_deliveries.status <> 'pending'`.execute(db);
  }
}

/**
 * The active subscriptions with a delivery due now on the server clock, the longest waiting first, at most `limit`,
 * leaving out those in `excluded` (every slot of theirs is taken): one probe of the (subscription, status, next
 * attempt) index each. A delivery in a test clock's time is an advance's (claimDueDeliveriesOnClock).
 */
export async function subscriptionsWithDueDeliveries(db: Kysely<Database>, now: string, limit: number, excluded: readonly string[]): Promise<string[]> {
  const notExcluded = excluded.length === 0 ? sql`` : sql`and s.id not in (${sql.join([...excluded])})`;
  const { rows } = await sql<{ id: string }>`
    select id from (
      select s.id, (
        select min(d.next_attempt_at) from webhook_deliveries d
        where d.subscription_id = s.id and ${dueAndNotLeased(now)}
      ) as due_at
      from webhook_subscriptions s where s.is_active = 1 ${notExcluded}
    ) waiting
    where due_at is not null order by due_at limit ${limit}`.execute(db);
  return rows.map((row) => row.id);
}

/** What an attempt needs of its subscription: where to POST, and the secrets to sign with. */
export type SigningSubscription = Pick<SubscriptionRow, 'url' | 'secret_encrypted' | 'previous_secret_encrypted' | 'previous_secret_expires_at'>;

/**
 * A pending delivery of `d` due by `now` on the server clock (a test clock's are an advance's) and not being attempted:
 * no lease, or one that ran out. The (subscription, status, next attempt) index holds the due ones; the lease is read
 * from each row (no index holds it, so that a claim writes no index entry).
 */
function dueAndNotLeased(now: string): RawBuilder<unknown> {
  return sql`d.status = 'pending' and d.next_attempt_at <= ${now} and d.clock_id is null and (d.leased_until is null or d.leased_until <= ${now})`;
}

/** A claimed delivery with its event's payload and its subscription; undefined where they no longer exist. */
export interface ClaimedDelivery {
  /** The delivery, its `leased_until` the claim's lease; the lease it had before, one that ran out, or null. */
  row: DeliveryRow & { previous_leased_until: string | null };
  payload: string | undefined;
  /** When the event was written and fanned out (the delivery metrics' lag). */
  event: Pick<DeliveredEvent, 'created_at' | 'published_at'> | undefined;
  subscription: SigningSubscription | undefined;
}

/**
 * Claims due deliveries on the server clock (workers/claim.ts), up to `shares` of each subscription named, oldest due
 * first, each subscription from its own index range: the claim writes the lease into `leased_until`, which no index
 * holds, so on PostgreSQL it is a heap-only update (migration 0030). A subscription disabled meanwhile gives nothing. On PostgreSQL the
 * event's payload and the subscription are read in the claim's statement (one round trip per pass; the events
 * module's `outbox_events` is joined, docs/modules.md), on SQLite right after it.
 */
export function claimDueDeliveries(storage: Storage, now: Date, leaseUntil: Date, shares: ReadonlyMap<string, number>): Promise<ClaimedDelivery[]> {
  return claim(storage, sql`clock_id is null`, now, leaseUntil, [...shares.values()].reduce((sum, share) => sum + share, 0), { column: 'subscription_id', limits: shares });
}

/**
 * claimDueDeliveries for the deliveries in a test clock's time (docs/test-clocks.md), due by the clock's `now`, at
 * most `limit`, oldest due first, from the clock's own index (migration 0028); the lease is in the clock's time too.
 */
export function claimDueDeliveriesOnClock(storage: Storage, clockId: string, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
  return claim(storage, sql`clock_id = ${clockId}`, now, leaseUntil, limit, undefined);
}

async function claim(storage: Storage, clocked: RawBuilder<unknown>, now: Date, leaseUntil: Date, limit: number, perGroup: ClaimOptions['perGroup']): Promise<ClaimedDelivery[]> {
  type Joined = DeliveryRow & { previous_leased_until: string | null; payload: string | null; event_created_at: string | null; event_published_at: string | null } & { [Column in keyof SigningSubscription as `subscription_${Column}`]: SigningSubscription[Column] | null };
  const rows = await claimDue<Joined>(storage, {
    table: 'webhook_deliveries',
    due: sql`status = 'pending' and next_attempt_at <= ${now.toISOString()} and ${clocked} and exists (
      select 1 from webhook_subscriptions s where s.id = webhook_deliveries.subscription_id and s.is_active = 1)`,
    leaseColumn: 'leased_until',
    now: now.toISOString(),
    leaseUntil: leaseUntil.toISOString(),
    orderBy: 'next_attempt_at',
    limit,
    ...(perGroup ? { perGroup } : {}),
    previousLeaseAs: 'previous_leased_until',
    postgresJoin: {
      columns: sql`e.payload, e.created_at as event_created_at, e.published_at as event_published_at, s.url as subscription_url, s.secret_encrypted as subscription_secret_encrypted,
        s.previous_secret_encrypted as subscription_previous_secret_encrypted, s.previous_secret_expires_at as subscription_previous_secret_expires_at`,
      joins: sql`left join outbox_events e on e.id = claimed.event_id left join webhook_subscriptions s on s.id = claimed.subscription_id`,
    },
  });
  if (storage.dialect === 'postgres') {
    return rows.map(({ payload, event_created_at, event_published_at, subscription_url, subscription_secret_encrypted, subscription_previous_secret_encrypted, subscription_previous_secret_expires_at, ...row }) => ({
      row,
      payload: payload ?? undefined,
      event: event_created_at === null ? undefined : { created_at: event_created_at, published_at: event_published_at },
      subscription:
        subscription_url === null || subscription_secret_encrypted === null
          ? undefined
          : {
              url: subscription_url,
              secret_encrypted: subscription_secret_encrypted,
              previous_secret_encrypted: subscription_previous_secret_encrypted,
              previous_secret_expires_at: subscription_previous_secret_expires_at,
            },
    }));
  }
  if (rows.length === 0) return [];
  const [events, subscriptions] = await Promise.all([
    eventsByIds(storage.db, rows.map((row) => row.event_id)),
    subscriptionsByIds(storage.db, rows.map((row) => row.subscription_id)),
  ]);
  return rows.map((row) => {
    const event = events.get(row.event_id);
    return { row, payload: event?.payload, event, subscription: subscriptions.get(row.subscription_id) };
  });
}

async function subscriptionsByIds(db: Kysely<Database>, ids: readonly string[]): Promise<Map<string, SubscriptionRow>> {
  const rows = await db.selectFrom('webhook_subscriptions').selectAll().where('id', 'in', [...new Set(ids)]).execute();
  return new Map(rows.map((row) => [row.id, row]));
}

/** What an attempt changes: the delivery's next state, and whether the subscription must be disabled. */
export interface AttemptResult {
  deliveryId: string;
  subscriptionId: string;
  /** The lease the attempt was made under: if the delivery no longer holds it, the result is dropped. */
  lease: string;
  attemptNumber: number;
  succeeded: boolean;
  statusCode: number | null;
  durationMs: number;
  error: string | null;
  /** What was sent and answered, kept with the attempt. */
  exchange: AttemptExchange;
  /** After the attempt: pending with the next attempt's time, succeeded, or failed (the schedule exhausted). */
  status: DeliveryRow['status'];
  nextAttemptAt: string | null;
  at: string;
  /** Given the subscription's run of failures after this one, why it is disabled now, or null. */
  disableReason: (failures: number, failingSince: string) => string | null;
}

/** The attempt's row in webhook_attempts. */
function attemptRow(result: AttemptResult): AttemptRow {
  return {
    id: newId(),
    delivery_id: result.deliveryId,
    attempt_number: result.attemptNumber,
    succeeded: result.succeeded ? 1 : 0,
    status_code: result.statusCode,
    duration_ms: result.durationMs,
    error: result.error,
    created_at: result.at,
    subscription_id: result.subscriptionId,
    request_headers: result.exchange.requestHeaders === null ? null : JSON.stringify(result.exchange.requestHeaders),
    response_headers: result.exchange.responseHeaders === null ? null : JSON.stringify(result.exchange.responseHeaders),
    response_body: result.exchange.responseBody,
    response_body_truncated: result.exchange.responseBodyTruncated ? 1 : 0,
  };
}

/** SQLite: one delivery to its state after the attempt, only while it still holds the attempt's lease (compiled once). */
const moveAttemptedDelivery = queryTemplate<Pick<AttemptResult, 'deliveryId' | 'lease' | 'status' | 'attemptNumber' | 'nextAttemptAt' | 'at' | 'statusCode' | 'error'>>()(
  ['deliveryId', 'lease', 'status', 'attemptNumber', 'nextAttemptAt', 'at', 'statusCode', 'error'],
  (db, attempt) =>
    db
      .updateTable('webhook_deliveries')
      .set({
        status: attempt.status,
        attempt_count: attempt.attemptNumber,
        next_attempt_at: attempt.nextAttemptAt,
        last_attempt_at: attempt.at,
        last_status_code: attempt.statusCode,
        last_error: attempt.error,
        leased_until: null,
        updated_at: attempt.at,
      })
      .where('id', '=', attempt.deliveryId)
      .where('leased_until', '=', attempt.lease),
);

const insertAttempt = queryTemplate<AttemptRow>()(
  ['id', 'delivery_id', 'attempt_number', 'succeeded', 'status_code', 'duration_ms', 'error', 'created_at', 'subscription_id', 'request_headers', 'response_headers', 'response_body', 'response_body_truncated'],
  (db, row) => db.insertInto('webhook_attempts').values(row),
);

/**
 * SQLite: each delivery moved (fenced by its lease) and, where it moved, its attempt's row inserted, one compiled
 * statement each, run synchronously on the writer (runOnWriter): building a multi-row update and insert with Kysely
 * for every batch cost more CPU than SQLite spent running them. Answers the deliveries moved.
 */
function recordOnSqlite(trx: Transaction<Database>, run: WriterStatement, results: readonly AttemptResult[]): Set<string> {
  const moved = new Set<string>();
  for (const result of results) {
    if (run(moveAttemptedDelivery.compile(trx, result)).numAffectedRows !== 1n) continue;
    moved.add(result.deliveryId);
    run(insertAttempt.compile(trx, attemptRow(result)));
  }
  return moved;
}

/**
 * The subscription's run of failures after these attempts, in the order they ended: a success resets it, a failure
 * extends it and may disable the subscription. Its row is locked meanwhile (PostgreSQL), so two instances' records
 * follow one another; the caller takes subscriptions in id order, so they never wait on each other in a circle.
 */
async function extendRun(trx: Transaction<Database>, subscriptionId: string, results: readonly AttemptResult[], lock: boolean): Promise<void> {
  if (results.every((result) => result.succeeded)) {
    // Only successes: the run ends, whatever it was — one write, and none when there was no run (the common case).
    await trx
      .updateTable('webhook_subscriptions')
      .set({ consecutive_failures: 0, failing_since: null })
      .where('id', '=', subscriptionId)
      .where((eb) => eb.or([eb('consecutive_failures', '<>', 0), eb('failing_since', 'is not', null)]))
      .execute();
    return;
  }
  const query = trx.selectFrom('webhook_subscriptions').select(['consecutive_failures', 'failing_since', 'is_active']).where('id', '=', subscriptionId);
  const before = await (lock ? query.forNoKeyUpdate() : query).executeTakeFirst();
  if (!before) return;
  let failures = Number(before.consecutive_failures);
  let failingSince = before.failing_since;
  let disabled: { reason: string; at: string } | undefined;
  for (const result of results) {
    if (result.succeeded) {
      failures = 0;
      failingSince = null;
      continue;
    }
    failures += 1;
    failingSince ??= result.at;
    if (disabled === undefined && Number(before.is_active) === 1) {
      const reason = result.disableReason(failures, failingSince);
      if (reason !== null) disabled = { reason, at: result.at };
    }
  }
  if (failures === Number(before.consecutive_failures) && failingSince === before.failing_since && disabled === undefined) return;
  await trx
    .updateTable('webhook_subscriptions')
    .set({
      consecutive_failures: failures,
      failing_since: failingSince,
      ...(disabled ? { is_active: 0, disabled_at: disabled.at, disabled_reason: disabled.reason, updated_at: disabled.at } : {}),
    })
    .where('id', '=', subscriptionId)
    .execute();
}

/** Groups results by subscription, each group in the order its attempts ended. */
function runsBySubscription(results: readonly AttemptResult[]): Map<string, AttemptResult[]> {
  const bySubscription = new Map<string, AttemptResult[]>();
  for (const result of [...results].sort((a, b) => a.at.localeCompare(b.at))) {
    const run = bySubscription.get(result.subscriptionId);
    if (run) run.push(result);
    else bySubscription.set(result.subscriptionId, [result]);
  }
  return bySubscription;
}

/** The arrays the attempts' record is given, one element per attempt, and their types. */
const recordedColumns = {
  delivery_id: 'text',
  lease: 'text',
  status: 'text',
  attempt_count: 'integer',
  next_attempt_at: 'text',
  at: 'text',
  status_code: 'integer',
  error: 'text',
  attempt_id: 'text',
  subscription_id: 'text',
  succeeded: 'integer',
  duration_ms: 'integer',
  request_headers: 'text',
  response_headers: 'text',
  response_body: 'text',
  response_body_truncated: 'integer',
} as const;

type RecordedRow = { [Column in keyof typeof recordedColumns]: string | number | bigint | null };

function recordedRow(result: AttemptResult): RecordedRow {
  const row = attemptRow(result);
  return {
    delivery_id: result.deliveryId,
    lease: result.lease,
    status: result.status,
    attempt_count: result.attemptNumber,
    next_attempt_at: result.nextAttemptAt,
    at: result.at,
    status_code: result.statusCode,
    error: result.error,
    attempt_id: row.id,
    subscription_id: row.subscription_id,
    succeeded: row.succeeded,
    duration_ms: row.duration_ms,
    request_headers: row.request_headers,
    response_headers: row.response_headers,
    response_body: row.response_body,
    response_body_truncated: row.response_body_truncated,
  };
}

/**
 * PostgreSQL: the deliveries' fenced update and the attempts' rows in one statement (a data-modifying CTE, one round
 * trip); an attempt is inserted only where its delivery moved, each delivery only while it still holds the lease the
 * attempt was made under. With `endRuns` (every attempt succeeded), the same statement ends the run of failures of
 * each subscription that had one, its rows locked in id order as extendRun's caller takes them: the whole record is
 * then one statement, atomic without a transaction of its own.
 *
 * The attempts are given as one array per column, so the statement's text is the same for any batch: it is prepared
 * once per connection by name (storage/named-statements.ts), parsed once, and planned again only when PostgreSQL's
 * plan cache prefers a plan for the batch at hand (planning was a fifth of its time, docs/benchmarks.md). The
 * deliveries are found by primary key, their ids given once more as an array of their own: a hash join with a scan
 * of the table is then never the cheaper plan, whatever the statistics of a table filled by a replay seconds before
 * say. The lease alone fences: a recorded or released delivery has none, and a later claim's is another.
 */
async function recordOnPostgres(db: Db, results: readonly AttemptResult[], endRuns: boolean): Promise<Set<string>> {
  const rows = results.map(recordedRow);
  const columns = Object.keys(recordedColumns) as (keyof typeof recordedColumns)[];
  const arrays = columns.map((column) => sql`cast(${rows.map((row) => row[column])} as ${sql.raw(recordedColumns[column])}[])`);
  const endedRuns = endRuns
    ? sql`, ended as (
        update webhook_subscriptions set consecutive_failures = 0, failing_since = null
        where id in (
          select id from webhook_subscriptions
          where id in (select attempted.subscription_id from attempted join moved on moved.id = attempted.delivery_id)
            and (consecutive_failures <> 0 or failing_since is not null)
          order by id for no key update))`
    : sql``;
  const query = sql<{ id: string }>`
    with attempted as (select * from unnest(${sql.join(arrays)}) as attempted (${sql.join(columns.map((column) => sql.ref(column)))})),
    moved as (
      update webhook_deliveries set
        status = attempted.status,
        attempt_count = attempted.attempt_count,
        next_attempt_at = attempted.next_attempt_at,
        last_attempt_at = attempted.at,
        last_status_code = attempted.status_code,
        last_error = attempted.error,
        leased_until = null,
        updated_at = attempted.at
      from attempted
      where webhook_deliveries.id = any(cast(${rows.map((row) => row.delivery_id)} as text[]))
        and webhook_deliveries.id = attempted.delivery_id and webhook_deliveries.leased_until = attempted.lease
      returning webhook_deliveries.id),
    inserted as (
      insert into webhook_attempts (id, delivery_id, attempt_number, succeeded, status_code, duration_ms, error, created_at,
        subscription_id, request_headers, response_headers, response_body, response_body_truncated)
      select attempted.attempt_id, attempted.delivery_id, attempted.attempt_count, attempted.succeeded, attempted.status_code,
        attempted.duration_ms, attempted.error, attempted.at, attempted.subscription_id, attempted.request_headers,
        attempted.response_headers, attempted.response_body, attempted.response_body_truncated
      from attempted join moved on moved.id = attempted.delivery_id)${endedRuns}
    select id from moved`;
  const compiled = nameStatement(endRuns ? 'webhook_record_successes' : 'webhook_record', query.compile(db));
  const { rows: moved } = await db.executeQuery(compiled);
  return new Set(moved.map((row) => row.id));
}

/**
 * Records ended attempts (one commit however many): each delivery's state, fenced by its lease, the attempts' rows,
 * and each subscription's run of failures. An attempt whose lease was lost records nothing. On PostgreSQL a batch of
 * successes is one statement; otherwise one transaction. Returns the deliveries whose attempt was recorded.
 */
export async function recordAttempts(storage: Storage, results: readonly AttemptResult[]): Promise<Set<string>> {
  if (results.length === 0) return new Set();
  const allSucceeded = results.every((result) => result.succeeded);
  // One statement: a deadlock or serialization failure changed nothing, so it runs again as a transaction would.
  if (storage.dialect === 'postgres' && allSucceeded) return retryTransient('postgres', () => recordOnPostgres(storage.db, results, true));
  return storage.transaction(async (trx) => {
    let moved: Set<string>;
    if (storage.dialect === 'postgres') {
      moved = await recordOnPostgres(trx, results, false);
    } else {
      moved = await runOnWriter(trx, (run) => recordOnSqlite(trx, run, results));
    }
    const runs = runsBySubscription(results.filter((result) => moved.has(result.deliveryId)));
    for (const subscriptionId of [...runs.keys()].sort()) {
      await extendRun(trx, subscriptionId, runs.get(subscriptionId)!, storage.dialect === 'postgres');
    }
    return moved;
  });
}

/**
 * A claimed delivery not attempted, or an attempt cut short by shutdown: due again at once, for any instance, its lease
 * gone, with nothing recorded. Due from now: it is not the first attempt of a fresh delivery any more (the metrics).
 */
export async function releaseDelivery(db: Kysely<Database>, deliveryId: string, lease: string, now: string): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ next_attempt_at: now, leased_until: null }).where('id', '=', deliveryId).where('leased_until', '=', lease).execute();
}

/**
 * A deleted test clock's deliveries keep their due times, read by the server clock from now on (docs/test-clocks.md).
 * A lease left in the clock's time (an advance's instance that died; a clock is not deleted while an advance runs)
 * means nothing to the server clock, and goes.
 */
export async function releaseClockDeliveries(db: Kysely<Database>, clockId: string | null): Promise<void> {
  await db.updateTable('webhook_deliveries').set({ clock_id: null, leased_until: null }).where(clockRowsToRelease('webhook_deliveries', clockId)).execute();
}

/**
 * The reaper's batch (workers/reaper.ts): up to `limit` deliveries created before `before`, oldest first, and their
 * attempts with them (the foreign key cascades, through the attempts' delivery index). An attempt in progress on one
 * of them records nothing: its fenced update finds no delivery.
 */
export async function deleteDeliveriesCreatedBefore(storage: Storage, before: string, limit: number): Promise<number> {
  return deleteDue(storage, { table: 'webhook_deliveries', key: ['id'], due: sql`created_at < ${before}`, orderBy: 'created_at', limit });
}

/**
 * The delivery backlog, as the metrics sample it: the pending deliveries of active subscriptions due by `now` and not
 * being attempted (an attempt's lease is in the future), nor in a test clock's time (an advance attempts those), counted up to `countMax`, and when the longest-waiting of
 * them was due. Both read each active subscription's range of the (subscription, status, next attempt) index, as
 * the delivery worker's claim does; the count stops at `countMax` rows.
 */
export async function dueBacklog(db: Kysely<Database>, now: string, countMax: number): Promise<{ due: number; oldestDueAt: string | null }> {
  const { rows } = await sql<{ due: number | string; oldest_due_at: string | null }>`select
      (select count(*) from (
        select 1 from webhook_subscriptions s
        join webhook_deliveries d on d.subscription_id = s.id and ${dueAndNotLeased(now)}
        where s.is_active = 1 limit ${countMax}) counted) as due,
      (select min(due_at) from (
        select (select min(d.next_attempt_at) from webhook_deliveries d
          where d.subscription_id = s.id and ${dueAndNotLeased(now)}) as due_at
        from webhook_subscriptions s where s.is_active = 1) waiting) as oldest_due_at`.execute(db);
  const row = rows[0]!;
  return { due: Number(row.due), oldestDueAt: row.oldest_due_at };
}

/**
 * Every subscription by health, as the metrics sample it: active without a failure since its last success, active
 * and failing, disabled (by request or automatically); how many active ones have failed at least each of
 * `runLengths` times in a row; and since when the longest-failing one has been failing. One pass over the
 * subscriptions (at most webhookSubscriptionsPerCustomerMax per customer).
 */
export async function subscriptionHealthCounts(db: Kysely<Database>, runLengths: readonly number[]) {
  const atLeast = runLengths.map((length, index) => sql`count(case when is_active = 1 and consecutive_failures >= ${length} then 1 end) as ${sql.ref(`run_${index}`)}`);
  const { rows } = await sql<Record<string, number | string | null>>`select
      count(case when is_active = 1 and consecutive_failures = 0 then 1 end) as healthy,
      count(case when is_active = 1 and consecutive_failures > 0 then 1 end) as failing,
      count(case when is_active = 0 then 1 end) as disabled,
      min(case when is_active = 1 then failing_since end) as failing_since,
      ${sql.join(atLeast)}
    from webhook_subscriptions`.execute(db);
  const row = rows[0]!;
  return {
    healthy: Number(row.healthy),
    failing: Number(row.failing),
    disabled: Number(row.disabled),
    failingSince: (row.failing_since ?? null) as string | null,
    failingAtLeast: runLengths.map((length, index) => ({ length, subscriptions: Number(row[`run_${index}`]) })),
  };
}
