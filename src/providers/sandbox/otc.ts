import type { CryptoAsset } from '../../ledger/assets.js';
import type { OtcPriceProvider } from '../otc.js';
import { sandboxOtcPriceCycleMs } from '../../config/limits.js';

/** Reference mid rates of the simulation, in 10^-8 units of the asset per EUR: 1 EUR = 1.08 USD, 1 EURC. */
const referenceRates: Partial<Record<CryptoAsset, bigint>> = { USDC: 108_000_000n, USDT: 108_000_000n, EURC: 100_000_000n };
/** The simulated market moves the rate by up to ±0.2 % (20 of 10,000) over a cycle of ten minutes. */
const swingPerTenThousand = 20n;
/** The cycle as 60 whole steps, so the rate is an exact function of time and changes every 10 s. */
const stepsPerCycle = 60;

/**
 * A mid rate that moves a little over time, deterministically from the clock: a triangle wave around the reference
 * rate, so tests that move the injectable clock see it change, and two instances quote alike.
 */
export class SandboxOtcPriceProvider implements OtcPriceProvider {
  readonly assets = Object.keys(referenceRates) as CryptoAsset[];

  async midRate(asset: CryptoAsset, at: Date): Promise<bigint> {
    const reference = referenceRates[asset];
    if (reference === undefined) throw new Error(`the sandbox quotes no ${asset}`);
    const step = Math.floor((at.getTime() % sandboxOtcPriceCycleMs) / (sandboxOtcPriceCycleMs / stepsPerCycle));
    // -15 … +15 … -15 over the cycle: a triangle between -quarter and +quarter of the steps.
    const quarter = stepsPerCycle / 4;
    const position = BigInt(step < stepsPerCycle / 2 ? step - quarter : stepsPerCycle - step - quarter);
    return reference + (reference * swingPerTenThousand * position) / (10_000n * BigInt(quarter));
  }
}
