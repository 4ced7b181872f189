import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { ledgerEntry, type Posting } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement, moneyMovement } from '../../ledger/money-movement.js';
import { newUnitOfWork, plannedAnswer, plannedEvent, type KeyedAnswer, type MovedRecord } from '../../ledger/unit-of-work.js';
import type { Network } from '../../ledger/networks.js';
import { sandboxTransactionHash } from '../../providers/sandbox/custody.js';
import type { Storage } from '../../storage/database.js';
import { claimDueSettlements, forEachClaimed } from '../../workers/claim.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { addArrival } from './arrival.js';
import { parseMovement } from './movement-input.js';
import type { WalletOwnership } from './ownership.js';
import { presentWalletTransfer } from './presenter.js';
import { findReceiveAddress, findWalletTransfer, type WalletTransferRow } from './repository.js';
import type { WalletDepositInput, WalletTransferRecord } from './schemas.js';

export type TransferOutcome = 'completed' | 'failed';

/** Sandbox magic (docs/wallets.md): a note starting with "sandbox-fail" makes automatic settlement fail. */
const failingNotePrefix = 'sandbox-fail';

const addressRequired = (asset: CryptoAsset, network: Network) =>
  new DomainError('ADDRESS_REQUIRED', `The wallet has no ${asset} address on ${network}; create one with POST /wallets/{walletId}/addresses first.`, { asset, network });

/**
 * The simulated chain (docs/architecture.md, Sandbox simulation): deposits arriving at a wallet's address, and the settlement of transfers out —
 * `completed` records the network's transaction id and moves the money out of the wallet to the outside world
 * (clearing), `failed` releases the reservation. Each is one money movement; a transfer settles once.
 */
export class WalletSandbox {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly ownership: WalletOwnership,
    /** How long a claimed settlement is this instance's (SETTLEMENT_LEASE_SECONDS). */
    private readonly settlementLeaseMs: number,
  ) {}

  /** Credits the wallet as an on-chain deposit to its address of the pair; recorded as a completed incoming transfer. */
  async deposit(caller: AuthenticatedKey, walletId: string, input: WalletDepositInput, key?: KeyedAnswer): Promise<MovedRecord<WalletTransferRecord>> {
    const movement = parseMovement(input);
    const wallet = await this.ownership.require(caller.customerId, walletId);
    const address = await findReceiveAddress(this.storage.db, caller.customerId, wallet, movement.asset, movement.network);
    if (!address) throw addressRequired(movement.asset, movement.network);
    const nowText = this.clock.now().toISOString();
    const postings: Posting[] = [
      { account: { kind: 'system', code: 'clearing' }, asset: movement.asset, amount: -movement.amountMinor },
      { account: { kind: 'wallet', id: wallet, asset: movement.asset }, asset: movement.asset, amount: movement.amountMinor },
    ];
    const work = newUnitOfWork();
    const { row, record } = addArrival(work, nowText, {
      customerId: caller.customerId,
      walletId: wallet,
      asset: movement.asset,
      network: movement.network,
      amountMinor: movement.amountMinor,
      address: address.address,
      note: 'Deposit (sandbox)',
    });
    if (key) work.answer = plannedAnswer(key, 201, record);
    const entry = ledgerEntry('wallet_deposit', row.id, postings);
    const result = await executeMoneyMovement(this.storage, { customerId: caller.customerId, createdAt: nowText, entry, work });
    return { record, answerStored: result.answerBody !== null };
  }

  async settle(customerId: string, transferId: string, outcome: TransferOutcome): Promise<WalletTransferRecord> {
    const row = await findWalletTransfer(this.storage.db, customerId, transferId.toLowerCase());
    if (!row) throw notFound('wallet transfer');
    return presentWalletTransfer(await this.apply(row, outcome, 'Rejected by the network (sandbox)'));
  }

  /** Settles the transfers whose automatic settlement time has come, each claimed first (workers/claim.ts). */
  async settleDueTransfers(): Promise<number> {
    const due = await claimDueSettlements<WalletTransferRow>(this.storage, 'wallet_transfers', this.clock.now(), this.settlementLeaseMs);
    return forEachClaimed(due, (row) => {
      const outcome = row.note?.toLowerCase().startsWith(failingNotePrefix) ? 'failed' : 'completed';
      return this.apply(row, outcome, 'Rejected by the network (sandbox note)');
    });
  }

  private async apply(row: WalletTransferRow, outcome: TransferOutcome, failureReason: string): Promise<WalletTransferRow> {
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
      tx_hash: completed ? sandboxTransactionHash(row.network as Network, row.id) : null,
      failure_reason: completed ? null : failureReason,
      settle_at: null,
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
    settlement.work.guards.push({
      table: 'wallet_transfers',
      match: { id: row.id, status: 'pending' },
      set: { status: settled.status, tx_hash: settled.tx_hash, failure_reason: settled.failure_reason, settle_at: null, completed_at: settled.completed_at, updated_at: nowText },
      error: 'INVALID_STATUS_TRANSITION',
      message: 'The transfer was settled meanwhile.',
      details: { to: outcome },
    });
    const record = presentWalletTransfer(settled);
    settlement.work.events.push(
      plannedEvent(row.customer_id, 'wallet_transfer.status_updated', record, nowText),
      plannedEvent(row.customer_id, completed ? 'wallet_transfer.completed' : 'wallet_transfer.failed', record, nowText),
    );
    await executeMoneyMovement(this.storage, settlement);
    return settled;
  }
}
