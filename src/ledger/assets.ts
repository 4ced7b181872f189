/**
 * The one registry of assets (docs/assets.md): every module, schema and database CHECK derives its lists from
 * here. `scale` is the number of decimals of the smallest unit amounts are kept in (bigint base units): 2 for the
 * fiat currencies, 6 for the stablecoins, 8 for BTC (satoshi), 9 for SOL (lamport) and for ETH (gwei — 18 decimals,
 * wei, would not fit a 64-bit integer for balances above ~9.2 ETH; 10^9 ETH at scale 9 is 10^18, which does).
 */
const assetRegistry = {
  USD: { kind: 'fiat', scale: 2 },
  EUR: { kind: 'fiat', scale: 2 },
  GBP: { kind: 'fiat', scale: 2 },
  USDC: { kind: 'crypto', scale: 6 },
  USDT: { kind: 'crypto', scale: 6 },
  EURC: { kind: 'crypto', scale: 6 },
  BTC: { kind: 'crypto', scale: 8 },
  SOL: { kind: 'crypto', scale: 9 },
  ETH: { kind: 'crypto', scale: 9 },
} as const satisfies Record<string, { kind: 'fiat' | 'crypto'; scale: number }>;

export type Asset = keyof typeof assetRegistry;
export type FiatCurrency = { [A in Asset]: (typeof assetRegistry)[A]['kind'] extends 'fiat' ? A : never }[Asset];
export type CryptoAsset = Exclude<Asset, FiatCurrency>;

const assetCodes = Object.keys(assetRegistry) as Asset[];
/** The fiat currencies, in the order docs/spec.md §1 names them (USD, EUR, GBP). */
export const fiatCurrencies = assetCodes.filter((code) => assetRegistry[code].kind === 'fiat') as FiatCurrency[];
export const cryptoAssets = assetCodes.filter((code) => assetRegistry[code].kind === 'crypto') as CryptoAsset[];

function isAsset(code: string): code is Asset {
  return Object.hasOwn(assetRegistry, code);
}

export function scaleOf(asset: Asset): number {
  return assetRegistry[asset].scale;
}

/** The asset of a stored row; a code outside the registry means the data and the code disagree. */
export function assetOf(code: string): Asset {
  if (!isAsset(code)) throw new Error(`unknown asset ${code}`);
  return code;
}
