import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { apiKeyNameLengthMax, pageDefault, pageLimitDefault, pageLimitMax, pageMax } from '../config/limits.js';
import type { SetFeeScheduleInput } from '../modules/fees/index.js';

/**
 * Operator commands (docs/architecture.md, Operator contract; docs/cli.md). Same DATA_DIR / DATABASE_URL as the server (but
 * `listen` and `trigger`, which call a running server over HTTP with an API key); every other command prints one
 * JSON object on stdout (`sandbox init --shell` prints shell lines instead), an error one line on stderr with a
 * non-zero exit. Only commander loads here: a command's code (commands.ts, and with it the database drivers) is
 * imported when it runs, so `--help` and `--version` answer at once.
 */

const commands = () => import('./commands.js');
/** `listen` and `trigger` talk HTTP to a running server with an API key, like an integration (docs/cli.md). */
const apiCommands = async () => ({ ...(await import('./api-client.js')), ...(await import('./listen.js')), ...(await import('./trigger.js')) });

const apiUrlDefault = 'http://localhost:3000';

interface ApiOptions {
  apiKey?: string;
  apiUrl?: string;
}

/** The options of the commands that call the API over HTTP; the environment's values are their defaults. */
function withApiOptions(command: Command): Command {
  return command
    .option('--api-key <key>', 'API key (default: $CUSTOMER_API_KEY, else $KEY as `sandbox init` exports it)')
    .option('--api-url <url>', `URL of the running server (default: $CUSTOMER_API_URL, else ${apiUrlDefault})`);
}

async function apiClient(options: ApiOptions) {
  const code = await apiCommands();
  // KEY is what `sandbox init` exports (its --shell lines, its "export"); an empty variable counts as unset.
  const apiKey = options.apiKey ?? (process.env.CUSTOMER_API_KEY || process.env.KEY);
  if (!apiKey) throw new Error('an API key is needed: --api-key, CUSTOMER_API_KEY or KEY (`eval "$(npx customer-api sandbox init --shell)"` sets KEY)');
  return { code, api: new code.ApiClient(options.apiUrl ?? process.env.CUSTOMER_API_URL ?? apiUrlDefault, apiKey) };
}

/** `sandbox init` without options: the customer it creates or reuses, and its dashboard user (docs/cli.md). */
const sandboxCustomerNameDefault = 'Sandbox';
const sandboxUserEmailDefault = 'admin@example.com';

