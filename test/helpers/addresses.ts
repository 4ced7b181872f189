import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';

/**
 * EIP-55 written out from the EIP with the field's Keccak-256, so tests check the server's EVM addresses without the
 * server's code: a letter is upper case where the same hex digit of the hash of the lower-case address is 8 or more.
 */
export function eip55(address: string): string {
  const lower = address.replace(/^0x/, '').toLowerCase();
  const hash = bytesToHex(keccak_256(utf8ToBytes(lower)));
  return `0x${[...lower].map((digit, index) => (Number.parseInt(hash[index]!, 16) >= 8 ? digit.toUpperCase() : digit)).join('')}`;
}

/** EIP-55's own examples, as the EIP writes them: checksums that come out all upper case, all lower case, and mixed. */
export const eip55Examples = [
  '0x52908400098527886E0F7030069857D2E4169EE7',
  '0x8617E340B3D01FA5F11F306F4090FD50E238070D',
  '0xde709f2102306220921060314715629080e2fb77',
  '0x27b1fdb04752bbc536007a920d24acb045561c26',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359',
  '0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB',
  '0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb',
];
