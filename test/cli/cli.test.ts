import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, lines, processTestTimeoutMs, run, stackFrame, type ProcessResult } from '../e2e/support.js';

/** The operator CLI (docs/architecture.md, Operator contract) run as an operator runs it: a child process on a DATA_DIR, JSON on stdout. */

const sandboxKeyPattern = /^sk_test_[A-Za-z0-9_-]{43}$/;
const liveKeyPattern = /^sk_live_[A-Za-z0-9_-]{43}$/;
const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const directories: string[] = [];
function dataDir(): string {
  const directory = temporaryDirectory('customer-api-cli-');
  directories.push(directory);
  return directory;
}

function cli(args: string[], env: Record<string, string>): Promise<ProcessResult> {
  return run(process.execPath, ['bin/customer-api.js', ...args], { env: childEnv(env) });
}

/** Runs a command that must succeed and print exactly one JSON object. */
async function cliJson<T = Record<string, unknown>>(args: string[], env: Record<string, string>): Promise<T> {
  const result = await cli(args, env);
  expect(result.stderr, `stderr of ${args.join(' ')}`).toBe('');
  expect(result.code, `exit code of ${args.join(' ')}`).toBe(0);
  return JSON.parse(result.stdout) as T;
}

/** A failing command: non-zero exit, nothing on stdout, one line on stderr, no stack trace. */
function expectOneLineFailure(result: ProcessResult): string {
  expect(result.code).not.toBe(0);
  expect(result.code).not.toBeNull();
  expect(result.stdout).toBe('');
  expect(lines(result.stderr)).toHaveLength(1);
  expect(result.stderr).not.toContain(stackFrame);
  return result.stderr.trim();
}

interface KeyOutput {
  id: string;
  name: string | null;
  key: string;
  prefix: string;
  scopes: string[];
  allowed_ips: string[];
  expires_at: string | null;
  revoked_at: string | null;
  customer_id: string;
}

