import { walletAmountMaxMinor } from '../../config/limits.js';
import { validationError } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { AmountError, parseAmount } from '../../ledger/amounts.js';
import { formatDecimal } from '../../ledger/money.js';
import { supportedPair, supportedPairsText, type Network } from '../../ledger/networks.js';

/** What a transfer or a deposit moves, checked: a supported pair and an amount in base units of the asset. */
export interface Movement {
  asset: CryptoAsset;
  network: Network;
  amountMinor: bigint;
}

/**
 * The asset, network and amount of a transfer or a deposit, or a 400 naming what is wrong: a pair outside the
 * catalogue, an amount of zero, with more decimals than the asset has, or above the largest single movement.
 */
export function parseMovement(input: { asset: string; network: string; amount: string | number }): Movement {
  const pair = supportedPair(input.asset, input.network);
  if (!pair) {
    throw validationError(
      [{ location: 'body', path: '', reason: `${input.asset} on ${input.network} is not supported; supported pairs: ${supportedPairsText()}` }],
      `Unsupported asset and network. Supported pairs: ${supportedPairsText()}.`,
    );
  }
  const amountError = (reason: string) => validationError([{ location: 'body', path: '/amount', reason }]);
  let amountMinor: bigint;
  try {
    amountMinor = parseAmount(input.amount, pair.asset);
  } catch (error) {
    if (error instanceof AmountError) throw amountError(error.message);
    throw error;
  }
  if (amountMinor === 0n) throw amountError('must be greater than 0');
  if (amountMinor > walletAmountMaxMinor) throw amountError(`must be at most ${formatDecimal(walletAmountMaxMinor, pair.asset)} ${pair.asset}`);
  return { ...pair, amountMinor };
}
