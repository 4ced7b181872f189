import type { Kysely, Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import { DomainError, notFound, validationError } from '../errors.js';
import type { EventType } from '../events/catalog.js';
import { appendEvent } from '../events/outbox.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../providers/events.js';
import { SandboxStatuses } from '../providers/sandbox/statuses.js';
import type { Storage } from '../storage/database.js';
import type { Database } from '../storage/tables.js';
import { statusChangeAttemptsMax } from '../config/limits.js';
import { findCustomerById } from './customers/index.js';
import type { ModuleContext } from './module-context.js';

type Db = Kysely<Database> | Transaction<Database>;

/** What `changeStatus` needs to know about one kind of resource. */
interface StatusChange<Row extends { status: string }, Presented> {
  /** For the 404 message: "No such fiat account." */
  resource: string;
  /** The caller's row, or undefined (another customer's id is indistinguishable from an unknown one). */
  find(db: Db): Promise<Row | undefined>;
  /** Sets status and updated_at where the row still has status `from`; false when it no longer has. */
  transition(trx: Transaction<Database>, from: string, changes: { status: string; updated_at: string }): Promise<boolean>;
  present(row: Row): Presented;
  /** Statuses that are final: nothing moves out of them. */
  final: readonly string[];
  event: EventType;
}

/**
 * Sets a resource's status as its provider reported (docs/payments.md "Account and payee status"), marking the
 * provider event applied with it. The status it already has answers the record and changes nothing; a final status answers 422
 * INVALID_STATUS_TRANSITION. Otherwise the row and its `<resource>.status_updated` event (data: the record, read back
 * in the same transaction, so a fiat account's balance is the committed one) are written together. The update is
 * guarded by the status read before it; when a concurrent change got there first, the decision is made again.
 */
async function changeStatus<Row extends { status: string }, Presented>(
  storage: Storage,
  clock: Clock,
  customerId: string,
  to: string,
  change: StatusChange<Row, Presented>,
  applied: AppliedMark,
): Promise<Presented> {
  for (let attempt = 1; ; attempt += 1) {
    const row = await change.find(storage.db);
    if (!row) throw notFound(change.resource);
    const from = row.status;
    if (from === to) {
      await storage.transaction((trx) => applied.inTransaction(trx));
      return change.present(row);
    }
    if (change.final.includes(from)) {
      throw new DomainError('INVALID_STATUS_TRANSITION', `A ${change.resource} that is ${from} cannot become ${to}.`, { from, to });
    }
    const now = clock.now();
    const record = await storage.transaction(async (trx) => {
      if (!(await change.transition(trx, from, { status: to, updated_at: now.toISOString() }))) return undefined;
      await applied.inTransaction(trx);
      const updated = await change.find(trx);
      if (!updated) throw notFound(change.resource);
      const presented = change.present(updated);
      await appendEvent(trx, { customerId, type: change.event, data: presented, createdAt: now });
      return presented;
    });
    if (record !== undefined) return record;
    if (attempt >= statusChangeAttemptsMax) {
      throw new DomainError('INVALID_STATUS_TRANSITION', `The ${change.resource} changed status meanwhile; read it again.`, { to });
    }
  }
}

/** A row whose status only its provider changes: its id, its customer and the provider's reference of it. */
interface ProviderOwnedRow {
  id: string;
  customer_id: string;
  status: string;
}

/** What the status lifecycle of one resource needs to know about it. */
interface ProviderStatusSpec<Row extends ProviderOwnedRow, Presented> {
  statuses: readonly string[];
  /** Statuses that are final: nothing moves out of them. */
  final: readonly string[];
  find(db: Db, customerId: string, id: string): Promise<Row | undefined>;
  findByReference(db: Db, reference: string): Promise<Row | undefined>;
  referenceOf(row: Row): string;
  transition(trx: Transaction<Database>, customerId: string, id: string, from: string, changes: { status: string; updated_at: string }): Promise<boolean>;
  present(row: Row, ownerBusinessId: string): Presented;
  /** After a change: what this process cached of the customer's statuses is forgotten. */
  changed(customerId: string, id: string): void;
}

/**
 * What the plugin of a module whose statuses only its provider changes takes: its services and, in the sandbox, the
 * simulated bank's status changes.
 */
export type WithProviderStatuses<Services, Presented> = Services & { readonly sandbox: SandboxStatuses<Presented> | undefined };

/** The resources whose status only their provider changes. */
type ProviderStatusResource = 'fiat_account' | 'virtual_account' | 'payee';

/**
 * A resource's status lifecycle, registered with the provider events inbox, and in the sandbox the simulated bank
 * that reports its status changes (POST /sandbox/<resources>/{id}/status); undefined elsewhere.
 */
export function providerStatuses<Row extends ProviderOwnedRow, Presented>(
  context: ModuleContext,
  resource: ProviderStatusResource,
  spec: ProviderStatusSpec<Row, Presented>,
): SandboxStatuses<Presented> | undefined {
  const lifecycle = new ProviderStatusLifecycle(resource, context.storage, context.clock, spec);
  context.providerEvents.register(lifecycle);
  return context.config.apiEnvironment === 'sandbox' ? new SandboxStatuses<Presented>(context.providerEvents, `${resource}.status_changed`, lifecycle) : undefined;
}

/**
 * The lifecycle of a status only the provider changes (accounts, virtual accounts, payees; docs/payments.md "Account
 * and payee status"): the provider event `<resource>.status_changed` with payload `{ status }` sets it, with
 * `<resource>.status_updated`, unless it is final (422 INVALID_STATUS_TRANSITION).
 */
class ProviderStatusLifecycle<Resource extends ProviderStatusResource, Row extends ProviderOwnedRow, Presented> implements Lifecycle<Resource> {
  /** For messages: "fiat account". */
  private readonly name: string;
  private readonly event: EventType;

  constructor(
    readonly resource: Resource,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly spec: ProviderStatusSpec<Row, Presented>,
  ) {
    this.name = resource.replaceAll('_', ' ');
    this.event = `${resource}.status_updated`;
  }

  /** The provider's reference of the caller's resource (404 for anyone else's). */
  async referenceOf(customerId: string, id: string): Promise<string> {
    const row = await this.spec.find(this.storage.db, customerId, id.toLowerCase());
    if (!row) throw notFound(this.name);
    return this.spec.referenceOf(row);
  }

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<Presented> {
    const { spec } = this;
    const found = await spec.findByReference(this.storage.db, event.reference);
    if (!found) throw notFound(this.name);
    const status = typeof event.payload.status === 'string' ? event.payload.status.toLowerCase() : undefined;
    if (status === undefined || !spec.statuses.includes(status)) {
      throw validationError([{ location: 'body', path: '/payload/status', reason: `must be one of ${spec.statuses.join(', ')}` }], 'The provider event is not valid.');
    }
    const customerId = found.customer_id;
    const owner = await findCustomerById(this.storage.db, customerId);
    if (!owner) throw notFound(this.name);
    const record = await changeStatus(
      this.storage,
      this.clock,
      customerId,
      status,
      {
        resource: this.name,
        find: (db) => spec.find(db, customerId, found.id),
        transition: (trx, from, changes) => spec.transition(trx, customerId, found.id, from, changes),
        present: (row) => spec.present(row, owner.fr_owner_business_id),
        final: spec.final,
        event: this.event,
      },
      applied,
    );
    spec.changed(customerId, found.id);
    return record;
  }
}