describe.concurrent('customer-api CLI', { timeout: processTestTimeoutMs }, () => {
  let env: Record<string, string>;
  let customer: { id: string; name: string; fr_owner_business_id: string };

  beforeAll(async () => {
    await ensureBuilt();
    env = { DATA_DIR: dataDir() };
    customer = await cliJson(['customers', 'create', '--name', 'Acme Ltd'], env);
  }, processTestTimeoutMs);
  afterAll(() => {
    for (const directory of directories) fs.rmSync(directory, { recursive: true, force: true });
  });

  it('runs through `npx customer-api` in the checkout, without fetching anything', async () => {
    // --no: npx must find the checkout's own bin, never install a package of that name from the registry.
    const result = await run('npx', ['--no', 'customer-api', 'customers', 'create', '--name', 'Via npx'], { env: childEnv({ DATA_DIR: dataDir() }) });
    expect(result.code, result.stderr).toBe(0);
    const created = JSON.parse(result.stdout);
    expect(created.name).toBe('Via npx');
    expect(created.id).toMatch(uuidPattern);
  });

  it('creates a customer and prints it as one JSON object', () => {
    expect(customer.id).toMatch(uuidPattern);
    expect(customer.name).toBe('Acme Ltd');
    expect(customer.fr_owner_business_id).toMatch(/^busi_[0-9a-f]+$/);
  });

  it('creates a sandbox key sk_test_ + 32 random bytes, with a 12-character display prefix and scope * by default', async () => {
    const created = await cliJson<KeyOutput>(['keys', 'create', '--customer', customer.id], env);
    expect(created.key).toMatch(sandboxKeyPattern);
    expect(Buffer.from(created.key.slice('sk_test_'.length), 'base64url')).toHaveLength(32);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    expect(created.id).toMatch(uuidPattern);
    expect(created.customer_id).toBe(customer.id);
    expect(created.scopes).toEqual(['*']);
    expect(created.allowed_ips).toEqual([]);
    expect(created.expires_at).toBeNull();
    expect(created.name).toBeNull();
    expect(created.revoked_at).toBeNull();
  });

  it('names a key with --name (trimmed), listed with it; a name of 100 characters is taken whole, one of 101 refused', async () => {
    const created = await cliJson<KeyOutput>(['keys', 'create', '--customer', customer.id, '--name', '  CI deploys '], env);
    expect(created.name).toBe('CI deploys');
    const longest = `${'n'.repeat(99)}Z`;
    const named = await cliJson<KeyOutput>(['keys', 'create', '--customer', customer.id, '--name', longest], env);
    expect(named.name).toBe(longest);
    const listed = JSON.parse((await cli(['keys', 'list', '--customer', customer.id], env)).stdout) as { data: Array<{ id: string; name: string | null }> };
    expect(listed.data.find((key) => key.id === created.id)?.name).toBe('CI deploys');
    expect(listed.data.find((key) => key.id === named.id)?.name).toBe(longest);
    const message = expectOneLineFailure(await cli(['keys', 'create', '--customer', customer.id, '--name', 'x'.repeat(101)], env));
    expect(message).toContain('--name must be at most 100 characters');
  });

  it('issues a different key every time', async () => {
    const first = await cliJson<KeyOutput>(['keys', 'create', '--customer', customer.id], env);
    const second = await cliJson<KeyOutput>(['keys', 'create', '--customer', customer.id], env);
    expect(first.key).not.toBe(second.key);
    expect(first.id).not.toBe(second.id);
  });

  it('honours repeated --scope, IPv4 and IPv6 --allow-ip (a bare address becoming /32) and --expires-at', async () => {
    const created = await cliJson<KeyOutput>(
      [
        'keys', 'create', '--customer', customer.id,
        '--scope', 'fiat-accounts:read', '--scope', 'payments:write',
        '--allow-ip', '203.0.113.0/24', '--allow-ip', '2001:db8::/32', '--allow-ip', '198.51.100.7',
        '--expires-at', '2030-01-02T03:04:05Z',
      ],
      env,
    );
    expect(created.scopes).toEqual(['fiat-accounts:read', 'payments:write']);
    expect(created.allowed_ips).toEqual(['203.0.113.0/24', '2001:db8::/32', '198.51.100.7/32']);
    expect(created.expires_at).toBe('2030-01-02T03:04:05.000Z');
    expect(created.key).toMatch(sandboxKeyPattern);
  });

  it('issues sk_live_ keys when API_ENVIRONMENT=production', async () => {
    const productionEnv = { DATA_DIR: dataDir(), API_ENVIRONMENT: 'production' };
    const owner = await cliJson<{ id: string }>(['customers', 'create', '--name', 'Live Co'], productionEnv);
    const created = await cliJson<KeyOutput>(['keys', 'create', '--customer', owner.id], productionEnv);
    expect(created.key).toMatch(liveKeyPattern);
    expect(created.prefix).toBe(created.key.slice(0, 12));
    expect(created.prefix.startsWith('sk_live_')).toBe(true);
  });

  it('lists a customer’s keys without the key or its hash', async () => {
    const listEnv = { DATA_DIR: dataDir() };
    const owner = await cliJson<{ id: string }>(['customers', 'create', '--name', 'Listed'], listEnv);
    const first = await cliJson<KeyOutput>(['keys', 'create', '--customer', owner.id], listEnv);
    const second = await cliJson<KeyOutput>(['keys', 'create', '--customer', owner.id, '--scope', 'wallets:read'], listEnv);
    const result = await cli(['keys', 'list', '--customer', owner.id], listEnv);
    expect(result.code).toBe(0);
    const listed = JSON.parse(result.stdout) as { data: Array<Record<string, unknown>> };
    expect(listed.data.map((key) => key.id)).toEqual([first.id, second.id]);
    expect(listed.data.map((key) => key.prefix)).toEqual([first.prefix, second.prefix]);
    expect(listed.data[1]!.scopes).toEqual(['wallets:read']);
    for (const key of listed.data) {
      expect(key).not.toHaveProperty('key');
      expect(key).not.toHaveProperty('key_hash');
    }
    for (const secret of [first.key, second.key]) {
      expect(result.stdout).not.toContain(secret);
      expect(result.stdout).not.toContain(createHash('sha256').update(secret).digest('hex'));
    }
  });

  it('revokes a key: revoked_at is set and stays set in the list', async () => {
    const created = await cliJson<KeyOutput>(['keys', 'create', '--customer', customer.id], env);
    const before = Date.now();
    const revoked = await cliJson<KeyOutput>(['keys', 'revoke', created.id], env);
    expect(revoked.id).toBe(created.id);
    expect(revoked).not.toHaveProperty('key');
    expect(revoked.revoked_at).not.toBeNull();
    expect(Math.abs(Date.parse(revoked.revoked_at!) - before)).toBeLessThan(60_000);
    const listed = await cliJson<{ data: KeyOutput[] }>(['keys', 'list', '--customer', customer.id], env);
    expect(listed.data.find((key) => key.id === created.id)?.revoked_at).toBe(revoked.revoked_at);
    expect(listed.data.filter((key) => key.id !== created.id).every((key) => key.revoked_at === null)).toBe(true);
  });

  it('stores only the SHA-256 of a key and its display prefix, never the key', async () => {
    const storeEnv = { DATA_DIR: dataDir() };
    const owner = await cliJson<{ id: string }>(['customers', 'create', '--name', 'Stored'], storeEnv);
    const created = await cliJson<KeyOutput>(['keys', 'create', '--customer', owner.id], storeEnv);
    const hash = createHash('sha256').update(created.key).digest('hex');

    // Every byte the database left on disk (main file, WAL, shared memory), read before anything reopens it.
    const bytes = Buffer.concat(fs.readdirSync(storeEnv.DATA_DIR).map((file) => fs.readFileSync(path.join(storeEnv.DATA_DIR, file))));
    expect(bytes.includes(created.key)).toBe(false);
    expect(bytes.includes(created.key.slice(12))).toBe(false);
    expect(bytes.includes(hash)).toBe(true);
    const database = new BetterSqlite3(path.join(storeEnv.DATA_DIR, 'customer-api.sqlite'), { fileMustExist: true });
    try {
      const row = database.prepare('select * from api_keys where id = ?').get(created.id) as Record<string, unknown>;
      expect(row.key_hash).toBe(hash);
      expect(row.prefix).toBe(created.key.slice(0, 12));
      expect(Object.values(row)).not.toContain(created.key);
    } finally {
      database.close();
    }
  });

  it('migrate prints JSON and is idempotent', async () => {
    const migrateEnv = { DATA_DIR: dataDir() };
    const first = await cliJson<{ applied: string[]; database: string }>(['migrate'], migrateEnv);
    expect(first.applied).toContain('0001-foundation');
    expect(first.database).toBe(path.join(migrateEnv.DATA_DIR, 'customer-api.sqlite'));
    const second = await cliJson<{ applied: string[] }>(['migrate'], migrateEnv);
    expect(second.applied).toEqual([]);
  });

  it('creates a dashboard user with a one-time sign-in link under PUBLIC_URL, valid 24 hours, and lists users without passwords', async () => {
    const before = Date.now();
    const created = await cliJson<{ id: string; email: string; customer_id: string; password_set: boolean; sign_in_url: string; expires_at: string }>(
      ['users', 'create', '--customer', customer.id, '--email', 'Ops@Example.com'],
      { ...env, PUBLIC_URL: 'https://dashboard.example.com/' },
    );
    expect(created).toMatchObject({ email: 'ops@example.com', customer_id: customer.id, password_set: false });
    expect(created.sign_in_url).toMatch(/^https:\/\/dashboard\.example\.com\/dashboard\/link\/[A-Za-z0-9_-]{43}$/);
    const validMs = Date.parse(created.expires_at) - before;
    expect(validMs).toBeGreaterThan(24 * 3_600_000 - 60_000);
    expect(validMs).toBeLessThanOrEqual(24 * 3_600_000 + 60_000);

    const again = await cliJson<{ sign_in_url: string }>(['users', 'link', '--email', 'ops@example.com'], env);
    expect(again.sign_in_url).toMatch(/^http:\/\/localhost:3000\/dashboard\/link\//);
    expect(again.sign_in_url).not.toBe(created.sign_in_url);
    const listed = await cliJson<{ data: Array<Record<string, unknown>> }>(['users', 'list', '--customer', customer.id], env);
    expect(listed.data).toEqual([{ id: created.id, customer_id: customer.id, email: 'ops@example.com', password_set: false, created_at: expect.any(String) }]);

    expect(expectOneLineFailure(await cli(['users', 'create', '--customer', customer.id, '--email', 'ops@example.com'], env))).toMatch(/exists/);
    expect(expectOneLineFailure(await cli(['users', 'create', '--customer', customer.id, '--email', 'not-an-address'], env))).toMatch(/not an email address/);
    expect(expectOneLineFailure(await cli(['users', 'create', '--customer', '00000000-0000-4000-8000-000000000000', '--email', 'x@example.com'], env))).toMatch(/customer/);
    expect(expectOneLineFailure(await cli(['users', 'link', '--email', 'nobody@example.com'], env))).toMatch(/no dashboard user/);
  });

  describe('refuses bad input with one line on stderr, nothing on stdout and a non-zero exit', () => {
    it('an unknown customer', async () => {
      const message = expectOneLineFailure(await cli(['keys', 'create', '--customer', '00000000-0000-4000-8000-000000000000'], env));
      expect(message).toMatch(/customer/);
    });

    it('an unknown customer for keys list', async () => {
      expectOneLineFailure(await cli(['keys', 'list', '--customer', '00000000-0000-4000-8000-000000000000'], env));
    });

    it('an unknown customer for users list, as keys list refuses it', async () => {
      const message = expectOneLineFailure(await cli(['users', 'list', '--customer', '00000000-0000-4000-8000-000000000000'], env));
      expect(message).toBe('customer-api: no customer with id 00000000-0000-4000-8000-000000000000');
    });

    it('an unknown key id for keys revoke', async () => {
      expectOneLineFailure(await cli(['keys', 'revoke', '00000000-0000-4000-8000-000000000000'], env));
    });

    it('an unknown scope', async () => {
      const message = expectOneLineFailure(await cli(['keys', 'create', '--customer', customer.id, '--scope', 'foo:bar'], env));
      expect(message).toContain('foo:bar');
    });

    it.each(['10.0.0.0/33', '2001:db8::/129', 'not-an-ip'])('an --allow-ip of %s', async (cidr) => {
      const message = expectOneLineFailure(await cli(['keys', 'create', '--customer', customer.id, '--allow-ip', cidr], env));
      expect(message).toContain(cidr);
    });

    it.each(['next tuesday', '2030-02-30T00:00:00Z', '1'])('an --expires-at of "%s"', async (date) => {
      const message = expectOneLineFailure(await cli(['keys', 'create', '--customer', customer.id, '--expires-at', date], env));
      expect(message).toContain('--expires-at');
    });

    it('customers create without --name', async () => {
      const message = expectOneLineFailure(await cli(['customers', 'create'], env));
      expect(message).toContain('--name');
    });

    it('an empty --name', async () => {
      expectOneLineFailure(await cli(['customers', 'create', '--name', '  '], env));
    });

    it('an unknown command', async () => {
      expectOneLineFailure(await cli(['customers', 'delete'], env));
    });

    it('a DATABASE_URL that is not PostgreSQL', async () => {
      const message = expectOneLineFailure(await cli(['migrate'], { DATA_DIR: dataDir(), DATABASE_URL: 'mysql://x' }));
      expect(message).toMatch(/^customer-api: .*DATABASE_URL/);
    });

    it('a DATA_DIR that cannot be created', async () => {
      const file = path.join(dataDir(), 'file.txt');
      fs.writeFileSync(file, '');
      const message = expectOneLineFailure(await cli(['customers', 'create', '--name', 'x'], { DATA_DIR: path.join(file, 'data') }));
      expect(message).toMatch(/^customer-api: .*DATA_DIR/);
    });

    it('writes nothing when a key is refused', async () => {
      const refusedEnv = { DATA_DIR: dataDir() };
      const owner = await cliJson<{ id: string }>(['customers', 'create', '--name', 'Refused'], refusedEnv);
      expectOneLineFailure(await cli(['keys', 'create', '--customer', owner.id, '--scope', 'foo:bar'], refusedEnv));
      expect((await cliJson<{ data: unknown[] }>(['keys', 'list', '--customer', owner.id], refusedEnv)).data).toEqual([]);
    });
  });
});
