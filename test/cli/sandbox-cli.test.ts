import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, databaseDeployments, ensureBuilt, lines, processTestTimeoutMs, run, stackFrame, type Deployment, type ProcessResult } from '../e2e/support.js';

/**
 * `customer-api sandbox init` and `customers list` (docs/cli.md) run as an operator runs them, on SQLite and on
 * PostgreSQL: one JSON object on stdout (or, with --shell, lines a shell can eval), errors as one line on stderr.
 */

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const sandboxKeyPattern = /^sk_test_[A-Za-z0-9_-]{43}$/;

interface Credentials {
  customer: { id: string; name: string; fr_owner_business_id: string; created_at: string };
  customer_created: boolean;
  api_key: Record<string, unknown> & { id: string; key: string; prefix: string; customer_id: string; scopes: string[] };
  dashboard_user: { id: string; customer_id: string; email: string; password_set: boolean; created_at: string; sign_in_url: string; expires_at: string };
  api_url: string;
  export: string;
  first_call: string;
  csrf_token_call: string;
}

interface CustomerPage {
  data: Array<Record<string, unknown> & { id: string; name: string }>;
  meta: { pagination: { page: number; limit: number; total: number } };
}

const cli = (env: NodeJS.ProcessEnv, ...args: string[]): Promise<ProcessResult> => run(process.execPath, ['bin/customer-api.js', ...args], { env });

async function cliJson<T>(env: NodeJS.ProcessEnv, ...args: string[]): Promise<T> {
  const result = await cli(env, ...args);
  expect(result.stderr, `stderr of ${args.join(' ')}`).toBe('');
  expect(result.code, `exit code of ${args.join(' ')}`).toBe(0);
  return JSON.parse(result.stdout) as T;
}

function expectOneLineFailure(result: ProcessResult): string {
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).not.toContain(stackFrame);
  return result.stderr.trim();
}

beforeAll(async () => ensureBuilt(), processTestTimeoutMs);

