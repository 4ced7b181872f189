import { createHash } from 'node:crypto';
import { base58, bech32, createBase58check } from '@scure/base';
import { getAddress, isAddress } from 'viem';
import type { AddressFormat } from './networks.js';

/**
 * On-chain address encodings, through the field's libraries (viem for EIP-55, @scure/base for base58, base58check
 * and bech32) rather than codecs of our own. The payload is the raw key hash or public key the address encodes.
 */

/** Bytes of the payload each format encodes. */
export const addressPayloadBytes: Readonly<Record<AddressFormat, number>> = { evm: 20, solana: 32, tron: 20, bitcoin: 20 };

const tronBase58check = createBase58check((data: Uint8Array) => new Uint8Array(createHash('sha256').update(data).digest()));
/** Tron addresses are base58check of 0x41 and the 20-byte account hash, so they start with T. */
const tronAddressPrefix = 0x41;
/** Bitcoin mainnet native SegWit: bech32 with human-readable part `bc` and witness version 0 (P2WPKH for 20 bytes). */
const bitcoinHrp = 'bc';
const segwitVersion0 = 0;

export function encodeAddress(format: AddressFormat, payload: Uint8Array): string {
  if (payload.length !== addressPayloadBytes[format]) throw new Error(`a ${format} address encodes ${addressPayloadBytes[format]} bytes, not ${payload.length}`);
  switch (format) {
    case 'evm':
      return getAddress(`0x${Buffer.from(payload).toString('hex')}`);
    case 'solana':
      return base58.encode(payload);
    case 'tron':
      return tronBase58check.encode(Uint8Array.of(tronAddressPrefix, ...payload));
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
 * mixed-case address must carry a correct EIP-55 checksum; presented checksummed. Bitcoin: presented in lower case.
 */
export function canonicalAddress(format: AddressFormat, text: string): string | undefined {
  try {
    switch (format) {
      case 'evm':
        return isAddress(text, { strict: true }) ? getAddress(text) : undefined;
      case 'solana':
        return base58.decode(text).length === addressPayloadBytes.solana ? text : undefined;
      case 'tron': {
        const decoded = tronBase58check.decode(text);
        return decoded.length === addressPayloadBytes.tron + 1 && decoded[0] === tronAddressPrefix ? text : undefined;
      }
      case 'bitcoin': {
        const { prefix, words } = bech32.decode(text.toLowerCase() as `${string}1${string}`);
        const valid = prefix === bitcoinHrp && words[0] === segwitVersion0 && bech32.fromWords(words.slice(1)).length === addressPayloadBytes.bitcoin;
        return valid ? text.toLowerCase() : undefined;
      }
    }
  } catch {
    // The libraries throw on characters outside the alphabet and on bad checksums.
    return undefined;
  }
}
