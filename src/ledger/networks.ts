import { cryptoAssets, type CryptoAsset } from './assets.js';

/**
 * The blockchain networks wallets hold assets on, and which asset lives on which (docs/wallets.md). Clients name a
 * network by its code or its long name, in any case (`eth`, `Ethereum`); records present the code.
 */
export const networkRegistry = {
  ETH: { name: 'ethereum', addressFormat: 'evm' },
  ARB: { name: 'arbitrum', addressFormat: 'evm' },
  BASE: { name: 'base', addressFormat: 'evm' },
  MATIC: { name: 'polygon', addressFormat: 'evm' },
  SOL: { name: 'solana', addressFormat: 'solana' },
  TRX: { name: 'tron', addressFormat: 'tron' },
  BTC: { name: 'bitcoin', addressFormat: 'bitcoin' },
} as const satisfies Record<string, { name: string; addressFormat: AddressFormat }>;

/** EVM: EIP-55 hex of 20 bytes; Solana: base58 of a 32-byte key; Tron: base58check starting with T; Bitcoin: bech32 (bc1…). */
export type AddressFormat = 'evm' | 'solana' | 'tron' | 'bitcoin';

export type Network = keyof typeof networkRegistry;

/** The catalogue of supported pairs: every asset a wallet can receive or send, and on which networks. */
const networksOfAsset: Readonly<Record<CryptoAsset, readonly Network[]>> = {
  USDC: ['ETH', 'ARB', 'BASE', 'MATIC', 'SOL'],
  USDT: ['ETH', 'TRX'],
  EURC: ['ETH', 'SOL'],
  BTC: ['BTC'],
  SOL: ['SOL'],
  ETH: ['ETH'],
};

/** What a wallet holds when nothing else is asked (docs/spec.md §2: a new wallet's `currency` is USDC, its deposit address on ETH). */
export const defaultWalletAsset: CryptoAsset = 'USDC';
export const defaultWalletNetwork: Network = 'ETH';

const networkByName = new Map<string, Network>(
  (Object.keys(networkRegistry) as Network[]).flatMap((code) => [
    [code.toLowerCase(), code],
    [networkRegistry[code].name, code],
  ]),
);

/** The network a client named (code or long name, any case), or undefined. */
function networkNamed(text: string): Network | undefined {
  return networkByName.get(text.trim().toLowerCase());
}

/** The crypto asset a client named (any case), or undefined. */
export function cryptoAssetNamed(text: string): CryptoAsset | undefined {
  const code = text.trim().toUpperCase();
  return cryptoAssets.find((asset) => asset === code);
}

export function addressFormatOf(network: Network): AddressFormat {
  return networkRegistry[network].addressFormat;
}

/** `USDC on ETH, ARB, …; USDT on …`: the catalogue in words, for error messages and docs. */
export function supportedPairsText(): string {
  return cryptoAssets.map((asset) => `${asset} on ${networksOfAsset[asset].join(', ')}`).join('; ');
}

/** The supported pair a client named, in canonical codes, or undefined when the pair is not in the catalogue. */
export function supportedPair(assetText: string, networkText: string): { asset: CryptoAsset; network: Network } | undefined {
  const asset = cryptoAssetNamed(assetText);
  const network = networkNamed(networkText);
  if (asset === undefined || network === undefined || !networksOfAsset[asset].includes(network)) return undefined;
  return { asset, network };
}
