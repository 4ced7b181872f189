import type { Clock } from '../../clock.js';
import { DomainError } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { ledgerEntry, type Posting } from '../../ledger/ledger-entry.js';
import { executeMoneyMovement } from '../../ledger/money-movement.js';
import { newUnitOfWork, plannedAnswer, type KeyedAnswer, type MovedRecord } from '../../ledger/unit-of-work.js';
import type { Network } from '../../ledger/networks.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { addArrival } from './arrival.js';
import { parseMovement } from './movement-input.js';
import type { WalletOwnership } from './ownership.js';
import { findReceiveAddress } from './repository.js';
import type { WalletDepositInput, WalletTransferRecord } from './schemas.js';

const addressRequired = (asset: CryptoAsset, network: Network) =>
  new DomainError('ADDRESS_REQUIRED', `The wallet has no ${asset} address on ${network}; create one with POST /wallets/{walletId}/addresses first.`, { asset, network });

/**
 * Deposits arriving at a wallet's address from outside: the money enters the wallet from clearing, recorded as a
 * completed incoming transfer, in one money movement (with the stored answer when the caller gave an Idempotency-Key).
 */
export class WalletDeposits {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly ownership: WalletOwnership,
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
}
