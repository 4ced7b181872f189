import type { Clock } from '../../clock.js';
import { DomainError, notFound, validationError } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { ledgerEntry, type Posting } from '../../ledger/ledger-entry.js';
import { formatDecimal } from '../../ledger/money.js';
import { executeMoneyMovement } from '../../ledger/money-movement.js';
import type { Network } from '../../ledger/networks.js';
import { newUnitOfWork, plannedAnswer, type KeyedAnswer, type MovedRecord } from '../../ledger/unit-of-work.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { SandboxDeposits } from '../../providers/sandbox/deposits.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { addArrival } from './arrival.js';
import { parseMovement } from './movement-input.js';
import type { WalletOwnership } from './ownership.js';
import { findAddressOfDeposit, findReceiveAddress, findWalletTransferByReference } from './repository.js';
import type { WalletDepositInput, WalletTransferRecord } from './schemas.js';

const addressRequired = (asset: CryptoAsset, network: Network) =>
  new DomainError('ADDRESS_REQUIRED', `The wallet has no ${asset} address on ${network}; create one with POST /wallets/{walletId}/addresses first.`, { asset, network });

/** The payload `{ address, asset, network, amount, txHash }` of a `wallet_deposit.received` event, checked as a deposit's body is. */
function chainTransferOf(payload: Record<string, unknown>) {
  const text = (name: string) => (typeof payload[name] === 'string' && payload[name].length > 0 ? payload[name] : undefined);
  const [address, asset, network, amount, txHash] = ['address', 'asset', 'network', 'amount', 'txHash'].map(text);
  if (!address || !asset || !network || !amount || !txHash) {
    throw validationError([{ location: 'body', path: '/payload', reason: 'must have address, asset, network, amount (a decimal string) and txHash' }], 'The provider event is not valid.');
  }
  return { ...parseMovement({ asset, network, amount }), address, txHash };
}

/**
 * Deposits arriving at a wallet's address from outside, whatever the custodian: the provider event
 * `wallet_deposit.received` (reference: the custodian's id of the incoming transfer) credits the wallet owning the
 * address from clearing, recorded as a completed incoming transfer with that id and the chain's transaction id, in
 * one money movement with the event's applied mark (and the reporter's stored answer when it applies the event for a
 * request with an Idempotency-Key). A transfer the custodian reported already is refused (422
 * INVALID_STATUS_TRANSITION), so a deposit is credited once whichever event reports it.
 */
export class WalletDepositLifecycle implements Lifecycle<'wallet_deposit'> {
  readonly resource = 'wallet_deposit';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<MovedRecord<WalletTransferRecord>> {
    const movement = chainTransferOf(event.payload);
    const address = await findAddressOfDeposit(this.storage.db, movement.address, movement.asset, movement.network);
    if (!address) throw notFound('address');
    if (await findWalletTransferByReference(this.storage.db, event.reference)) {
      throw new DomainError('INVALID_STATUS_TRANSITION', 'The deposit was received already.', { reference: event.reference });
    }
    const nowText = this.clock.now().toISOString();
    const postings: Posting[] = [
      { account: { kind: 'system', code: 'clearing' }, asset: movement.asset, amount: -movement.amountMinor },
      { account: { kind: 'wallet', id: address.wallet_id, asset: movement.asset }, asset: movement.asset, amount: movement.amountMinor },
    ];
    const work = newUnitOfWork();
    const { row, record } = addArrival(work, nowText, {
      customerId: address.customer_id,
      walletId: address.wallet_id,
      asset: movement.asset,
      network: movement.network,
      amountMinor: movement.amountMinor,
      address: address.address,
      // The provider that reported it: "Deposit (sandbox)" for the sandbox's simulation.
      note: `Deposit (${event.provider})`,
      reported: { frTransferId: event.reference, txHash: movement.txHash },
    });
    work.guards.push(applied.guard);
    if (applied.answer) work.answer = plannedAnswer(applied.answer, 201, record);
    const entry = ledgerEntry('wallet_deposit', row.id, postings);
    const result = await executeMoneyMovement(this.storage, { customerId: address.customer_id, createdAt: nowText, entry, work });
    return { record, answerStored: result.answerBody !== null };
  }
}

/**
 * The sandbox's deposit into a caller's wallet (POST /sandbox/wallets/{id}/deposits): the request is checked here, then
 * the simulated custodian reports the arrival at the wallet's address of the pair, applied at once by the lifecycle.
 */
export class WalletDeposits {
  constructor(
    private readonly storage: Storage,
    private readonly ownership: WalletOwnership,
    private readonly custodian: SandboxDeposits,
  ) {}

  /** Credits the wallet as an on-chain deposit to its address of the pair; recorded as a completed incoming transfer. */
  async deposit(caller: AuthenticatedKey, walletId: string, input: WalletDepositInput, key?: KeyedAnswer): Promise<MovedRecord<WalletTransferRecord>> {
    const movement = parseMovement(input);
    const wallet = await this.ownership.require(caller.customerId, walletId);
    const address = await findReceiveAddress(this.storage.db, caller.customerId, wallet, movement.asset, movement.network);
    if (!address) throw addressRequired(movement.asset, movement.network);
    const amount = formatDecimal(movement.amountMinor, movement.asset);
    return (await this.custodian.chainTransfer({ address: address.address, asset: movement.asset, network: movement.network, amount }, key)) as MovedRecord<WalletTransferRecord>;
  }
}
