import { systemClock } from '../clock.js';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { verifyLedger } from '../ledger/verify.js';
import { checkExpiresAt } from '../modules/api-keys/index.js';
import { ApiKeyService } from '../modules/api-keys/index.js';
import { CustomerService, InvalidInputError } from '../modules/customers/index.js';
import { DashboardUserService } from '../modules/dashboard-users/index.js';
import { FeeService, type SetFeeScheduleInput } from '../modules/fees/index.js';
import { ReadCaches } from '../storage/cache.js';
import { openStorage, type Storage } from '../storage/database.js';
import { recordedDeploymentSetting } from '../storage/deployment-settings.js';
import { migrateToLatest } from '../storage/migrate.js';
import { masterKeysFor, ServerSecrets } from '../storage/server-secrets.js';
import { initSandbox, type SandboxInitOptions } from './sandbox-init.js';

/**
 * What the operator commands do (main.ts declares them and their help). Loaded only when a command runs, so
 * `--help` and `--version` do not load the database drivers.
 */

/**
 * Opens the configured database, brings its schema up to date, runs the command and closes it.
 * `migrate` passes migrate: false and migrates itself: migrating here first made it always report
 * `"applied": []`, even on an empty database (test/cli/cli.test.ts).
 */
async function withStorage<T>(run: (storage: Storage, config: Config) => Promise<T>, options: { config?: Config; migrate?: boolean } = {}): Promise<T> {
  const config = options.config ?? loadConfig();
  const storage = await openStorage(config);
  try {
    if (options.migrate !== false) await migrateToLatest(storage);
    return await run(storage, config);
  } finally {
    await storage.close();
  }
}

/**
 * Where browsers reach the server, for the links printed here: PUBLIC_URL when this process has it, else the one
 * the server recorded at its last start (it may run on another port or host, with settings this shell lacks), else
 * the default of this process's settings.
 */
async function serverPublicUrl(storage: Storage, config: Config): Promise<string> {
  if (process.env.PUBLIC_URL?.trim()) return config.publicUrl;
  return (await recordedDeploymentSetting(storage, 'public_url')) ?? config.publicUrl;
}

/** Dashboard users (docs/dashboard.md), their sign-in links starting with `publicUrl`, by default the server's. */
async function dashboardUsers(storage: Storage, config: Config, publicUrl?: string): Promise<DashboardUserService> {
  const settings = { publicUrl: publicUrl ?? (await serverPublicUrl(storage, config)), idleMs: config.dashboardSessionIdleMs, maxMs: config.dashboardSessionMaxMs };
  return new DashboardUserService(storage, systemClock, settings);
}

/** One command's read caches: the CLI is a process of its own, whose clock is the system's (an app's are its own). */
const commandCaches = () => new ReadCaches(systemClock);

const apiKeys = (storage: Storage, config: Config) => new ApiKeyService(storage, systemClock, config.apiEnvironment, commandCaches());

export function migrate() {
  return withStorage(async (storage) => ({ applied: await migrateToLatest(storage), database: storage.location }), { migrate: false });
}

export function createCustomer(name: string) {
  return withStorage((storage) => new CustomerService(storage, systemClock).create(name));
}

export function listCustomers(page: number, limit: number) {
  return withStorage((storage) => new CustomerService(storage, systemClock).list(page, limit));
}

export function createKey(options: { customer: string; name?: string; scope: string[]; allowIp: string[]; expiresAt?: string }) {
  return withStorage((storage, config) =>
    apiKeys(storage, config).create({
      customerId: options.customer,
      ...(options.name !== undefined ? { name: options.name } : {}),
      scopes: options.scope,
      allowedIps: options.allowIp,
      ...(options.expiresAt !== undefined ? { expiresAt: checkExpiresAt(options.expiresAt) } : {}),
    }),
  );
}

export async function listKeys(customerId: string) {
  return { data: await withStorage((storage, config) => apiKeys(storage, config).list(customerId)) };
}

export function revokeKey(keyId: string) {
  return withStorage((storage, config) => apiKeys(storage, config).revoke(keyId));
}

export function createUser(customerId: string, email: string) {
  return withStorage(async (storage, config) => (await dashboardUsers(storage, config)).create(customerId, email));
}

export function issueUserLink(email: string) {
  return withStorage(async (storage, config) => (await dashboardUsers(storage, config)).issueLink(email));
}

export async function listUsers(customerId: string) {
  return { data: await withStorage(async (storage, config) => (await dashboardUsers(storage, config)).list(customerId)) };
}

export function setFees(input: SetFeeScheduleInput) {
  return withStorage((storage) => new FeeService(storage, systemClock, commandCaches()).setSchedule(input));
}

export async function listFees(customerId: string | undefined) {
  return { data: await withStorage((storage) => new FeeService(storage, systemClock, commandCaches()).listSchedules(customerId)) };
}

/** Server secrets (docs/operations.md "Server secrets"): what every start does, on demand, with a report. */
export function rewrapSecrets() {
  return withStorage(async (storage, config) => {
    const keys = masterKeysFor(config, storage.dialect);
    if (keys === undefined) throw new ConfigError('no master key to wrap the server secrets with: set SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE');
    const serverSecrets = new ServerSecrets(storage, keys, systemClock);
    const rewrapped = await serverSecrets.rewrap();
    return { master_key_id: keys.newest.id, rewrapped, secrets: await serverSecrets.wrappingKeys() };
  });
}

export function checkLedger() {
  return withStorage((storage) => verifyLedger(storage));
}

/** A customer, a key and a dashboard sign-in link in one go (docs/cli.md "sandbox init"); never in production. */
export function sandboxInit(options: SandboxInitOptions) {
  const config = loadConfig();
  // Refused before the database is opened: nothing is written, not even a migration.
  if (config.apiEnvironment === 'production') {
    throw new InvalidInputError('sandbox init is for the sandbox and this is API_ENVIRONMENT=production; use customers create, keys create and users create');
  }
  return withStorage(
    async (storage) => {
      const publicUrl = await serverPublicUrl(storage, config);
      const services = { customers: new CustomerService(storage, systemClock), apiKeys: apiKeys(storage, config), users: await dashboardUsers(storage, config, publicUrl) };
      return initSandbox(services, publicUrl, options);
    },
    { config },
  );
}

export { shellExports } from './sandbox-init.js';
