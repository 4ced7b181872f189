import { newId } from '../../ids.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { plannedEvent, type UnitOfWork } from '../../ledger/unit-of-work.js';
import type { Network } from '../../ledger/networks.js';
import { providerId } from '../../providers/provider-ids.js';
import { sandboxTransactionHash } from '../../providers/sandbox/custody.js';
import { presentWalletTransfer } from './presenter.js';
import type { WalletTransferRow } from './repository.js';
import type { WalletTransferRecord } from './schemas.js';

export interface Arrival {
  customerId: string;
  walletId: string;
  asset: CryptoAsset;
  network: Network;
  amountMinor: bigint;
  /** The wallet's address it arrived at. */
  address: string;
  note: string;
  /**
   * What the custodian reported of it: its id of the transfer and the chain's transaction id. Without (an OTC order's
   * credit in the sandbox), a new id and a transaction id derived in the network's format.
   */
  reported?: { frTransferId: string; txHash: string };
}

/**
 * Money arriving at a wallet (a deposit, an OTC order's credit in the sandbox): a completed incoming transfer with a
 * transaction id in the network's format, added to the unit of work of the movement that credits the wallet, with its two
 * events. The movement's ledger entry is the caller's.
 */
export function addArrival(work: UnitOfWork, at: string, arrival: Arrival): { row: WalletTransferRow; record: WalletTransferRecord } {
  const id = newId();
  const row: WalletTransferRow = {
    id,
    customer_id: arrival.customerId,
    wallet_id: arrival.walletId,
    fr_transfer_id: arrival.reported?.frTransferId ?? providerId('wtx'),
    direction: 'incoming',
    status: 'completed',
    asset: arrival.asset,
    network: arrival.network,
    amount_minor: arrival.amountMinor,
    destination: arrival.address,
    note: arrival.note,
    tx_hash: arrival.reported?.txHash ?? sandboxTransactionHash(arrival.network, id),
    failure_reason: null,
    completed_at: at,
    created_at: at,
    updated_at: at,
  };
  work.rows.push({ table: 'wallet_transfers', values: row });
  const record = presentWalletTransfer(row);
  work.events.push(
    plannedEvent(arrival.customerId, 'wallet_transfer.created', record, at),
    plannedEvent(arrival.customerId, 'wallet_transfer.completed', record, at),
  );
  return { row, record };
}
