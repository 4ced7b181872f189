import type { TestClockTime } from '../../clock.js';
import { newId } from '../../ids.js';
import type { Network } from '../../ledger/networks.js';
import type { WalletTransfersTable } from '../../storage/tables.js';
import type { ReportedProviderEvent } from '../events.js';
import type { ProviderEventInbox } from '../inbox.js';
import { sandboxTransactionHash } from './custody.js';
import { sandboxProviderName } from './name.js';
import type { FiredTimer, SandboxTimers } from './timers.js';

/** Sandbox magic (docs/wallets.md): a note starting with "sandbox-fail" makes automatic settlement fail. */
const failingNotePrefix = 'sandbox-fail';
const networkRejection = 'Rejected by the network (sandbox)';
const noteRejection = 'Rejected by the network (sandbox note)';

type TransferAtCustodian = Pick<WalletTransfersTable, 'id' | 'fr_transfer_id' | 'network' | 'note' | 'status'>;

/** What the simulated custodian needs to know of the wallets module: a caller's transfer (404 for anyone else's). */
export interface WalletTransferLookup {
  find(customerId: string, transferId: string): Promise<TransferAtCustodian>;
}

/**
 * The simulated chain's side of wallet transfers. It reports outcomes as provider events, applied at once through
 * the inbox by the wallet transfer lifecycle (modules/wallets/lifecycle.ts); it moves no money. A completed transfer
 * gets a transaction id in its network's format, derived from the transfer's id (sandboxTransactionHash). Outcomes
 * come from its timer (timers.ts: SANDBOX_AUTO_SETTLE_MS after the transfer's creation), its magic (a note starting with "sandbox-fail" fails) and
 * POST /sandbox/wallet-transfers/{id}/settle.
 */
export class SandboxWalletTransfers {
  constructor(
    private readonly timers: SandboxTimers,
    private readonly inbox: ProviderEventInbox,
    private readonly transfers: WalletTransferLookup,
  ) {}

  async settle(customerId: string, transferId: string, outcome: 'completed' | 'failed'): Promise<unknown> {
    const transfer = await this.transfers.find(customerId, transferId);
    return this.timers.answered(transfer.id, () => this.inbox.report(this.outcomeOf(transfer, outcome, networkRejection, `simulation:${newId()}`)));
  }

  /** The timer: reports the outcome of each transfer whose time has come; returns how many it claimed. */
  settleDueTransfers(): Promise<number> {
    return this.timers.fireDue('wallet_transfer', (timer) => this.answer(timer));
  }

  /** The timer, for the transfers of a test clock's customer (an advance): every one due by the clock's time. */
  settleDueTransfersOnClock(testClock: TestClockTime): Promise<void> {
    return this.timers.fireAllDueOnClock('wallet_transfer', (timer) => this.answer(timer), testClock);
  }

  /** A transfer settled meanwhile (by the simulation route) needs no answer. */
  private async answer(timer: FiredTimer): Promise<undefined> {
    const transfer = await this.transfers.find(timer.customer_id, timer.id);
    if (transfer.status !== 'pending') return undefined;
    const outcome = transfer.note?.toLowerCase().startsWith(failingNotePrefix) ? 'failed' : 'completed';
    await this.inbox.report(this.outcomeOf(transfer, outcome, noteRejection, `timer:${transfer.id}`));
    return undefined;
  }

  private outcomeOf(transfer: TransferAtCustodian, outcome: 'completed' | 'failed', reason: string, idempotencyKey: string): ReportedProviderEvent {
    return {
      provider: sandboxProviderName,
      type: outcome === 'completed' ? 'wallet_transfer.completed' : 'wallet_transfer.failed',
      reference: transfer.fr_transfer_id,
      idempotencyKey,
      payload: outcome === 'completed' ? { txHash: sandboxTransactionHash(transfer.network as Network, transfer.id) } : { reason },
    };
  }
}
