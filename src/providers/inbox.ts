import type { FastifyBaseLogger } from 'fastify';
import { sql, type Transaction } from 'kysely';
import { jitteredBackoffMs } from '../backoff.js';
import type { Clock } from '../clock.js';
import {
  providerEventAttemptsMax,
  providerEventBackoffBaseMs,
  providerEventBackoffMaxMs,
  providerEventBatchSize,
  providerEventEarlierPollMs,
  providerEventEarlierWaitMs,
  providerEventErrorLengthMax,
  providerEventIdempotencyKeyLengthMax,
  providerEventLeaseMs,
  providerEventPayloadBytesMax,
  providerEventReferenceLengthMax,
} from '../config/limits.js';
import { DomainError, errorStatusByCode, validationError, type ErrorCode, type FieldError } from '../errors.js';
import type { KeyedAnswer } from '../ledger/unit-of-work.js';
import type { Storage } from '../storage/database.js';
import type { Database, ProviderEventsTable } from '../storage/tables.js';
import { claimDue } from '../workers/claim.js';
import { providerEventTypes, resourceOf, type AppliedMark, type Lifecycle, type ProviderEvent, type ReportedProviderEvent } from './events.js';

type EventRow = Omit<ProviderEventsTable, 'id' | 'attempts'> & { id: bigint; attempts: number | bigint };

function eventOf(row: EventRow): ProviderEvent {
  return {
    id: BigInt(row.id),
    provider: row.provider,
    type: row.event_type as ProviderEvent['type'],
    reference: row.reference,
    idempotencyKey: row.idempotency_key,
    payload: JSON.parse(row.payload) as Record<string, unknown>,
  };
}

/**
 * The lease of an event a request owns (`reportForRequest`): it never runs out, so the worker never takes the event.
 * Should its request die before marking it, it stays received, visibly unapplied.
 */
const requestOwnedLeaseUntil = '9999-12-31T23:59:59.999Z';

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, providerEventErrorLengthMax);
}

/** What is wrong with an event before it is written: its type, the lengths of its key and reference, its payload. */
function refusalsOf(event: ReportedProviderEvent, payloadText: string): FieldError[] {
  const fields: FieldError[] = [];
  const field = (path: string, reason: string) => fields.push({ location: 'body', path, reason });
  if (!(providerEventTypes as readonly string[]).includes(event.type)) field('/type', `must be one of ${providerEventTypes.join(', ')}`);
  if (event.reference.length === 0 || event.reference.length > providerEventReferenceLengthMax) field('/reference', `must have 1 to ${providerEventReferenceLengthMax} characters`);
  if (event.idempotencyKey.length === 0 || event.idempotencyKey.length > providerEventIdempotencyKeyLengthMax) {
    field('/idempotencyKey', `must have 1 to ${providerEventIdempotencyKeyLengthMax} characters`);
  }
  if (Buffer.byteLength(payloadText) > providerEventPayloadBytesMax) field('/payload', `must be at most ${providerEventPayloadBytesMax} bytes of JSON`);
  return fields;
}

/**
 * The provider events inbox (docs/providers.md "Reporting outcomes"). Adapters write the outcomes their provider
 * reports (`record`); one claimed worker (`applyDue`, workers/claim.ts) hands each received event to the lifecycle
 * of its resource, in order of arrival per reference. An event applies exactly once: the lifecycle marks it applied
 * in the same unit of work as its effect (AppliedMark). An event its lifecycle refuses (a DomainError: an unknown
 * reference, a transition its state machine forbids) is left `failed` with the reason at once; one that fails for
 * another reason (the database away) is tried again after a backoff, at most providerEventAttemptsMax times.
 *
 * `report` writes an event and applies it at once, through the same path: how the sandbox's simulation routes and
 * its timer answer as they always did. Such an event is leased to its reporter from the start, so the worker applies
 * only what no one else is applying.
 */
