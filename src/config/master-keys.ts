import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import { inspect } from 'node:util';
import { ConfigError } from './config-error.js';
import { secretsMasterKeyBytes, secretsMasterKeyFileBytesMax, secretsMasterKeyIdLength, secretsMasterKeysMax } from './limits.js';

export interface MasterKey {
  /** Not secret: stored beside each secret the key wraps, so the right key is found without trying each. */
  readonly id: string;
  readonly key: Buffer;
}

/** A key's id: an HMAC under the key itself, which tells nothing about the key. */
export function masterKeyId(key: Buffer): string {
  return createHmac('sha256', key).update('customer-api secrets master key id').digest('hex').slice(0, secretsMasterKeyIdLength);
}

/**
 * The keys that wrap the server secrets (docs/operations.md "Server secrets"), newest first: the newest wraps, every
 * one listed unwraps, so a rotation lists the new key first and the previous one after it until every secret is
 * wrapped with the new one. The key bytes live in a private field: neither JSON nor util.inspect (a logged config)
 * shows them, and messages name `source` — a setting or a file — never a value.
 */
export class MasterKeys {
  readonly #keys: readonly MasterKey[];

  constructor(
    keys: readonly Buffer[],
    readonly source: string,
  ) {
    const byId = new Map<string, MasterKey>();
    for (const key of keys) byId.set(masterKeyId(key), { id: masterKeyId(key), key });
    this.#keys = [...byId.values()];
    if (this.#keys.length === 0) throw new Error('MasterKeys needs at least one key');
  }

  get newest(): MasterKey {
    return this.#keys[0]!;
  }

  byId(id: string): MasterKey | undefined {
    return this.#keys.find((key) => key.id === id);
  }

  get ids(): string[] {
    return this.#keys.map((key) => key.id);
  }

  toJSON() {
    return { source: this.source, ids: this.ids };
  }

  [inspect.custom]() {
    return `MasterKeys(${this.source}: ${this.ids.join(', ')})`;
  }
}

const base64Entry = /^[A-Za-z0-9+/_-]+={0,2}$/;

/** The text of SECRETS_MASTER_KEY or of a key file: base64 keys of 32 bytes, newest first, separated by commas or white space. */
export function parseMasterKeys(text: string, source: string): MasterKeys {
  const entries = text.split(/[\s,]+/).filter((entry) => entry.length > 0);
  const howTo = `the base64 of ${secretsMasterKeyBytes} random bytes, e.g. from: openssl rand -base64 ${secretsMasterKeyBytes}`;
  if (entries.length === 0) throw new ConfigError(`${source} holds no key; give ${howTo}`);
  if (entries.length > secretsMasterKeysMax) throw new ConfigError(`${source} lists at most ${secretsMasterKeysMax} keys, got ${entries.length}`);
  const keys = entries.map((entry, index) => {
    const key = base64Entry.test(entry) ? Buffer.from(entry, 'base64') : Buffer.alloc(0);
    if (key.length !== secretsMasterKeyBytes) {
      throw new ConfigError(`${source} must list keys, newest first, separated by commas, each ${howTo}; entry ${index + 1} is not one`);
    }
    return key;
  });
  return new MasterKeys(keys, source);
}

/** A file holding the keys (a mounted secret); `source` names it in messages. */
export function readMasterKeyFile(file: string, source: string): MasterKeys {
  let text: string;
  try {
    const stat = fs.statSync(file);
    if (!stat.isFile() || stat.size > secretsMasterKeyFileBytesMax) throw new ConfigError(`${source} must be a file of at most ${secretsMasterKeyFileBytesMax} bytes: ${file}`);
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw new ConfigError(`${source} cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): ${file}`);
  }
  return parseMasterKeys(text, source);
}
