import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import type { Posting } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { plannedEvent } from '../../ledger/unit-of-work.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { Storage } from '../../storage/database.js';
import { presentWalletTransfer } from './presenter.js';
import { findWalletTransfer, findWalletTransferByReference, type WalletTransferRow } from './repository.js';
import type { WalletTransferRecord } from './schemas.js';

export type TransferOutcome = 'completed' | 'failed';

/** Said of a failure whose custodian gave no reason. */
const unexplainedFailure = 'Rejected by the custodian';

/**
 * The wallet transfer lifecycle (docs/wallets.md), whatever the custodian: an outgoing transfer goes pending →
 * completed | failed, both final, moved by the provider events `wallet_transfer.completed` (payload `{ txHash }`, the
 * network's transaction id) and `wallet_transfer.failed` (payload `{ reason? }`). `completed` moves the money out of
 * the wallet to the outside world (clearing), `failed` releases the reservation; either way the reservation goes.
 * Each is one money movement with the event's applied mark; a transfer settles once.
 */
export class WalletTransferLifecycle implements Lifecycle<'wallet_transfer'> {
  readonly resource = 'wallet_transfer';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  /** The caller's transfer as a custodian knows it (404 for anyone else's). */
  async find(customerId: string, transferId: string): Promise<Pick<WalletTransferRow, 'id' | 'fr_transfer_id' | 'network' | 'note' | 'status'>> {
    const row = await findWalletTransfer(this.storage.db, customerId, transferId.toLowerCase());
    if (!row) throw notFound('wallet transfer');
    return row;
  }

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<WalletTransferRecord> {
    const row = await findWalletTransferByReference(this.storage.db, event.reference);
    if (!row) throw notFound('wallet transfer');
    const outcome: TransferOutcome = event.type === 'wallet_transfer.completed' ? 'completed' : 'failed';
    const txHash = typeof event.payload.txHash === 'string' ? event.payload.txHash : null;
    const reason = typeof event.payload.reason === 'string' ? event.payload.reason : unexplainedFailure;
    return presentWalletTransfer(await this.settle(row, outcome, outcome === 'completed' ? txHash : reason, applied));
  }

  /** `detail`: the transaction id of a completed transfer, the reason of a failed one. */
  private async settle(row: WalletTransferRow, outcome: TransferOutcome, detail: string | null, applied: AppliedMark): Promise<WalletTransferRow> {
    if (row.status !== 'pending' || row.direction !== 'outgoing') {
      throw new DomainError('INVALID_STATUS_TRANSITION', `A ${row.status} transfer cannot become ${outcome}.`, { from: row.status, to: outcome });
    }
    const nowText = this.clock.now().toISOString();
    const asset = row.asset as CryptoAsset;
    const amount = BigInt(row.amount_minor);
    const completed = outcome === 'completed';
    const settled: WalletTransferRow = {
      ...row,
      status: outcome,
      tx_hash: completed ? detail : null,
      failure_reason: completed ? null : detail,
      completed_at: completed ? nowText : null,
      updated_at: nowText,
    };
    // The reservation goes either way; a completed transfer's money leaves the wallet for the outside world.
    const hold = { walletId: row.wallet_id, asset, delta: -amount };
    const postings: Posting[] = completed
      ? [
          { account: { kind: 'wallet', id: row.wallet_id, asset }, asset, amount: -amount },
          { account: { kind: 'system', code: 'clearing' }, asset, amount },
        ]
      : [];
    const settlement = moneyMovement(row.customer_id, nowText, completed ? 'wallet_transfer_completed' : 'wallet_transfer_failed', row.id, postings, [hold]);
    settlement.work.guards.push(
      {
        table: 'wallet_transfers',
        match: { id: row.id, status: 'pending' },
        set: { status: settled.status, tx_hash: settled.tx_hash, failure_reason: settled.failure_reason, completed_at: settled.completed_at, updated_at: nowText },
        error: 'INVALID_STATUS_TRANSITION',
        message: 'The transfer was settled meanwhile.',
        details: { to: outcome },
      },
      applied.guard,
    );
    const record = presentWalletTransfer(settled);
    settlement.work.events.push(
      plannedEvent(row.customer_id, 'wallet_transfer.status_updated', record, nowText),
      plannedEvent(row.customer_id, completed ? 'wallet_transfer.completed' : 'wallet_transfer.failed', record, nowText),
    );
    await executeMoneyMovement(this.storage, settlement);
    return settled;
  }
}