export class ProviderEventInbox {
  private readonly lifecycles = new Map<string, Lifecycle>();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The lifecycle that applies the events of its resource; one per resource. */
  register(lifecycle: Lifecycle): void {
    if (this.lifecycles.has(lifecycle.resource)) throw new Error(`a lifecycle of ${lifecycle.resource} is already registered`);
    this.lifecycles.set(lifecycle.resource, lifecycle);
  }

  /**
   * Writes the event as received, for the worker to apply; an event whose key the provider already used is not written
   * again.
   */
  async record(event: ReportedProviderEvent): Promise<void> {
    await this.write(event, null);
  }

  /**
   * Writes the event and applies it now (after any event of its reference received before it), answering what its
   * lifecycle answers: the resource's record. An event refused by its lifecycle is left failed and its error thrown;
   * one already applied answers undefined; one that failed before throws the error it failed with.
   *
   * The event is written leased to this call, so the worker leaves it alone while it is applied here and takes it
   * only if this call dies (its lease runs out) or gives it back (a failure that is no refusal). An event its key
   * names already is applied here only once its lease is free; while another caller holds it, this one waits for
   * its outcome.
   */
  async report(event: ReportedProviderEvent): Promise<unknown> {
    const deadline = performance.now() + providerEventEarlierWaitMs;
    const written = await this.write(event, this.leaseUntil());
    const { row, ownLease } = written ? { row: written, ownLease: written.lease_until } : await this.takeOver(event, deadline);
    if (row.state === 'applied') return undefined;
    if (row.state === 'failed') throw storedFailure(row);
    try {
      await this.afterEarlierEvents(row, deadline);
      return await this.applyRefusable(row);
    } catch (error) {
      if (!(error instanceof DomainError) && ownLease !== null) await this.release(row.id, ownLease);
      throw error;
    }
  }

  /**
   * Writes an outcome that a request makes happen (the sandbox's deposits: the request is the money arriving) and
   * applies it now, answering what its lifecycle answers; `answer`, the request's Idempotency-Key, is handed to the
   * lifecycle, which stores the request's answer with the effect (AppliedMark.answer). Its key must be new, and so
   * its reference (no earlier event to wait for). The event is the request's for good: the worker never takes it, and
   * when it cannot be applied now for another reason than a refusal, it is left failed. The request failed, so the
   * outcome did not happen, and a retry of the request reports it anew; applied later by the worker, it would have
   * happened as well (twice with the retry).
   */
  async reportForRequest(event: ReportedProviderEvent, answer?: KeyedAnswer): Promise<unknown> {
    const row = await this.write(event, requestOwnedLeaseUntil);
    if (!row) throw new Error(`the provider event ${event.idempotencyKey} of ${event.provider} was written before`);
    try {
      return await this.applyRefusable(row, answer);
    } catch (error) {
      // A refused request writes nothing: its event goes (no one else ever held it). Any other failure leaves it failed.
      if (error instanceof DomainError) await this.storage.db.deleteFrom('provider_events').where('id', '=', row.id).execute().catch(() => undefined);
      else await this.markFailed(row.id, 'INTERNAL_ERROR', errorText(error)).catch(() => undefined);
      throw error;
    }
  }

  private leaseUntil(): string {
    return new Date(this.clock.now().getTime() + providerEventLeaseMs).toISOString();
  }

