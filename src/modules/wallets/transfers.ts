import type { Clock } from '../../clock.js';
import { pageLimitMax } from '../../config/limits.js';
import { notFound, validationError } from '../../errors.js';
import { newId } from '../../ids.js';
import { canonicalAddress } from '../../ledger/address-formats.js';
import { holdsOnly } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement } from '../../ledger/money-movement.js';
import { newUnitOfWork, plannedAnswer, plannedEvent, type KeyedAnswer, type MovedRecord, type NewResourceRows } from '../../ledger/unit-of-work.js';
import { addressFormatOf, networkRegistry } from '../../ledger/networks.js';
import { providerId } from '../../providers/provider-ids.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { parseMovement } from './movement-input.js';
import { presentWalletTransfer } from './presenter.js';
import { findWalletTransfer, listWalletTransfers, type WalletTransferRow } from './repository.js';
import type { CreateWalletTransferInput, WalletTransferRecord } from './schemas.js';
import type { WalletOwnership } from './ownership.js';

/**
 * On-chain transfers out of a wallet (docs/wallets.md "Transfers"). Creating one reserves its amount from the
 * wallet's available balance of the asset, in the money movement that records it (and, under an Idempotency-Key, stores
 * the answer with it); settlement moves the money out or releases the reservation (sandbox.ts in the sandbox).
 */
export class WalletTransferService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly ownership: WalletOwnership,
    /** What a custodian answering on a timer of its own (the sandbox) writes with a new transfer. */
    private readonly timerRows: NewResourceRows,
  ) {}

  async create(caller: AuthenticatedKey, walletId: string, input: CreateWalletTransferInput, key?: KeyedAnswer): Promise<MovedRecord<WalletTransferRecord>> {
    const movement = parseMovement(input);
    const destination = canonicalAddress(addressFormatOf(movement.network), input.destination);
    if (destination === undefined) {
      const reason = `is not a valid ${networkRegistry[movement.network].name} address` + (addressFormatOf(movement.network) === 'evm' ? ' (lower case, or with a correct EIP-55 checksum)' : '');
      throw validationError([{ location: 'body', path: '/destination', reason }]);
    }
    const wallet = await this.ownership.require(caller.customerId, walletId);
    const now = this.clock.now();
    const nowText = now.toISOString();
    const row: WalletTransferRow = {
      id: newId(),
      customer_id: caller.customerId,
      wallet_id: wallet,
      fr_transfer_id: providerId('wtx'),
      direction: 'outgoing',
      status: 'pending',
      asset: movement.asset,
      network: movement.network,
      amount_minor: movement.amountMinor,
      destination,
      note: input.note ?? null,
      tx_hash: null,
      failure_reason: null,
      completed_at: null,
      created_at: nowText,
      updated_at: nowText,
    };
    const record = presentWalletTransfer(row);
    // The amount is held now; the settlement moves it out of the wallet or releases it.
    const work = newUnitOfWork();
    work.rows.push({ table: 'wallet_transfers', values: row }, ...(await this.timerRows(row.id, caller.customerId, now)));
    work.events.push(plannedEvent(caller.customerId, 'wallet_transfer.created', record, nowText));
    if (key) work.answer = plannedAnswer(key, 201, record);
    const entry = holdsOnly('wallet_transfer_reserve', row.id, [{ walletId: wallet, asset: movement.asset, delta: movement.amountMinor }]);
    const result = await executeMoneyMovement(this.storage, { customerId: caller.customerId, createdAt: nowText, entry, work });
    return { record, answerStored: result.answerBody !== null };
  }

  async get(caller: AuthenticatedKey, id: string): Promise<WalletTransferRecord> {
    const row = await findWalletTransfer(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('wallet transfer');
    return presentWalletTransfer(row);
  }

  async list(caller: AuthenticatedKey, walletId: string, page: number, limit: number) {
    const wallet = await this.ownership.require(caller.customerId, walletId);
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await listWalletTransfers(this.storage.db, caller.customerId, wallet, (page - 1) * size, size);
    return { data: rows.map(presentWalletTransfer), meta: { pagination: { page, limit: size, total: Number(total) } } };
  }
}
