import { newId } from '../ids.js';
import { jitteredBackoffMs } from '../backoff.js';
import type { FastifyBaseLogger } from 'fastify';
import { sql, type Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import { DomainError } from '../errors.js';
import type { Storage } from '../storage/database.js';
import type { Database, ProviderOperationsTable } from '../storage/tables.js';
import { claimDue, deleteDue } from '../workers/claim.js';
import { withTimeout } from '../workers/timeout.js';
import type { OpenAccountRequest, OpenVirtualAccountRequest, RegisterPayeeRequest } from './banking.js';
import { addressObjectId, parseAddressObjectId, type CreateAddressRequest, type CreatedAddress, type CreateWalletRequest } from './custody.js';
import type { RegisterEndUserRequest } from './kyc.js';
import type { Providers } from './providers.js';
import {
  providerCallTimeoutMs,
  providerErrorTextLengthMax,
  providerOperationLeaseMs,
  providerOperationReaperBatchSize,
  providerOperationRetentionMs,
  providerUndoAttemptsMax,
  providerUndoBackoffBaseMs,
  providerUndoBackoffMaxMs,
} from '../config/limits.js';

/**
 * Creating something at the provider and recording it here cannot be one transaction, so it is made undoable
 * (docs/providers.md):
 *
 * 1. the operation is written down (`calling`, with a lease) before the provider is called, with its id as the
 *    provider's idempotency key;
 * 2. the provider is called, outside any database transaction;
 * 3. the caller's transaction records the object and marks the operation `done` — only if it is still `calling`;
 * 4. if that transaction fails, the object is undone (`undoing` → `undone`) and the error passed on.
 *
 * If the process stops between 1 and 3, or the undo itself fails, the operation stays `calling`/`undoing` until
 * its lease runs out; the reaper then claims it, replays the call with the same idempotency key to learn the object
 * (the provider answers the same one) and undoes it. An operation marked `undoing` can no longer be marked done,
 * so a slow request and the reaper never both win.
 */

/** What each kind of operation calls, how its object is named, and how it is undone. */
const operationKinds = {
  open_account: {
    call: (providers: Providers, request: OpenAccountRequest, key: string) => providers.banking.openAccount(request, key),
    objectId: (result: { frAccountId: string }) => result.frAccountId,
    undo: (providers: Providers, objectId: string) => providers.banking.closeAccount(objectId),
  },
  open_virtual_account: {
    call: (providers: Providers, request: OpenVirtualAccountRequest, key: string) => providers.banking.openVirtualAccount(request, key),
    objectId: (result: { frVirtualAccountId: string }) => result.frVirtualAccountId,
    undo: (providers: Providers, objectId: string) => providers.banking.closeVirtualAccount(objectId),
  },
  register_payee: {
    call: (providers: Providers, request: RegisterPayeeRequest, key: string) => providers.banking.registerPayee(request, key),
    objectId: (result: { frPayeeId: string }) => result.frPayeeId,
    undo: (providers: Providers, objectId: string) => providers.banking.removePayee(objectId),
  },
  register_end_user: {
    call: (providers: Providers, request: RegisterEndUserRequest, key: string) => providers.kyc.registerEndUser(request, key),
    objectId: (result: { frEndUserId: string }) => result.frEndUserId,
    undo: (providers: Providers, objectId: string) => providers.kyc.removeEndUser(objectId),
  },
  create_wallet: {
    call: (providers: Providers, request: CreateWalletRequest, key: string) => providers.custody.createWallet(request, key),
    objectId: (result: { frWalletId: string }) => result.frWalletId,
    undo: (providers: Providers, objectId: string) => providers.custody.archiveWallet(objectId),
  },
  create_address: {
    call: (providers: Providers, request: CreateAddressRequest, key: string) => providers.custody.createAddress(request, key),
    objectId: (result: CreatedAddress) => addressObjectId(result),
    undo: (providers: Providers, objectId: string) => providers.custody.retireAddress(parseAddressObjectId(objectId)),
  },
} as const;

export type OperationKind = keyof typeof operationKinds;
type RequestOf<K extends OperationKind> = Parameters<(typeof operationKinds)[K]['call']>[1];
type ResultOf<K extends OperationKind> = Awaited<ReturnType<(typeof operationKinds)[K]['call']>>;

interface AnyOperation {
  call(providers: Providers, request: unknown, key: string): Promise<unknown>;
  objectId(result: unknown): string;
  undo(providers: Providers, objectId: string): Promise<void>;
}

function definitionOf(kind: string): AnyOperation {
  const definition = (operationKinds as Record<string, unknown>)[kind];
  if (definition === undefined) throw new Error(`unknown provider operation kind ${kind}`);
  return definition as AnyOperation;
}

function errorText(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, providerErrorTextLengthMax);
}

