import { addressPayloadBytes, encodeAddress, encodeTransactionHash, transactionHashBytes } from '../../ledger/address-formats.js';
import { addressFormatOf, type Network } from '../../ledger/networks.js';
import type { CreateAddressRequest, CreatedAddress, CreatedWallet, CreateWalletRequest, CustodyProvider } from '../custody.js';
import { providerId } from '../provider-ids.js';
import { DerivedRandom } from './derived-random.js';

const sandboxCustodianName = 'sandbox';

/** A well-formed address of the network, from derived bytes: valid in format, owned by no one. */
function sandboxAddress(network: Network, random: DerivedRandom): string {
  const format = addressFormatOf(network);
  return encodeAddress(format, random.bytes(addressPayloadBytes[format]));
}

/**
 * The on-chain id the simulated network gives a transfer when it settles: well-formed for the network, derived from
 * the transfer's id (so settling is repeatable), on no real chain.
 */
export function sandboxTransactionHash(network: Network, transferId: string): string {
  const format = addressFormatOf(network);
  return encodeTransactionHash(format, new DerivedRandom(`tx:${transferId}`).bytes(transactionHashBytes[format]));
}

/**
 * The simulated custodian. Ids and addresses are derived from the idempotency key, so a repeated call answers the
 * same object and nothing needs undoing in a simulation that keeps no state.
 */
export class SandboxCustodyProvider implements CustodyProvider {
  async createWallet(request: CreateWalletRequest, idempotencyKey: string): Promise<CreatedWallet> {
    const random = new DerivedRandom(idempotencyKey);
    return { frWalletId: providerId('wal', random.hex(12)), provider: sandboxCustodianName, depositAddress: sandboxAddress(request.network, random) };
  }

  async archiveWallet(): Promise<void> {}

  async createAddress(request: CreateAddressRequest, idempotencyKey: string): Promise<CreatedAddress> {
    return { address: sandboxAddress(request.network, new DerivedRandom(idempotencyKey)), asset: request.asset, network: request.network };
  }

  async retireAddress(): Promise<void> {}
}