  /** Writes the event, leased until `leaseUntil` (null: to no one); answers its row, or undefined if its key was used. */
  private async write(event: ReportedProviderEvent, leaseUntil: string | null): Promise<EventRow | undefined> {
    const payload = JSON.stringify(event.payload);
    const refusals = refusalsOf(event, payload);
    if (refusals.length > 0) throw validationError(refusals, 'The provider event is not valid.');
    const now = this.clock.now().toISOString();
    return this.storage.db
      .insertInto('provider_events')
      .values({
        provider: event.provider,
        event_type: event.type,
        reference: event.reference,
        idempotency_key: event.idempotencyKey,
        payload,
        state: 'received',
        error_code: null,
        last_error: null,
        lease_until: leaseUntil,
        received_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.columns(['provider', 'idempotency_key']).doNothing())
      .returningAll()
      .executeTakeFirst();
  }

  /**
   * The event its key names, written before: leased to this call when it is still received and no one else holds it
   * (its writer gave it back or died, or it came from a webhook and the worker has not claimed it yet). While another
   * caller holds it, waits (bounded, like afterEarlierEvents) for its outcome; past the bound it is applied here
   * anyway, its applied mark keeping it to once.
   */
  private async takeOver(event: ReportedProviderEvent, deadline: number): Promise<{ row: EventRow; ownLease: string | null }> {
    for (;;) {
      const now = this.clock.now().toISOString();
      const taken = await this.storage.db
        .updateTable('provider_events')
        .set({ lease_until: this.leaseUntil(), updated_at: now })
        .where('provider', '=', event.provider)
        .where('idempotency_key', '=', event.idempotencyKey)
        .where('state', '=', 'received')
        .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]))
        .returningAll()
        .executeTakeFirst();
      if (taken) return { row: taken, ownLease: taken.lease_until };
      const row = await this.storage.db
        .selectFrom('provider_events')
        .selectAll()
        .where('provider', '=', event.provider)
        .where('idempotency_key', '=', event.idempotencyKey)
        .executeTakeFirstOrThrow();
      // Past the bound the event is applied here while its holder may still be applying it: its lease is not ours.
      if (row.state !== 'received' || performance.now() >= deadline) return { row, ownLease: null };
      await pollPause();
    }
  }

  /**
   * Gives a reported event whose application failed (no refusal) to the worker at once; else its lease runs out. Only
   * while the lease is still this call's: another caller may hold the event by now, and freeing it would let the
   * worker apply it beside that caller.
   */
  private async release(id: bigint, ownLease: string): Promise<void> {
    await this.storage.db
      .updateTable('provider_events')
      .set({ lease_until: null })
      .where('id', '=', id)
      .where('state', '=', 'received')
      .where('lease_until', '=', ownLease)
      .execute()
      .catch(() => undefined); // the storage is away: the worker takes the event when its lease runs out
  }

  /**
   * Waits (bounded) until no event of the same reference received before this one is still unapplied. Whoever wrote an
   * earlier event is applying it now (another request, another instance, or the worker): applying it here as well
   * raced that writer, and the loser of the race answered a refusal for an outcome that happened. Past the bound the
   * event is applied anyway; its lifecycle's guards keep a resource's transitions in order.
   */
  private async afterEarlierEvents(row: EventRow, deadline: number): Promise<void> {
    for (;;) {
      const earlier = await this.storage.db
        .selectFrom('provider_events')
        .select('id')
        .where('provider', '=', row.provider)
        .where('reference', '=', row.reference)
        .where('state', '=', 'received')
        .where('id', '<', row.id)
        .executeTakeFirst();
      if (!earlier || performance.now() >= deadline) return;
      await pollPause();
    }
  }

  /**
   * One pass of the worker `provider-events`: claims received events (only the oldest received one of each
   * reference, so a reference's events apply in order) and applies them. Returns how many it claimed.
   */
  async applyDue(): Promise<number> {
    const now = this.clock.now();
    const claimed = await claimDue<EventRow>(this.storage, {
      table: 'provider_events',
      due: sql`state = 'received' and not exists (
        select 1 from provider_events earlier
        where earlier.provider = provider_events.provider and earlier.reference = provider_events.reference
          and earlier.state = 'received' and earlier.id < provider_events.id)`,
      leaseColumn: 'lease_until',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + providerEventLeaseMs).toISOString(),
      orderBy: 'id',
      limit: providerEventBatchSize,
      set: { attempts: sql`attempts + 1`, updated_at: now.toISOString() },
    });
    for (const row of claimed) {
      try {
        await this.applyRefusable(row);
      } catch (error) {
        if (error instanceof DomainError) continue; // left failed, with its reason
        await this.afterFailedAttempt(row, error);
      }
    }
    return claimed.length;
  }

  /** Applies one received event; a refusal leaves it failed (and is thrown), anything else leaves it received. */
  private async applyRefusable(row: EventRow, answer?: KeyedAnswer): Promise<unknown> {
    const event = eventOf(row);
    const lifecycle = this.lifecycles.get(resourceOf(event.type));
    if (!lifecycle) return this.refuse(event, new DomainError('NOT_FOUND', `No lifecycle applies ${event.type} events here.`, { type: event.type }));
    try {
      return await lifecycle.apply(event, this.appliedMark(event.id, answer));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
    }
    // A refusal may rest on writes that are not durable yet: SQLite's group commit shows a transaction what the other
    // members of its group wrote (this very event applied by another caller, say), and that group can still fail to
    // commit (a full disk). Failing the event on such a refusal would lose it. So wait until every write made so far
    // has committed or rolled back (an empty transaction commits after them), then try once more: only a refusal
    // that still stands fails the event.
    await this.storage.transaction(async () => undefined);
    try {
      return await lifecycle.apply(event, this.appliedMark(event.id, answer));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return this.refuse(event, error);
    }
  }

  private async refuse(event: ProviderEvent, refusal: DomainError): Promise<never> {
    await this.markFailed(event.id, refusal.code, refusal.message);
    this.log.warn({ providerEventId: String(event.id), type: event.type, reference: event.reference, code: refusal.code }, 'provider event refused by its lifecycle');
    throw refusal;
  }

  private appliedMark(id: bigint, answer: KeyedAnswer | undefined): AppliedMark {
    const set = () => ({ state: 'applied' as const, lease_until: null, updated_at: this.clock.now().toISOString() });
    const guard = {
      table: 'provider_events',
      match: { id, state: 'received' },
      set: set(),
      error: 'INVALID_STATUS_TRANSITION' as const,
      message: 'The provider event was applied meanwhile.',
      details: {},
    };
    return {
      guard,
      answer,
      inTransaction: async (trx: Transaction<Database>) => {
        const result = await trx.updateTable('provider_events').set(set()).where('id', '=', id).where('state', '=', 'received').executeTakeFirst();
        if (result.numUpdatedRows !== 1n) throw new DomainError(guard.error, guard.message);
      },
    };
  }

  private async markFailed(id: bigint, code: string, message: string): Promise<void> {
    await this.storage.db
      .updateTable('provider_events')
      .set({ state: 'failed', error_code: code, last_error: message.slice(0, providerEventErrorLengthMax), lease_until: null, updated_at: this.clock.now().toISOString() })
      .where('id', '=', id)
      .where('state', '=', 'received')
      .execute();
  }

  /** An attempt that failed for another reason than a refusal: tried again after a backoff, or given up on. */
  private async afterFailedAttempt(row: EventRow, error: unknown): Promise<void> {
    const attempts = Number(row.attempts);
    if (attempts >= providerEventAttemptsMax) {
      this.log.error({ err: error, providerEventId: String(row.id), type: row.event_type }, 'provider event could not be applied; left failed for an operator');
      await this.markFailed(row.id, 'INTERNAL_ERROR', errorText(error));
      return;
    }
    this.log.warn({ err: error, providerEventId: String(row.id), type: row.event_type, attempts }, 'provider event not applied; retrying later');
    const now = this.clock.now();
    await this.storage.db
      .updateTable('provider_events')
      .set({
        last_error: errorText(error),
        lease_until: new Date(now.getTime() + jitteredBackoffMs(attempts, providerEventBackoffBaseMs, providerEventBackoffMaxMs)).toISOString(),
        updated_at: now.toISOString(),
      })
      .where('id', '=', row.id)
      .where('state', '=', 'received')
      .execute();
  }
}

/** Real time on purpose: a report waits for another caller's commit, not for a time of the business clock. */
function pollPause(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, providerEventEarlierPollMs));
}

/** The refusal an event failed with, again (its details are not kept). */
function storedFailure(row: Pick<ProviderEventsTable, 'error_code' | 'last_error'>): DomainError {
  const code = row.error_code !== null && row.error_code in errorStatusByCode ? (row.error_code as ErrorCode) : 'INTERNAL_ERROR';
  return new DomainError(code, row.last_error ?? 'The provider event did not apply.');
}
