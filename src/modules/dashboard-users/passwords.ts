import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import {
  decoyPasswordRandomBytes,
  passwordHashBytes,
  passwordSaltBytes,
  scryptBlockSize,
  scryptCostLog2,
  scryptMemoryBytesPerCostUnit,
  scryptParallelization,
} from '../../config/limits.js';

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  // Node refuses a cost above maxmem (32 MiB by default); allow what these parameters need, with room.
  const memoryBytes = 2 * scryptMemoryBytesPerCostUnit * (options.N ?? 0) * (options.r ?? 0);
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, passwordHashBytes, { ...options, maxmem: memoryBytes }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(passwordSaltBytes);
  const key = await derive(password, salt, { N: 2 ** scryptCostLog2, r: scryptBlockSize, p: scryptParallelization });
  return ['scrypt', scryptCostLog2, scryptBlockSize, scryptParallelization, salt.toString('base64url'), key.toString('base64url')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, log2N, r, p, salt, key] = stored.split('$');
  if (scheme !== 'scrypt' || !log2N || !r || !p || !salt || !key) return false;
  const expected = Buffer.from(key, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: 2 ** Number(log2N), r: Number(r), p: Number(p) });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;

/** A hash of a password nobody has, so an unknown email costs a sign-in as much time as a wrong password. */
export function decoyPasswordHash(): Promise<string> {
  decoy ??= hashPassword(randomBytes(decoyPasswordRandomBytes).toString('hex'));
  return decoy;
}