describe.each(databaseDeployments('SQLite', 'sandbox-cli'))('customer-api sandbox init and customers list on %s', { timeout: processTestTimeoutMs }, (_label, makeDeployment) => {
  let deployment: Deployment;
  let env: NodeJS.ProcessEnv;
  let first: Credentials;

  beforeAll(async () => {
    deployment = makeDeployment();
    await deployment.prepare();
    env = deployment.env;
    first = await cliJson<Credentials>(env, 'sandbox', 'init');
  }, processTestTimeoutMs);
  afterAll(async () => deployment.cleanUp());

  it('creates a customer named Sandbox, a * key shown once and a dashboard user admin@example.com with a sign-in link', () => {
    expect(Object.keys(first).sort()).toEqual(['api_key', 'api_url', 'csrf_token_call', 'customer', 'customer_created', 'dashboard_user', 'export', 'first_call']);
    expect(first.customer).toEqual({ id: expect.stringMatching(uuidPattern), name: 'Sandbox', fr_owner_business_id: expect.stringMatching(/^busi_/), created_at: expect.any(String) });
    expect(first.customer_created).toBe(true);
    expect(first.api_key.key).toMatch(sandboxKeyPattern);
    expect(first.api_key).toMatchObject({ customer_id: first.customer.id, prefix: first.api_key.key.slice(0, 12), scopes: ['*'], environment: 'sandbox', revoked_at: null });
    expect(first.api_key).not.toHaveProperty('key_hash');
    expect(first.dashboard_user).toMatchObject({ customer_id: first.customer.id, email: 'admin@example.com', password_set: false });
    // No server has recorded a PUBLIC_URL on this database: the default, as `users create` prints it.
    expect(first.dashboard_user.sign_in_url).toMatch(/^http:\/\/localhost:3000\/dashboard\/link\/[A-Za-z0-9_-]{43}$/);
    expect(first.api_url).toBe('http://localhost:3000/v1');
  });

  it('prints the export line a shell runs and a first call that needs no CSRF token, and where to get one', () => {
    expect(first.export).toBe(`export KEY=${first.api_key.key}`);
    expect(first.first_call).toBe('curl -s http://localhost:3000/v1/fiat-accounts -H "x-api-key: $KEY"');
    expect(first.csrf_token_call).toBe('curl -s http://localhost:3000/v1/csrf-token -H "x-api-key: $KEY"');
  });

  it('run again, reuses the customer of that name and its dashboard user, with a new key and a new sign-in link', async () => {
    const again = await cliJson<Credentials>(env, 'sandbox', 'init');
    expect(again.customer).toEqual(first.customer);
    expect(again.customer_created).toBe(false);
    expect(again.api_key.key).toMatch(sandboxKeyPattern);
    expect(again.api_key.key).not.toBe(first.api_key.key);
    expect(again.dashboard_user.id).toBe(first.dashboard_user.id);
    expect(again.dashboard_user.sign_in_url).not.toBe(first.dashboard_user.sign_in_url);
    const keys = await cliJson<{ data: Array<{ id: string }> }>(env, 'keys', 'list', '--customer', first.customer.id);
    expect(keys.data.map((key) => key.id)).toEqual(expect.arrayContaining([first.api_key.id, again.api_key.id]));
    const users = await cliJson<{ data: unknown[] }>(env, 'users', 'list', '--customer', first.customer.id);
    expect(users.data).toHaveLength(1);
  });

  it('with --name and --email, sets up another customer with that user', async () => {
    const other = await cliJson<Credentials>(env, 'sandbox', 'init', '--name', '  Acme Ltd ', '--email', 'Ada@Example.com');
    expect(other.customer.name).toBe('Acme Ltd');
    expect(other.customer.id).not.toBe(first.customer.id);
    expect(other.customer_created).toBe(true);
    expect(other.dashboard_user).toMatchObject({ email: 'ada@example.com', customer_id: other.customer.id });
    expect((await cliJson<Credentials>(env, 'sandbox', 'init', '--name', 'Acme Ltd', '--email', 'ada@example.com')).customer.id).toBe(other.customer.id);
  });

  it('refuses an address that is another customer’s dashboard user, writing nothing', async () => {
    const customersBefore = await cliJson<CustomerPage>(env, 'customers', 'list');
    const keysBefore = await cliJson<{ data: unknown[] }>(env, 'keys', 'list', '--customer', first.customer.id);
    const message = expectOneLineFailure(await cli(env, 'sandbox', 'init', '--name', 'Third'));
    expect(message).toBe(
      `customer-api: admin@example.com is the dashboard user of customer "Sandbox" (${first.customer.id}); pass --email with another address, or --name "Sandbox" to reuse that customer`,
    );
    expect(await cliJson<CustomerPage>(env, 'customers', 'list')).toEqual(customersBefore);
    expect(await cliJson<{ data: unknown[] }>(env, 'keys', 'list', '--customer', first.customer.id)).toEqual(keysBefore);
  });

  it.each([
    ['an email that is no address', ['--email', 'not-an-address'], /--email "not-an-address" is not an email address/],
    ['a blank name', ['--name', '   '], /--name must be 1-200 characters/],
    ['a name of 201 characters', ['--name', 'x'.repeat(201)], /--name must be 1-200 characters/],
  ])('refuses %s with one line, creating no customer', async (_case, args, expected) => {
    const before = await cliJson<CustomerPage>(env, 'customers', 'list');
    expect(expectOneLineFailure(await cli(env, 'sandbox', 'init', ...args))).toMatch(expected);
    expect((await cliJson<CustomerPage>(env, 'customers', 'list')).meta.pagination.total).toBe(before.meta.pagination.total);
  });

  it('--shell prints only export lines, which a shell evaluates to the same key, customer and link', async () => {
    const result = await cli(env, 'sandbox', 'init', '--shell');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/^export KEY=sk_test_[A-Za-z0-9_-]{43}\nexport CUSTOMER_ID=[0-9a-f-]{36}\nexport SIGN_IN_URL=http:\/\/localhost:3000\/dashboard\/link\/[A-Za-z0-9_-]{43}\n$/);
    const shell = await run('bash', ['-c', `eval "$(${JSON.stringify(process.execPath)} bin/customer-api.js sandbox init --shell)" && printf '%s\\n' "$KEY" "$CUSTOMER_ID" "$SIGN_IN_URL"`], { env });
    expect(shell.code, shell.stderr).toBe(0);
    const [key, customerId, signInUrl] = lines(shell.stdout);
    expect(key).toMatch(sandboxKeyPattern);
    expect(customerId).toBe(first.customer.id);
    expect(signInUrl).toMatch(/^http:\/\/localhost:3000\/dashboard\/link\//);
    const keys = await cliJson<{ data: Array<{ prefix: string }> }>(env, 'keys', 'list', '--customer', first.customer.id);
    expect(keys.data.map((entry) => entry.prefix)).toContain(key!.slice(0, 12));
  });

  it('--shell quotes what a shell would otherwise read differently (a PUBLIC_URL with a quote and a $)', async () => {
    const publicUrl = "http://localhost:3000/it's/$HOME";
    const shell = await run('bash', ['-c', `eval "$(${JSON.stringify(process.execPath)} bin/customer-api.js sandbox init --shell)" && printf '%s\\n' "$SIGN_IN_URL"`], {
      env: { ...env, PUBLIC_URL: publicUrl },
    });
    expect(shell.code, shell.stderr).toBe(0);
    expect(shell.stdout).toMatch(/^http:\/\/localhost:3000\/it's\/\$HOME\/dashboard\/link\/[A-Za-z0-9_-]{43}\n$/);
  });

  it('customers list: newest first, without internal counters, a page at a time with the total', async () => {
    const all = await cliJson<CustomerPage>(env, 'customers', 'list');
    expect(all.meta.pagination).toEqual({ page: 1, limit: 50, total: all.data.length });
    expect(all.data.map((customer) => customer.name)).toEqual(['Acme Ltd', 'Sandbox']);
    for (const customer of all.data) expect(Object.keys(customer).sort()).toEqual(['created_at', 'fr_owner_business_id', 'id', 'name']);
    const second = await cliJson<CustomerPage>(env, 'customers', 'list', '--page', '2', '--limit', '1');
    expect(second).toEqual({ data: [all.data[1]], meta: { pagination: { page: 2, limit: 1, total: 2 } } });
    const beyond = await cliJson<CustomerPage>(env, 'customers', 'list', '--page', '3', '--limit', '1');
    expect(beyond.data).toEqual([]);
    // The page size is clamped as the API's is.
    expect((await cliJson<CustomerPage>(env, 'customers', 'list', '--limit', '1000')).meta.pagination.limit).toBe(100);
  });

  it.each([
    ['--limit', '0'],
    ['--limit', 'ten'],
    ['--page', '0'],
    ['--page', '-1'],
    ['--page', '1000000001'],
  ])('customers list refuses %s %s with one line', async (option, value) => {
    const result = await cli(env, 'customers', 'list', option, value);
    expect(result.code).not.toBe(0);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toContain(option);
  });

  it('takes a name of 200 characters, the longest, whole', async () => {
    const name = `${'x'.repeat(199)}Z`;
    const created = await cliJson<Credentials>(env, 'sandbox', 'init', '--name', name, '--email', 'longest-name@example.com');
    expect(created.customer.name).toBe(name);
  });
});

describe('customer-api sandbox init in production', { timeout: processTestTimeoutMs }, () => {
  const dataDir = temporaryDirectory('customer-api-sandbox-production-');
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('refuses with one line and writes nothing, not even the database file', async () => {
    const result = await cli(childEnv({ DATA_DIR: dataDir, API_ENVIRONMENT: 'production' }), 'sandbox', 'init');
    expect(expectOneLineFailure(result)).toBe(
      'customer-api: sandbox init is for the sandbox and this is API_ENVIRONMENT=production; use customers create, keys create and users create',
    );
    expect(fs.readdirSync(dataDir)).toEqual([]);
  });
});
