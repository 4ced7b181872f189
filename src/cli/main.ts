import { Command, CommanderError } from 'commander';
import { systemClock } from '../clock.js';
import { ConfigError, loadConfig } from '../config/config.js';
import { checkExpiresAt } from '../modules/api-keys/expiry.js';
import { ApiKeyService } from '../modules/api-keys/service.js';
import { CustomerService, InvalidInputError } from '../modules/customers/service.js';
import { DashboardUserService } from '../modules/dashboard-users/service.js';
import { FeeService, type SetFeeScheduleInput } from '../modules/fees/service.js';
import { openStorage, type Storage } from '../storage/database.js';
import { migrateToLatest } from '../storage/migrate.js';
import { masterKeysFor, ServerSecrets } from '../storage/server-secrets.js';
import { verifyLedger } from '../ledger/verify.js';

/** Operator commands (DESIGN §3). Same DATA_DIR / DATABASE_URL as the server; one JSON object on stdout. */

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * Opens the configured database, brings its schema up to date, runs the command and closes it.
 * `migrate` passes migrate: false and migrates itself: migrating here first made it always report
 * `"applied": []`, even on an empty database (test/cli/cli.test.ts).
 */
async function withStorage<T>(
  run: (storage: Storage, environment: ReturnType<typeof loadConfig>) => Promise<T>,
  options: { migrate?: boolean } = {},
): Promise<T> {
  const config = loadConfig();
  const storage = await openStorage(config);
  try {
    if (options.migrate !== false) await migrateToLatest(storage);
    return await run(storage, config);
  } finally {
    await storage.close();
  }
}

