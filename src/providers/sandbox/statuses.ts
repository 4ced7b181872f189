import { newId } from '../../ids.js';
import type { ProviderEventType } from '../events.js';
import type { ProviderEventInbox } from '../inbox.js';
import { sandboxProviderName } from './name.js';

/** What the simulated bank needs to know of a module whose statuses it sets: the reference of a caller's resource. */
export interface StatusReferences {
  referenceOf(customerId: string, id: string): Promise<string>;
}

/**
 * The simulated bank setting a status (POST /sandbox/fiat-accounts|virtual-accounts|payees/{id}/status): it reports
 * `<resource>.status_changed` as a provider event, applied at once through the inbox by the resource's status
 * lifecycle (modules/status-change.ts); it changes nothing itself.
 */
export class SandboxStatuses<Record = unknown> {
  constructor(
    private readonly inbox: ProviderEventInbox,
    private readonly type: Extract<ProviderEventType, `${string}.status_changed`>,
    private readonly resources: StatusReferences,
  ) {}

  async set(customerId: string, id: string, status: string): Promise<Record> {
    const reference = await this.resources.referenceOf(customerId, id);
    return (await this.inbox.report({ provider: sandboxProviderName, type: this.type, reference, idempotencyKey: `simulation:${newId()}`, payload: { status } })) as Record;
  }
}
