import type { CryptoAsset } from '../ledger/assets.js';

/**
 * The liquidity side of the provider (docs/architecture.md, Layers): the price at which EUR buys a crypto asset. A rate is an integer
 * count of 10^-8 units of the asset per 1 EUR (config/limits.ts otcRateDecimals), so the arithmetic on it stays exact.
 * A real liquidity provider replaces the sandbox behind this interface.
 */
/**
 * The steps of a confirmed order (`otc_order.debited`, `settled`, `failed`) are reported by the liquidity provider as
 * provider events into the inbox (docs/providers.md "Reporting outcomes").
 */
export interface OtcPriceProvider {
  /** The assets EUR can be exchanged into. */
  readonly assets: readonly CryptoAsset[];
  /** The mid-market rate of EUR into `asset` at `at`, in 10^-8 units of the asset per EUR. */
  midRate(asset: CryptoAsset, at: Date): Promise<bigint>;
}