const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Runs a command's code and prints what it returns. */
async function run(work: (code: Awaited<ReturnType<typeof commands>>) => Promise<unknown>): Promise<void> {
  print(await work(await commands()));
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function wholeNumber(min: number, max: number) {
  return (value: string): number => {
    if (!/^[0-9]{1,10}$/.test(value) || Number(value) < min || Number(value) > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return Number(value);
  };
}

/**
 * The help of every command ends with examples: arguments of `npx customer-api`, a whole command line after `$ `,
 * or after `# ` a comment on the line above (what it prints, what it does).
 */
function withExamples(command: Command, ...examples: string[]): Command {
  const lines = examples.map((example) => (example.startsWith('# ') ? `    ${example}` : example.startsWith('$ ') ? `  ${example}` : `  $ npx customer-api ${example}`));
  return command.addHelpText('after', `\nExample${examples.filter((example) => !example.startsWith('# ')).length > 1 ? 's' : ''}:\n${lines.join('\n')}\n`);
}

function buildProgram(): Command {
  const program = new Command('customer-api')
    .description('Operator commands for the Customer API: same DATA_DIR / DATABASE_URL as the server, one JSON object on stdout; listen and trigger call a running server with an API key instead')
    .version(version, '-v, --version', 'print the version of customer-api')
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
  withExamples(
    program,
    'sandbox init',
    '# a customer, an API key and a dashboard sign-in link, as JSON',
    '$ eval "$(npx customer-api sandbox init --shell)"',
    '# the same, as KEY, CUSTOMER_ID and SIGN_IN_URL in this shell',
    'customers list',
    'keys create --customer 0195c2a4-… --scope payments:write',
    'keys --help',
    'listen --forward-to http://localhost:4242/webhooks',
    'trigger payment.completed',
  );

  withExamples(
    program.command('migrate').description('apply pending database migrations (the server also applies them at start-up)').action(() => run((code) => code.migrate())),
    'migrate',
    '# { "applied": ["0001-foundation", …], "database": "/srv/customer-api/data/customer-api.sqlite" }',
  );

  const sandbox = withExamples(program.command('sandbox').description('set up a sandbox to try the API'), 'sandbox init');
  withExamples(
    sandbox
      .command('init')
      .description('create (or reuse, by name) a customer, and print a new API key and a dashboard sign-in link; refused in production')
      .option('--name <name>', 'customer name; a customer of that name is reused', sandboxCustomerNameDefault)
      .option('--email <email>', 'email address of the dashboard user', sandboxUserEmailDefault)
      .option('--shell', 'print only `export KEY=…`, `CUSTOMER_ID=…` and `SIGN_IN_URL=…` lines, for eval')
      .action(async (options: { name: string; email: string; shell?: boolean }) => {
        const code = await commands();
        const credentials = await code.sandboxInit({ name: options.name, email: options.email });
        if (options.shell) process.stdout.write(code.shellExports(credentials));
        else print(credentials);
      }),
    'sandbox init',
    '# { "customer": { "id", … }, "api_key": { "key": "sk_test_…", … }, "dashboard_user": { "sign_in_url", … }, "export": "export KEY=sk_test_…", "first_call", … }',
    'sandbox init --name "Acme Ltd" --email ada@example.com',
    '$ eval "$(npx customer-api sandbox init --shell)"',
    '# sets KEY, CUSTOMER_ID and SIGN_IN_URL in this shell',
    '$ curl -s http://localhost:3000/v1/fiat-accounts -H "x-api-key: $KEY"',
  );

  const customers = withExamples(program.command('customers').description('manage customers'), 'customers create --name "Acme Ltd"', 'customers list');
  withExamples(
    customers
      .command('create')
      .description('create a customer')
      .requiredOption('--name <name>', 'customer name (1-200 characters)')
      .action((options: { name: string }) => run((code) => code.createCustomer(options.name))),
    'customers create --name "Acme Ltd"',
    '# { "id": "0195c2a4-…", "name": "Acme Ltd", "fr_owner_business_id": "busi_…", "created_at": "…" }',
  );
  withExamples(
    customers
      .command('list')
      .description('list customers, newest first, a page at a time')
      .option('--page <n>', `page number, from 1 (default ${pageDefault})`, wholeNumber(1, pageMax), pageDefault)
      .option('--limit <n>', `customers per page (default ${pageLimitDefault}, at most ${pageLimitMax})`, wholeNumber(1, pageMax), pageLimitDefault)
      .action((options: { page: number; limit: number }) => run((code) => code.listCustomers(options.page, options.limit))),
    'customers list',
    '# { "data": [ { "id", "name", "fr_owner_business_id", "created_at" } ], "meta": { "pagination": { "page": 1, "limit": 50, "total": 1 } } }',
    'customers list --page 2 --limit 100',
  );

  const keys = withExamples(program.command('keys').description('manage API keys'), 'keys create --customer 0195c2a4-…', 'keys list --customer 0195c2a4-…');
  withExamples(
    keys
      .command('create')
      .description('create an API key; the full key is printed only here')
      .requiredOption('--customer <id>', 'customer id')
      .option('--name <text>', `a name for the key, shown in lists (at most ${apiKeyNameLengthMax} characters)`)
      .option('--scope <scope>', 'scope, repeatable (default *)', collect, [])
      .option('--allow-ip <cidr>', 'allowed IPv4/IPv6 address or CIDR range, repeatable (default: any)', collect, [])
      .option('--expires-at <iso>', 'expiry as an ISO 8601 date-time')
      .action((options: { customer: string; name?: string; scope: string[]; allowIp: string[]; expiresAt?: string }) => run((code) => code.createKey(options))),
    'keys create --customer 0195c2a4-… --name "CI deploys"',
    '# { "id", "name": "CI deploys", "key": "sk_test_…", "prefix", "scopes": ["*"], "allowed_ips": [], "expires_at": null, … }',
    'keys create --customer 0195c2a4-… --scope payments:read --scope payments:write --allow-ip 203.0.113.0/24 --expires-at 2027-01-01T00:00:00Z',
  );
  withExamples(
    keys
      .command('list')
      .description("list a customer's API keys (never the keys themselves)")
      .requiredOption('--customer <id>', 'customer id')
      .action((options: { customer: string }) => run((code) => code.listKeys(options.customer))),
    'keys list --customer 0195c2a4-…',
    '# { "data": [ { "id", "prefix": "sk_test_AbCd", "scopes", "revoked_at", "last_used_at", … } ] }',
  );
  withExamples(
    keys
      .command('revoke')
      .description('revoke an API key at once')
      .argument('<keyId>', 'API key id')
      .action((keyId: string) => run((code) => code.revokeKey(keyId))),
    'keys revoke 0195c2b0-…',
  );

  // Dashboard users (docs/dashboard.md): the printed link is the only way in until the user has chosen a password.
  const users = withExamples(program.command('users').description('manage customer dashboard users'), 'users create --customer 0195c2a4-… --email ada@example.com');
  withExamples(
    users
      .command('create')
      .description('create a dashboard user and print a one-time sign-in link (valid 24 hours) on which they choose a password')
      .requiredOption('--customer <id>', 'customer id')
      .requiredOption('--email <email>', 'email address the user signs in with')
      .action((options: { customer: string; email: string }) => run((code) => code.createUser(options.customer, options.email))),
    'users create --customer 0195c2a4-… --email ada@example.com',
    '# { "id", "email": "ada@example.com", "password_set": false, "sign_in_url": "http://localhost:3000/dashboard/link/…", "expires_at" }',
  );
  withExamples(
    users
      .command('link')
      .description('print a new one-time sign-in link for a user (first link expired, or password forgotten)')
      .requiredOption('--email <email>', "the user's email address")
      .action((options: { email: string }) => run((code) => code.issueUserLink(options.email))),
    'users link --email ada@example.com',
  );
  withExamples(
    users
      .command('list')
      .description("list a customer's dashboard users (never their passwords)")
      .requiredOption('--customer <id>', 'customer id')
      .action((options: { customer: string }) => run((code) => code.listUsers(options.customer))),
    'users list --customer 0195c2a4-…',
    '# { "data": [ { "id", "customer_id", "email", "password_set", "created_at" } ] }',
  );

  // Fee schedules (docs/fees.md): the default schedule is seeded by migration 0004; operators set per-customer rows.
  const fees = withExamples(program.command('fees').description('manage fee schedules'), 'fees list');
  withExamples(
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
      .action(({ customer, scheme, ...schedule }: Omit<SetFeeScheduleInput, 'customerId' | 'paymentScheme'> & { customer: string; scheme: string }) =>
        run((code) => code.setFees({ customerId: customer, paymentScheme: scheme, ...schedule })),
      ),
    'fees set --customer 0195c2a4-… --scheme SEPA --currency EUR --flat 0.20 --percentage 0.1 --max 5.00',
  );
  withExamples(
    fees
      .command('list')
      .description("list the default fee schedule, or with --customer the customer's effective schedule")
      .option('--customer <id>', 'customer id')
      .action((options: { customer?: string }) => run((code) => code.listFees(options.customer))),
    'fees list',
    'fees list --customer 0195c2a4-…',
  );

  // Server secrets (docs/operations.md "Server secrets").
  const secrets = withExamples(
    program.command('secrets').description('server secrets (the keys of CSRF and form tokens, webhook signing secrets, onboarding links and stored answers)'),
    'secrets rewrap',
  );
  withExamples(
    secrets
      .command('rewrap')
      .description('wrap every server secret with the newest master key (SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE) and print which key wraps each')
      .action(() => run((code) => code.rewrapSecrets())),
    '$ SECRETS_MASTER_KEY="$NEW_KEY,$OLD_KEY" npx customer-api secrets rewrap',
    '# { "master_key_id", "rewrapped": [ … ], "secrets": [ { "name", "key_id" } ] }',
  );

  withExamples(
    withApiOptions(
      program
        .command('listen')
        .description(
          "stream your customer's events from a running server (GET /events/stream, with an API key: not the database) and POST each to a local URL, signed like a webhook delivery with a secret printed first; ^C stops",
        )
        .requiredOption('--forward-to <url>', 'URL each event is POSTed to (localhost is fine)')
        .option('--events <types>', 'only these event types, comma-separated (default: all the key may read)')
        .option('--secret <whsec>', 'signing secret to use (default: a new whsec_… for this session)'),
    ).action(async (options: ApiOptions & { forwardTo: string; events?: string; secret?: string }) => {
      const { code, api } = await apiClient(options);
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      const eventTypes = options.events === undefined ? [] : options.events.split(',').map((type) => type.trim()).filter((type) => type !== '');
      await code.listen(api, {
        forwardTo: options.forwardTo,
        eventTypes,
        ...(options.secret === undefined ? {} : { secret: options.secret }),
        signal: stop.signal,
        write: (line) => process.stdout.write(`${line}\n`),
      });
    }),
    'listen --forward-to http://localhost:4242/webhooks',
    '# Ready! Your webhook signing secret is whsec_… (^C to quit)',
    '# 2026-03-02T09:30:00.000Z  payment.completed  0195c2b0-…  -> POST http://localhost:4242/webhooks [200]',
    'listen --forward-to http://localhost:4242/webhooks --events payment.completed,payment.failed --api-url http://localhost:3000 --api-key sk_test_…',
  );
  withExamples(
    withApiOptions(
      program
        .command('trigger')
        .description('make a running server fire an event: create what it needs in the sandbox through the API (with an API key: not the database) and drive its lifecycle; prints the ids made')
        .argument('<eventType>', 'an event type of docs/webhooks.md "Events", e.g. payment.completed'),
    ).action(async (eventType: string, options: ApiOptions) => {
      const { code, api } = await apiClient(options);
      print(await code.trigger(api, eventType));
    }),
    'trigger payment.completed',
    '# { "event_type": "payment.completed", "created": { "fiat_account": "0195c2b0-…", "deposit": "…", "payee": "…", "payment": "…" } }',
  );

  const ledger = withExamples(program.command('ledger').description('check the books'), 'ledger verify');
  withExamples(
    ledger
      .command('verify')
      .description('check that every balance equals the sum of its postings and every entry balances; exit 1 otherwise')
      .action(async () => {
        const report = await (await commands()).checkLedger();
        print(report);
        if (!report.ok) process.exitCode = 1;
      }),
    'ledger verify',
    '# { "ok": true, … }',
  );
  return program;
}

export async function runCli(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    // A command that found a problem (ledger verify) has set the exit code itself.
    return Number(process.exitCode ?? 0);
  } catch (error) {
    // Commander has printed its own one line (or the help, or the version: exit code 0).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    process.stderr.write(`customer-api: ${(error as Error).message}\n`);
    return 1;
  }
}

process.exitCode = await runCli(process.argv.slice(2));
