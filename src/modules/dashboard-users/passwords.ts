import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/**
 * Dashboard passwords are stored as scrypt hashes (RFC 7914) with their parameters, so the cost can be raised later
 * without invalidating stored hashes: `scrypt$<log2 N>$<r>$<p>$<salt>$<hash>` (base64url). N = 2^16, r = 8, p = 2 is
 * one of OWASP's recommended settings (64 MiB per hash).
 */
const costLog2 = 16;
const blockSize = 8;
const parallelization = 2;
const keyLengthBytes = 32;
const saltBytes = 16;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  // Node refuses a cost above maxmem (32 MiB by default); allow what these parameters need, with room.
  const memoryBytes = 2 * 128 * (options.N ?? 0) * (options.r ?? 0);
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFKC'), salt, keyLengthBytes, { ...options, maxmem: memoryBytes }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(saltBytes);
  const key = await derive(password, salt, { N: 2 ** costLog2, r: blockSize, p: parallelization });
  return ['scrypt', costLog2, blockSize, parallelization, salt.toString('base64url'), key.toString('base64url')].join('$');
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
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  return decoy;
}
