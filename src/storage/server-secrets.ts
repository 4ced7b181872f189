import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Clock } from '../clock.js';
import { ConfigError } from '../config/config-error.js';
import type { Config } from '../config/config.js';
import { secretsMasterKeyBytes, serverSecretRandomBytes } from '../config/limits.js';
import { readMasterKeyFile, type MasterKeys } from '../config/master-keys.js';
import type { Dialect, Storage } from './database.js';
import { makePrivate, privateFileMode } from './files.js';
import { SecretBox } from './secret-box.js';

/** The secrets of a deployment: the keys of CSRF tokens, dashboard form tokens, secrets the dashboard shows once, webhook signing secrets, hosted onboarding link secrets and stored answers that hold a secret. */
export const serverSecretNames = ['csrf', 'dashboard-forms', 'dashboard-reveals', 'idempotency-answers', 'onboarding-links', 'webhook-signing-secrets'] as const;
export type ServerSecretName = (typeof serverSecretNames)[number];

/** The embedded sandbox's own master key, in DATA_DIR beside the database file. */
export const generatedMasterKeyFileName = 'secrets-master.key';

/**
 * The embedded sandbox's master key, in a 0600 file beside the database (never in it), so a copy of the database
 * file alone reveals no secret. Created once and atomically — written aside, then linked into place, which fails if
 * the file exists — so two processes starting on one DATA_DIR end up with the same key.
 */
function generatedMasterKeys(dataDir: string): MasterKeys {
  const file = path.join(dataDir, generatedMasterKeyFileName);
  if (!fs.existsSync(file)) {
    const aside = path.join(dataDir, `.${generatedMasterKeyFileName}.${randomUUID()}`);
    try {
      fs.writeFileSync(aside, `${randomBytes(secretsMasterKeyBytes).toString('base64')}\n`, { mode: privateFileMode, flag: 'wx' });
      fs.linkSync(aside, file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EEXIST') throw new ConfigError(`cannot create the secrets master key file ${file} (${code ?? (error as Error).message}); make DATA_DIR writable or set SECRETS_MASTER_KEY`);
    } finally {
      fs.rmSync(aside, { force: true });
    }
  }
  makePrivate(file, privateFileMode);
  return readMasterKeyFile(file, `the master key file ${file}`);
}

/**
 * The master keys that wrap the server secrets (docs/operations.md "Server secrets"): the configured ones. Without
 * any, production refuses to start (a backup of its database must not forge tokens); the embedded sandbox (SQLite)
 * makes its own in DATA_DIR; the sandbox on PostgreSQL, whose instances share no DATA_DIR, keeps the secrets
 * unwrapped (undefined), as before master keys existed.
 */
export function masterKeysFor(config: Pick<Config, 'apiEnvironment' | 'dataDir' | 'secretsMasterKeys'>, dialect: Dialect): MasterKeys | undefined {
  if (config.secretsMasterKeys !== undefined) return config.secretsMasterKeys;
  if (config.apiEnvironment === 'production') {
    throw new ConfigError(
      `API_ENVIRONMENT=production needs SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE (the base64 of ${secretsMasterKeyBytes} random bytes, ` +
        `e.g. from: openssl rand -base64 ${secretsMasterKeyBytes}): without one a database backup forges CSRF tokens and reveals every webhook signing secret`,
    );
  }
  return dialect === 'sqlite' ? generatedMasterKeys(config.dataDir) : undefined;
}

interface StoredSecret {
  name: string;
  value: string;
  key_id: string | null;
}

/** Authenticated with each wrapped secret: a wrapped value copied into another secret's row does not open. */
const wrapContext = (name: string) => `server-secret:${name}`;

/**
 * Random secrets generated once per deployment and kept in the database, so every instance sharing it derives the
 * same values (CSRF and form tokens, webhook signing secrets' encryption) without another setting to distribute.
 * With master keys each is stored wrapped (AES-256-GCM) beside the id of the key that wrapped it: a backup of the
 * database alone then forges no token and opens no signing secret.
 */
export class ServerSecrets {
  constructor(
    private readonly storage: Storage,
    /** Undefined: stored unwrapped (the sandbox on PostgreSQL without a master key). */
    readonly keys: MasterKeys | undefined,
    private readonly clock: Clock,
  ) {}

  /** The deployment's secrets, every stored one opened and re-wrapped first (`rewrap`): what every start does. */
  static async open(storage: Storage, keys: MasterKeys | undefined, clock: Clock): Promise<ServerSecrets> {
    const secrets = new ServerSecrets(storage, keys, clock);
    await secrets.rewrap();
    return secrets;
  }

  /**
   * Opens every stored secret (a key that is not listed stops start-up, naming the setting), and wraps with the
   * newest key those stored unwrapped — by an earlier version, or before a master key was set — or wrapped with an
   * older key: the same secrets, so issued CSRF and form tokens and every webhook signing secret keep working.
   * Returns the names re-wrapped.
   */
  async rewrap(): Promise<string[]> {
    const rows = await this.storage.db.selectFrom('server_secrets').select(['name', 'value', 'key_id']).orderBy('name').execute();
    const rewrapped: string[] = [];
    for (const row of rows) {
      const secret = this.unwrap(row);
      if (this.keys === undefined || row.key_id === this.keys.newest.id) continue;
      // Only over the value read: an instance re-wrapping at the same moment wrote the same secret, and either stands.
      await this.storage.db
        .updateTable('server_secrets')
        .set({ value: this.wrap(row.name, secret), key_id: this.keys.newest.id })
        .where('name', '=', row.name)
        .where('value', '=', row.value)
        .execute();
      rewrapped.push(row.name);
    }
    return rewrapped;
  }

  /**
   * The secret of this name, created on first use. Instances creating it at the same moment each offer one and all
   * read back the one stored first.
   */
  async get(name: ServerSecretName): Promise<Buffer> {
    const offered = randomBytes(serverSecretRandomBytes).toString('hex');
    await this.storage.db
      .insertInto('server_secrets')
      .values({ name, value: this.wrap(name, offered), key_id: this.keys?.newest.id ?? null, created_at: this.clock.now().toISOString() })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    const row = await this.storage.db.selectFrom('server_secrets').select(['name', 'value', 'key_id']).where('name', '=', name).executeTakeFirstOrThrow();
    return Buffer.from(this.unwrap(row), 'hex');
  }

  /** Which master key wraps each stored secret (null: unwrapped). */
  async wrappingKeys(): Promise<Array<{ name: string; key_id: string | null }>> {
    return this.storage.db.selectFrom('server_secrets').select(['name', 'key_id']).orderBy('name').execute();
  }

  private wrap(name: string, secret: string): string {
    return this.keys === undefined ? secret : new SecretBox(this.keys.newest.key).seal(secret, wrapContext(name));
  }

  private unwrap(row: StoredSecret): string {
    if (row.key_id === null) return row.value;
    if (this.keys === undefined) {
      throw new ConfigError(`the server secrets in the database are wrapped with a master key (id ${row.key_id}): set SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE to it`);
    }
    const key = this.keys.byId(row.key_id);
    if (key === undefined) {
      throw new ConfigError(
        `${this.keys.source} does not hold the master key that wraps the server secret "${row.name}" (key id ${row.key_id}; given ${this.keys.ids.join(', ')}); ` +
          'while rotating, list the previous key after the new one',
      );
    }
    try {
      return new SecretBox(key.key).open(row.value, wrapContext(row.name));
    } catch {
      throw new ConfigError(`the server secret "${row.name}" does not open with master key ${row.key_id}: its row in server_secrets was altered`);
    }
  }
}
