import { createHash, randomBytes } from 'node:crypto';
import { newId } from '../../ids.js';
import { customerNow, serverTimeOnly, type Clock, type CustomerClocks } from '../../clock.js';
import type { ApiEnvironment } from '../../config/config.js';
import {
  apiKeyAllowedIpsMax,
  apiKeyNameLengthMax,
  apiKeyCacheEntriesMax,
  apiKeyCacheTtlMs,
  apiKeyDisplayPrefixLength,
  apiKeyLastUsedWriteIntervalMs,
  apiKeyLengthMax,
  apiKeyRandomBytes,
  apiKeyScopesMax,
  timestampYearMax,
} from '../../config/limits.js';
import { DomainError, notFound } from '../../errors.js';
import type { ExpiringCache, ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import { InvalidInputError, InvalidInputErrors } from '../customers/index.js';
import { findCustomerById } from '../customers/index.js';
import { formatCidr, ipAllowed, parseCidr, type CidrRange } from './ip-allowlist.js';
import { findApiKeyByHash, insertApiKey, listApiKeys, revokeApiKey, touchApiKey, type ApiKeyRow } from './repository.js';
import { isScope, type Scope } from './scopes.js';

/** What a request knows about the key that authenticated it. */
export interface AuthenticatedKey {
  readonly id: string;
  readonly customerId: string;
  readonly frOwnerBusinessId: string;
  readonly scopes: readonly Scope[];
}

/** The operator's view of a key: never the key or its hash. */
export interface ApiKeyView {
  id: string;
  customer_id: string;
  /** A person's name for the key, or null. */
  name: string | null;
  prefix: string;
  environment: string;
  scopes: Scope[];
  allowed_ips: string[];
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

export interface CreateKeyInput {
  customerId: string;
  /** Optional; trimmed, one line of at most apiKeyNameLengthMax characters. */
  name?: string;
  scopes?: string[];
  allowedIps?: string[];
  expiresAt?: string;
}

const keyPrefixByEnvironment: Record<ApiEnvironment, string> = { sandbox: 'sk_test_', production: 'sk_live_' };
const keyBodyLength = Math.ceil((apiKeyRandomBytes * 4) / 3);
const keyPattern = new RegExp(`^sk_(test|live)_[A-Za-z0-9_-]{${keyBodyLength}}$`);

/** One message for every kind of bad key, so a caller cannot tell unknown from revoked from expired. */
export const unauthenticated = () => new DomainError('UNAUTHENTICATED', 'A valid API key is required.');

function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

function present(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    customer_id: row.customer_id,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    scopes: JSON.parse(row.scopes) as Scope[],
    allowed_ips: JSON.parse(row.allowed_ips) as string[],
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
    last_used_at: row.last_used_at,
    created_at: row.created_at,
  };
}

/** A key's name as stored: trimmed, null when empty; more than one line or too long is refused. */
function checkedName(text: string | undefined): string | null {
  const name = text?.trim() ?? '';
  if (name === '') return null;
  if (name.length > apiKeyNameLengthMax) throw new InvalidInputError(`--name must be at most ${apiKeyNameLengthMax} characters`);
  if (/\p{Cc}/u.test(name)) throw new InvalidInputError('--name must be one line of text, without control characters');
  return name;
}

function checkedScopes(input: string[] | undefined): string[] {
  const scopes = input && input.length > 0 ? [...new Set(input)] : ['*'];
  if (scopes.length > apiKeyScopesMax) throw new InvalidInputError(`--scope: at most ${apiKeyScopesMax} scopes`);
  const unknownScope = scopes.find((scope) => !isScope(scope));
  if (unknownScope) throw new InvalidInputError(`--scope "${unknownScope}" is unknown (see docs/authentication.md)`);
  return scopes;
}

function checkedAllowedIps(input: string[] | undefined): string[] {
  const allowedIps = (input ?? []).map((value) => {
    const range = parseCidr(value);
    if (!range) throw new InvalidInputError(`--allow-ip "${value}" is not an IPv4 or IPv6 address or CIDR range`);
    return formatCidr(range);
  });
  if (allowedIps.length > apiKeyAllowedIpsMax) throw new InvalidInputError(`--allow-ip: at most ${apiKeyAllowedIpsMax} allowed IP ranges`);
  return allowedIps;
}

function checkedExpiry(input: string | undefined): string | null {
  if (input === undefined) return null;
  const parsed = new Date(input);
  if (Number.isNaN(parsed.getTime())) throw new InvalidInputError(`--expires-at "${input}" is not an ISO 8601 date-time`);
  // Expiry is stored as ISO text and compared as text (tables.ts); after year 9999 toISOString writes
  // "+010000-…", which sorts before every real date, so the key would be refused from its first use.
  if (parsed.getUTCFullYear() > timestampYearMax) throw new InvalidInputError(`--expires-at "${input}" is after the year 9999`);
  return parsed.toISOString();
}

/**
 * The fields of a new key as stored, every one checked so that a form shows all its problems at once: one problem
 * throws it, several throw them together (InvalidInputErrors).
 */
function checkedKeyInput(input: Omit<CreateKeyInput, 'customerId'>) {
  const problems: InvalidInputError[] = [];
  const checked = <T>(check: () => T, fallback: T): T => {
    try {
      return check();
    } catch (error) {
      if (!(error instanceof InvalidInputError)) throw error;
      problems.push(error);
      return fallback;
    }
  };
  const fields = {
    name: checked(() => checkedName(input.name), null),
    scopes: checked(() => checkedScopes(input.scopes), []),
    allowedIps: checked(() => checkedAllowedIps(input.allowedIps), []),
    expiresAt: checked(() => checkedExpiry(input.expiresAt), null),
  };
  if (problems.length === 1) throw problems[0]!;
  if (problems.length > 1) throw new InvalidInputErrors(problems);
  return fields;
}

/** What is wrong with a new key's fields, without making it (the dashboard's form adds its own problems to these). */
export function keyInputProblems(input: Omit<CreateKeyInput, 'customerId'>): InvalidInputError | undefined {
  try {
    checkedKeyInput(input);
    return undefined;
  } catch (error) {
    if (error instanceof InvalidInputError) return error;
    throw error;
  }
}

type KeyRow = NonNullable<Awaited<ReturnType<typeof findApiKeyByHash>>>;

export class ApiKeyService {
  /** When each key's last_used_at was last written by this process; bounds writes to one per interval. */
  private readonly lastUsedWrittenMs = new Map<string, number>();
  /** Parsed allow-lists by key id; rows are immutable apart from revocation and last use. */
  private readonly rangesByKey = new Map<string, CidrRange[]>();
  /**
   * Known keys by hash, for apiKeyCacheTtlMs (docs/authentication.md "Revocation"): every request is one lookup
   * fewer. Shared by the services of this process, so a revocation here evicts at once; another process's
   * revocation (the CLI) takes effect when the entry expires. Expiry dates are checked on every request.
   */
  private readonly keys: ExpiringCache<string, KeyRow>;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly environment: ApiEnvironment,
    caches: ReadCaches,
    /**
     * A key's expiry is in its customer's time: a sandbox test clock's while one is attached (docs/test-clocks.md).
     * The CLI's keys (it creates, lists and revokes them, never authenticates) need none.
     */
    private readonly customerClocks: CustomerClocks = serverTimeOnly,
  ) {
    this.keys = caches.named('api-keys', apiKeyCacheTtlMs, apiKeyCacheEntriesMax);
  }

  async create(input: CreateKeyInput): Promise<ApiKeyView & { key: string }> {
    const customer = await findCustomerById(this.storage.db, input.customerId.toLowerCase());
    if (!customer) throw new InvalidInputError(`no customer with id ${input.customerId}`);
    const { name, scopes, allowedIps, expiresAt } = checkedKeyInput(input);
    const key = `${keyPrefixByEnvironment[this.environment]}${randomBytes(apiKeyRandomBytes).toString('base64url')}`;
    const row: ApiKeyRow = {
      id: newId(),
      customer_id: customer.id,
      key_hash: hashApiKey(key),
      prefix: key.slice(0, apiKeyDisplayPrefixLength),
      environment: this.environment,
      scopes: JSON.stringify(scopes),
      allowed_ips: JSON.stringify(allowedIps),
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
      created_at: this.clock.now().toISOString(),
      name,
    };
    await insertApiKey(this.storage.db, row);
    return { ...present(row), key };
  }

  async list(customerId: string): Promise<ApiKeyView[]> {
    const customer = await findCustomerById(this.storage.db, customerId.toLowerCase());
    if (!customer) throw new InvalidInputError(`no customer with id ${customerId}`);
    return (await listApiKeys(this.storage.db, customer.id)).map(present);
  }

  async revoke(keyId: string): Promise<ApiKeyView> {
    const row = await revokeApiKey(this.storage.db, keyId.toLowerCase(), this.clock.now().toISOString());
    if (!row) throw new InvalidInputError(`no API key with id ${keyId}`);
    this.keys.delete(row.key_hash);
    return present(row);
  }

  /** The dashboard's revocation: only the customer's own keys; another customer's id is unknown (404). */
  async revokeOwn(customerId: string, keyId: string): Promise<ApiKeyView> {
    const keys = await listApiKeys(this.storage.db, customerId);
    if (!keys.some((key) => key.id === keyId.toLowerCase())) throw notFound('API key');
    return this.revoke(keyId);
  }

  /**
   * docs/spec.md §5: a missing, malformed, unknown, revoked or expired key → 401 (one body); a key used from an address
   * outside its allow-list → 403. Only the SHA-256 of the presented key ever reaches the database.
   */
  async authenticate(presentedKey: string | undefined, clientIp: string): Promise<AuthenticatedKey> {
    if (presentedKey === undefined || presentedKey.length > apiKeyLengthMax || !keyPattern.test(presentedKey)) {
      throw unauthenticated();
    }
    const keyHash = hashApiKey(presentedKey);
    const row = await this.keys.getOrLoad(keyHash, () => findApiKeyByHash(this.storage.db, keyHash));
    const now = this.clock.now();
    if (!row || row.environment !== this.environment || row.revoked_at !== null || (row.expires_at !== null && row.expires_at <= (await customerNow(this.customerClocks, this.clock, row.customer_id)).toISOString())) {
      throw unauthenticated();
    }
    const ranges = this.allowListOf(row);
    if (ranges.length > 0 && !ipAllowed(clientIp, ranges)) {
      throw new DomainError('IP_NOT_ALLOWED', 'This API key cannot be used from your IP address.');
    }
    await this.recordUse(row.id, now);
    return { id: row.id, customerId: row.customer_id, frOwnerBusinessId: row.fr_owner_business_id, scopes: JSON.parse(row.scopes) as Scope[] };
  }

  private allowListOf(row: ApiKeyRow): CidrRange[] {
    let ranges = this.rangesByKey.get(row.id);
    if (ranges === undefined) {
      ranges = (JSON.parse(row.allowed_ips) as string[]).map((value) => parseCidr(value)).filter((range) => range !== undefined);
      this.rangesByKey.set(row.id, ranges);
    }
    return ranges;
  }

  private async recordUse(keyId: string, now: Date): Promise<void> {
    const lastWritten = this.lastUsedWrittenMs.get(keyId);
    if (lastWritten !== undefined && now.getTime() - lastWritten < apiKeyLastUsedWriteIntervalMs) return;
    this.lastUsedWrittenMs.set(keyId, now.getTime());
    await touchApiKey(this.storage.db, keyId, now.toISOString());
  }
}
