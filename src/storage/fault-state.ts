import type { FastifyBaseLogger } from 'fastify';
import type { Clock } from '../clock.js';
import type { Dialect } from './database.js';
import { storageFaultOf, type StorageFault } from './faults.js';

export interface NotedFault {
  readonly fault: StorageFault;
  /** When the fault was last seen. */
  readonly seenAt: Date;
  /** The driver's words for it (never a credential: pg and SQLite name no password). */
  readonly reason: string;
}

/**
 * What this process last saw of its storage: the fault requests and workers met, until something shows the storage
 * works again. Readiness reports it for a while (a full SQLite file is invisible to a cheap probe), the logs get one
 * line per change instead of one per failed request, and the metrics a gauge per fault.
 */
export class StorageFaultState {
  #noted: NotedFault | undefined;
  /** Told of every change: the fault now, or undefined once the storage works again. */
  onChange: ((fault: StorageFault | undefined) => void) | undefined;

  constructor(
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The fault behind `error`, noted (and logged when it is new), or undefined when `error` is no storage fault. */
  observe(error: unknown): StorageFault | undefined {
    const fault = storageFaultOf(error, this.dialect);
    if (fault === undefined) return undefined;
    const changed = this.#noted?.fault !== fault;
    this.#noted = { fault, seenAt: this.clock.now(), reason: (error as Error)?.message ?? String(error) };
    if (changed) {
      this.log.error({ storageFault: fault, reason: this.#noted.reason }, `storage fault: ${faultSentence[fault]}; answering ${fault === 'full' ? 507 : 503} until it passes`);
      this.onChange?.(fault);
    }
    return fault;
  }

  /** Something wrote or read successfully: a noted fault has passed. */
  recovered(fault?: StorageFault): void {
    if (this.#noted === undefined || (fault !== undefined && this.#noted.fault !== fault)) return;
    const { fault: was } = this.#noted;
    this.#noted = undefined;
    this.log.info({ storageFault: was }, 'storage fault passed: answering normally again');
    this.onChange?.(undefined);
  }

  /** The fault noted within the last `withinMs`, if any. */
  recent(withinMs: number): NotedFault | undefined {
    if (this.#noted === undefined) return undefined;
    return this.clock.now().getTime() - this.#noted.seenAt.getTime() <= withinMs ? this.#noted : undefined;
  }
}

const faultSentence: Record<StorageFault, string> = {
  unavailable: 'the database is unavailable',
  unwritable: 'the data cannot be written',
  full: 'the storage is full',
};
