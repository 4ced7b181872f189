import { createHash } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { base58, bech32, bech32m, createBase58check } from '@scure/base';
import type { AddressFormat } from './networks.js';
import { base58CheckAddressBytes, segwitVersion0ProgramBytes, segwitVersionMax, witnessProgramBytesMax, witnessProgramBytesMin } from '../config/limits.js';

/**
 * On-chain address encodings, through the field's libraries (@scure/base for base58, base58check and bech32,
 * @noble/hashes for EIP-55's Keccak-256) rather than codecs of our own. The payload is the raw key hash or public key
 * the address encodes.
 */

/** Bytes of the payload each format encodes. */
export const addressPayloadBytes: Readonly<Record<AddressFormat, number>> = { evm: 20, solana: 32, tron: 20, bitcoin: 20 };

/** Base58check as Bitcoin and Tron write it: a 4-byte double-SHA-256 checksum (the library applies the hash twice). */
const base58check = createBase58check((data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest()));
/** Tron addresses are base58check of 0x41 and the 20-byte account hash, so they start with T. */
const tronAddressPrefix = 0x41;
/** Bitcoin mainnet native SegWit: bech32 with human-readable part `bc` and witness version 0 (P2WPKH for 20 bytes). */
const bitcoinHrp = 'bc';
const segwitVersion0 = 0;
/** Legacy Bitcoin addresses: base58check of a version byte (0x00 pay-to-public-key-hash `1…`, 0x05 pay-to-script-hash `3…`) and 20 bytes. */
const bitcoinLegacyVersions = [0x00, 0x05];

export function encodeAddress(format: AddressFormat, payload: Uint8Array): string {
  if (payload.length !== addressPayloadBytes[format]) throw new Error(`a ${format} address encodes ${addressPayloadBytes[format]} bytes, not ${payload.length}`);
  switch (format) {
    case 'evm':
      return checksummedEvmAddress(bytesToHex(payload));
    case 'solana':
      return base58.encode(payload);
    case 'tron':
      return base58check.encode(Uint8Array.of(tronAddressPrefix, ...payload));
    case 'bitcoin':
      return bech32.encode(bitcoinHrp, [segwitVersion0, ...bech32.toWords(payload)]);
  }
}

/** Bytes of a transaction's hash or signature per format: a 32-byte hash, a 64-byte Ed25519 signature on Solana. */
export const transactionHashBytes: Readonly<Record<AddressFormat, number>> = { evm: 32, solana: 64, tron: 32, bitcoin: 32 };

/** How a network writes a transaction id: EVM 0x-prefixed hex, Tron and Bitcoin bare hex, Solana base58. */
export function encodeTransactionHash(format: AddressFormat, bytes: Uint8Array): string {
  if (bytes.length !== transactionHashBytes[format]) throw new Error(`a ${format} transaction id has ${transactionHashBytes[format]} bytes, not ${bytes.length}`);
  const hex = Buffer.from(bytes).toString('hex');
  switch (format) {
    case 'evm':
      return `0x${hex}`;
    case 'solana':
      return base58.encode(bytes);
    case 'tron':
    case 'bitcoin':
      return hex;
  }
}

/**
 * The address in its canonical form when it is a valid address of the format, else undefined. EVM: any case, but a
 * mixed-case address must carry a correct EIP-55 checksum; presented checksummed. Bitcoin: native SegWit (BIP-173
 * bech32 for witness version 0, BIP-350 bech32m for versions 1-16, Taproot among them) in one case, presented in lower
 * case; or a legacy base58check address (`1…`, `3…`), as written.
 */
export function canonicalAddress(format: AddressFormat, text: string): string | undefined {
  try {
    switch (format) {
      case 'evm':
        return canonicalEvmAddress(text);
      case 'solana':
        return base58.decode(text).length === addressPayloadBytes.solana ? text : undefined;
      case 'tron': {
        const decoded = base58check.decode(text);
        return decoded.length === addressPayloadBytes.tron + 1 && decoded[0] === tronAddressPrefix ? text : undefined;
      }
      case 'bitcoin':
        return /^bc1/i.test(text) ? segwitAddress(text) : legacyBitcoinAddress(text);
    }
  } catch {
    // The libraries throw on characters outside the alphabet, on mixed case in bech32 and on bad checksums.
    return undefined;
  }
}

/** An EVM address: `0x` and 40 hex digits. */
const evmAddressPattern = /^0x[0-9a-fA-F]{40}$/;

/**
 * EIP-55: a letter of the hex address is upper case where the same hex digit of Keccak-256 of the lower-case address
 * (as ASCII, without 0x) is 8 or more. The EIP's own definition is this one loop; the hash comes from the library.
 */
function checksummedEvmAddress(hex: string): string {
  const lower = hex.toLowerCase();
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)));
  let checksummed = '0x';
  for (let index = 0; index < lower.length; index++) {
    checksummed += Number.parseInt(hash[index]!, 16) >= 0x8 ? lower[index]!.toUpperCase() : lower[index]!;
  }
  return checksummed;
}

/** All lower case carries no checksum and is taken; any other case must be exactly the EIP-55 checksummed form. */
function canonicalEvmAddress(text: string): string | undefined {
  if (!evmAddressPattern.test(text)) return undefined;
  const checksummed = checksummedEvmAddress(text.slice(2));
  return text === text.toLowerCase() || text === checksummed ? checksummed : undefined;
}

/** BIP-141 witness programs: version 0 of 20 or 32 bytes (bech32), versions 1-16 of 2-40 bytes (bech32m; Taproot is v1, 32). */
function segwitAddress(text: string): string | undefined {
  const lower = text.toLowerCase() as `${string}1${string}`;
  const version = bech32.decodeUnsafe(lower)?.words[0] ?? bech32m.decodeUnsafe(lower)?.words[0];
  const { prefix, words } = version === segwitVersion0 ? bech32.decode(text as `${string}1${string}`) : bech32m.decode(text as `${string}1${string}`);
  if (prefix !== bitcoinHrp || words[0] === undefined || words[0] > segwitVersionMax) return undefined;
  const program = (version === segwitVersion0 ? bech32 : bech32m).fromWords(words.slice(1));
  const valid = words[0] === segwitVersion0 ? segwitVersion0ProgramBytes.includes(program.length) : program.length >= witnessProgramBytesMin && program.length <= witnessProgramBytesMax;
  return valid ? lower : undefined;
}

function legacyBitcoinAddress(text: string): string | undefined {
  const decoded = base58check.decode(text);
  return decoded.length === base58CheckAddressBytes && bitcoinLegacyVersions.includes(decoded[0]!) ? text : undefined;
}