export const providerUnavailable = () =>
  new DomainError('PROVIDER_UNAVAILABLE', 'The provider could not complete the request; nothing was created. Retry later.');

/**
 * What a provider throws when it refused a request for good (its 4xx): nothing was created, so there is nothing to
 * undo, and retrying the same request would be refused again.
 */
export class ProviderRefusedError extends Error {
  override name = 'ProviderRefusedError';
}

const undoBackoffMs = (attempt: number) => jitteredBackoffMs(attempt + 1, providerUndoBackoffBaseMs, providerUndoBackoffMaxMs);

export class Provisioning {
  constructor(
    private readonly storage: Storage,
    private readonly providers: Providers,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * Creates the object at the provider and records it: `record` runs the caller's transaction and must call
   * `markDone(trx)` inside it. Everything that can be validated must have been validated before this is called.
   */
  async create<K extends OperationKind, T>(
    customerId: string,
    kind: K,
    request: RequestOf<K>,
    record: (result: ResultOf<K>, markDone: (trx: Transaction<Database>) => Promise<void>) => Promise<T>,
  ): Promise<T> {
    const definition = definitionOf(kind);
    const id = newId();
    const now = this.clock.now();
    await this.storage.db
      .insertInto('provider_operations')
      .values({
        id,
        customer_id: customerId,
        kind,
        request: JSON.stringify(request),
        status: 'calling',
        provider_object_id: null,
        lease_until: new Date(now.getTime() + providerOperationLeaseMs).toISOString(),
        last_error: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .execute();

    let result: ResultOf<K>;
    try {
      result = (await withTimeout(definition.call(this.providers, request, id), providerCallTimeoutMs, 'the provider')) as ResultOf<K>;
    } catch (error) {
      if (error instanceof ProviderRefusedError) {
        await this.finish(id, 'undone', null, error);
        throw new DomainError('PROVIDER_REFUSED', `The provider refused the request: ${errorText(error)}`);
      }
      // The provider may or may not have created the object: the reaper replays the call, after a pause (the first
      // call may still be running there), and undoes what it finds.
      this.log.warn({ err: error, operationId: id, kind }, 'provider call failed; the operation will be undone');
      await this.releaseToReaper(id, 'calling', null, error, 0);
      throw providerUnavailable();
    }
    const objectId = definition.objectId(result);

    try {
      return await record(result, async (trx) => {
        const marked = await trx
          .updateTable('provider_operations')
          .set({ status: 'done', provider_object_id: objectId, request: '{}', lease_until: null, updated_at: this.clock.now().toISOString() })
          .where('id', '=', id)
          .where('status', '=', 'calling')
          .executeTakeFirst();
        // The lease ran out and the reaper is undoing the object: recording it now would point at a closed object.
        if (marked.numUpdatedRows !== 1n) throw providerUnavailable();
      });
    } catch (error) {
      await this.undoNow(id, definition, objectId, error);
      throw error;
    }
  }

  /** One pass of the reaper over abandoned operations; returns how many it acted on. */
  async undoAbandoned(): Promise<number> {
    const now = this.clock.now();
    const claimed = await claimDue<ProviderOperationsTable>(this.storage, {
      table: 'provider_operations',
      due: sql`status in ('calling', 'undoing')`,
      leaseColumn: 'lease_until',
      now: now.toISOString(),
      leaseUntil: new Date(now.getTime() + providerOperationLeaseMs).toISOString(),
      orderBy: 'lease_until',
      limit: providerOperationReaperBatchSize,
      set: { status: 'undoing', updated_at: now.toISOString() },
    });
    for (const operation of claimed) await this.undoClaimed(operation);
    return claimed.length;
  }

  /** The reaper's batch (workers/reaper.ts): up to `limit` operations finished (done, undone, failed) long before `now`. */
  async deleteFinished(now: Date, limit: number): Promise<number> {
    const before = new Date(now.getTime() - providerOperationRetentionMs).toISOString();
    return deleteDue(this.storage, {
      table: 'provider_operations',
      key: ['id'],
      due: sql`status in ('done', 'undone', 'failed') and updated_at < ${before}`,
      orderBy: 'updated_at',
      limit,
    });
  }

  private async undoClaimed(operation: ProviderOperationsTable): Promise<void> {
    const definition = definitionOf(operation.kind);
    try {
      const objectId =
        operation.provider_object_id ??
        definition.objectId(await withTimeout(definition.call(this.providers, JSON.parse(operation.request), operation.id), providerCallTimeoutMs, 'the provider'));
      await withTimeout(definition.undo(this.providers, objectId), providerCallTimeoutMs, 'the provider');
      await this.finish(operation.id, 'undone', objectId, null);
      this.log.info({ operationId: operation.id, kind: operation.kind, objectId }, 'abandoned provider operation undone');
    } catch (error) {
      const attempts = Number(operation.undo_attempts) + 1;
      if (attempts >= providerUndoAttemptsMax) {
        this.log.error({ err: error, operationId: operation.id, kind: operation.kind }, 'provider operation could not be undone; left failed for an operator');
        await this.finish(operation.id, 'failed', operation.provider_object_id, error, attempts);
      } else {
        await this.releaseToReaper(operation.id, 'undoing', operation.provider_object_id, error, attempts, attempts);
      }
    }
  }

  /** Step 4: the record failed; undo at once, or leave it to the reaper if the undo fails too. */
  private async undoNow(id: string, definition: AnyOperation, objectId: string, cause: unknown): Promise<void> {
    const now = this.clock.now();
    const taken = await this.storage.db
      .updateTable('provider_operations')
      // A fresh lease: the request's own may have run out, and the reaper must not undo the object at the same time.
      .set({
        status: 'undoing',
        provider_object_id: objectId,
        lease_until: new Date(now.getTime() + providerOperationLeaseMs).toISOString(),
        last_error: errorText(cause),
        updated_at: now.toISOString(),
      })
      .where('id', '=', id)
      .where('status', '=', 'calling')
      .executeTakeFirst();
    if (taken.numUpdatedRows !== 1n) return; // the reaper has it
    try {
      await withTimeout(definition.undo(this.providers, objectId), providerCallTimeoutMs, 'the provider');
      await this.finish(id, 'undone', objectId, cause);
    } catch (error) {
      this.log.warn({ err: error, operationId: id }, 'provider undo failed; the reaper will retry');
      await this.releaseToReaper(id, 'undoing', objectId, error, 0);
    }
  }

  /** Hands the operation to the reaper, due after the backoff of `backoffAttempt` (0 for a first hand-off). */
  private async releaseToReaper(
    id: string,
    status: 'calling' | 'undoing',
    objectId: string | null,
    error: unknown,
    backoffAttempt: number,
    undoAttempts?: number,
  ): Promise<void> {
    const now = this.clock.now();
    await this.storage.db
      .updateTable('provider_operations')
      .set({
        status,
        provider_object_id: objectId,
        lease_until: new Date(now.getTime() + undoBackoffMs(backoffAttempt)).toISOString(),
        last_error: errorText(error),
        updated_at: now.toISOString(),
        ...(undoAttempts === undefined ? {} : { undo_attempts: undoAttempts }),
      })
      .where('id', '=', id)
      .where('status', 'in', ['calling', 'undoing'])
      .execute();
  }

  /** Ends an operation; the request it replayed (names of people and companies) is no longer kept. */
  private async finish(id: string, status: 'undone' | 'failed', objectId: string | null, cause: unknown, undoAttempts?: number): Promise<void> {
    await this.storage.db
      .updateTable('provider_operations')
      .set({
        status,
        provider_object_id: objectId,
        request: status === 'undone' ? '{}' : sql`request`,
        lease_until: null,
        last_error: cause === null ? null : errorText(cause),
        updated_at: this.clock.now().toISOString(),
        ...(undoAttempts === undefined ? {} : { undo_attempts: undoAttempts }),
      })
      .where('id', '=', id)
      .execute();
  }
}