function buildProgram(): Command {
  const program = new Command('customer-api')
    .description('Operator commands for the Customer API')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });

  program
    .command('migrate')
    .description('apply pending database migrations')
    .action(async () => {
      const applied = await withStorage(async (storage) => ({ applied: await migrateToLatest(storage), database: storage.location }), { migrate: false });
      print(applied);
    });

  const customers = program.command('customers').description('manage customers');
  customers
    .command('create')
    .description('create a customer')
    .requiredOption('--name <name>', 'customer name (1-200 characters)')
    .action(async (options: { name: string }) => {
      print(await withStorage((storage) => new CustomerService(storage, systemClock).create(options.name)));
    });

  const keys = program.command('keys').description('manage API keys');
  keys
    .command('create')
    .description('create an API key; the full key is printed only here')
    .requiredOption('--customer <id>', 'customer id')
    .option('--scope <scope>', 'scope, repeatable (default *)', collect, [])
    .option('--allow-ip <cidr>', 'allowed IPv4/IPv6 address or CIDR range, repeatable (default: any)', collect, [])
    .option('--expires-at <iso>', 'expiry as an ISO 8601 date-time')
    .action(async (options: { customer: string; scope: string[]; allowIp: string[]; expiresAt?: string }) => {
      const created = await withStorage((storage, config) =>
        new ApiKeyService(storage, systemClock, config.apiEnvironment).create({
          customerId: options.customer,
          scopes: options.scope,
          allowedIps: options.allowIp,
          ...(options.expiresAt !== undefined ? { expiresAt: checkExpiresAt(options.expiresAt) } : {}),
        }),
      );
      print(created);
    });
  keys
    .command('list')
    .description("list a customer's API keys (never the keys themselves)")
    .requiredOption('--customer <id>', 'customer id')
    .action(async (options: { customer: string }) => {
      print({ data: await withStorage((storage, config) => new ApiKeyService(storage, systemClock, config.apiEnvironment).list(options.customer)) });
    });
  keys
    .command('revoke')
    .description('revoke an API key at once')
    .argument('<keyId>', 'API key id')
    .action(async (keyId: string) => {
      print(await withStorage((storage, config) => new ApiKeyService(storage, systemClock, config.apiEnvironment).revoke(keyId)));
    });

  // Dashboard users (docs/dashboard.md): the printed link is the only way in until the user has chosen a password.
  const dashboardUsers = (storage: Storage, config: ReturnType<typeof loadConfig>) =>
    new DashboardUserService(storage, systemClock, { publicUrl: config.publicUrl, idleMs: config.dashboardSessionIdleMs, maxMs: config.dashboardSessionMaxMs });
  const users = program.command('users').description('manage customer dashboard users');
  users
    .command('create')
    .description('create a dashboard user and print a one-time sign-in link (valid 24 hours) on which they choose a password')
    .requiredOption('--customer <id>', 'customer id')
    .requiredOption('--email <email>', 'email address the user signs in with')
    .action(async (options: { customer: string; email: string }) => {
      print(await withStorage((storage, config) => dashboardUsers(storage, config).create(options.customer, options.email)));
    });
  users
    .command('link')
    .description('print a new one-time sign-in link for a user (first link expired, or password forgotten)')
    .requiredOption('--email <email>', 'the user\'s email address')
    .action(async (options: { email: string }) => {
      print(await withStorage((storage, config) => dashboardUsers(storage, config).issueLink(options.email)));
    });
  users
    .command('list')
    .description("list a customer's dashboard users")
    .requiredOption('--customer <id>', 'customer id')
    .action(async (options: { customer: string }) => {
      print({ data: await withStorage((storage, config) => dashboardUsers(storage, config).list(options.customer)) });
    });

  // Fee schedules (docs/fees.md): the default schedule is seeded by migration 0004; operators set per-customer rows.
  const fees = program.command('fees').description('manage fee schedules');
  fees
    .command('set')
    .description("set a customer's own fee for one transaction type, scheme and currency (replaces all its terms)")
    .requiredOption('--customer <id>', 'customer id')
    .requiredOption('--scheme <scheme>', 'SEPA, SEPA_INSTANT, FASTER_PAYMENTS, SWIFT, ACH or INTERNAL')
    .requiredOption('--currency <currency>', 'EUR, GBP or USD')
    .option('--transaction-type <type>', 'payment (default)')
    .option('--flat <amount>', 'flat fee in major units, e.g. 0.20 (default 0)')
    .option('--percentage <percent>', 'percent of the amount, e.g. 0.25 for 0.25 % (default 0)')
    .option('--min <amount>', 'minimum fee in major units (default none)')
    .option('--max <amount>', 'maximum fee in major units (default none)')
    .option('--name <name>', 'schedule name shown in fee previews (default "Custom <SCHEME> <CURRENCY>")')
    .option('--umbrella-link-id <uuid>', 'umbrella link the schedule belongs to (default none)')
    .action(async ({ customer, scheme, ...schedule }: Omit<SetFeeScheduleInput, 'customerId' | 'paymentScheme'> & { customer: string; scheme: string }) => {
      print(await withStorage((storage) => new FeeService(storage, systemClock).setSchedule({ customerId: customer, paymentScheme: scheme, ...schedule })));
    });
  fees
    .command('list')
    .description("list the default fee schedule, or with --customer the customer's effective schedule")
    .option('--customer <id>', 'customer id')
    .action(async (options: { customer?: string }) => {
      print({ data: await withStorage((storage) => new FeeService(storage, systemClock).listSchedules(options.customer)) });
    });
  // Server secrets (docs/operations.md "Server secrets"): what every start does, on demand, with a report.
  const secrets = program.command('secrets').description('server secrets (the keys of CSRF and form tokens, webhook signing secrets, onboarding links and stored answers)');
  secrets
    .command('rewrap')
    .description('wrap every server secret with the newest master key (SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE) and print which key wraps each')
    .action(async () => {
      const report = await withStorage(async (storage, config) => {
        const keys = masterKeysFor(config, storage.dialect);
        if (keys === undefined) throw new ConfigError('no master key to wrap the server secrets with: set SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE');
        const serverSecrets = new ServerSecrets(storage, keys, systemClock);
        const rewrapped = await serverSecrets.rewrap();
        return { master_key_id: keys.newest.id, rewrapped, secrets: await serverSecrets.wrappingKeys() };
      });
      print(report);
    });

  const ledger = program.command('ledger').description('check the books');
  ledger
    .command('verify')
    .description('check that every balance equals the sum of its postings and every entry balances; exit 1 otherwise')
    .action(async () => {
      const report = await withStorage((storage) => verifyLedger(storage));
      print(report);
      if (!report.ok) process.exitCode = 1;
    });
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    // A command that found a problem (ledger verify) has set the exit code itself.
    return Number(process.exitCode ?? 0);
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof ConfigError || error instanceof InvalidInputError) {
      process.stderr.write(`customer-api: ${error.message}\n`);
      return 1;
    }
    process.stderr.write(`customer-api: ${(error as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await runCli(process.argv.slice(2));
