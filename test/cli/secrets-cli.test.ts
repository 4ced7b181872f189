import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/config.js';
import { masterKeyId } from '../../src/config/master-keys.js';
import { ApiKeyService } from '../../src/modules/api-keys/service.js';
import { CustomerService } from '../../src/modules/customers/service.js';
import { openStorage } from '../../src/storage/database.js';
import { serverSecretNames } from '../../src/storage/server-secrets.js';
import { TestClock } from '../helpers/clock.js';
import { temporaryDirectory } from '../helpers/test-app.js';
import { childEnv, ensureBuilt, lines, processTestTimeoutMs, run, stackFrame } from '../e2e/support.js';
import { ReadCaches } from '../../src/storage/cache.js';

/** `customer-api secrets rewrap` (docs/operations.md "Server secrets") run as an operator runs it, on a DATA_DIR. */

const secretNames = [...serverSecretNames];

describe('customer-api secrets rewrap', { timeout: processTestTimeoutMs }, () => {
  const dataDir = temporaryDirectory('customer-api-secrets-cli-');
  const [oldKey, newKey] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
  const idOf = (key: string) => masterKeyId(Buffer.from(key, 'base64'));
  const clock = new TestClock();

  const cli = (env: Record<string, string>) => run(process.execPath, ['bin/customer-api.js', 'secrets', 'rewrap'], { env: childEnv({ DATA_DIR: dataDir, ...env }) });

  /** A server start on the DATA_DIR with this master key: a GET /csrf-token with the key, or a write with a token. */
  async function withServer<T>(masterKey: string, work: (app: Awaited<ReturnType<typeof buildApp>>) => Promise<T>): Promise<T> {
    const config = { ...loadConfig({ LOG_LEVEL: 'silent', SECRETS_MASTER_KEY: masterKey }), dataDir, databaseUrl: undefined, databasePoolSize: 1 };
    const app = await buildApp(config, { storage: await openStorage(config), clock });
    try {
      return await work(app);
    } finally {
      await app.close();
    }
  }

  let apiKey = '';
  let csrf = '';
  beforeAll(async () => {
    await ensureBuilt();
    await withServer(oldKey, async () => {
      const storage = await openStorage({ dataDir, databaseUrl: undefined, databasePoolSize: 1 });
      const customer = await new CustomerService(storage, clock).create('Acme Ltd');
      apiKey = (await new ApiKeyService(storage, clock, 'sandbox', new ReadCaches(clock)).create({ customerId: customer.id })).key;
      await storage.close();
    });
    csrf = await withServer(oldKey, async (app) => (await app.inject({ url: '/csrf-token', headers: { 'x-api-key': apiKey } })).json().data.csrf_token);
  }, processTestTimeoutMs);
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('re-wraps every secret with the new key, reports which key wraps each, and the old key can then go', async () => {
    const result = await cli({ SECRETS_MASTER_KEY: `${newKey},${oldKey}` });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toEqual({
      master_key_id: idOf(newKey),
      rewrapped: secretNames,
      secrets: secretNames.map((name) => ({ name, key_id: idOf(newKey) })),
    });
    const again = JSON.parse((await cli({ SECRETS_MASTER_KEY: `${newKey},${oldKey}` })).stdout);
    expect(again.rewrapped).toEqual([]);

    // The new key alone opens them, and a CSRF token issued before the rotation still writes.
    const written = await withServer(newKey, (app) =>
      app.inject({ method: 'POST', url: '/fiat-accounts', headers: { 'x-api-key': apiKey, 'x-csrf-token': csrf }, payload: { accountName: 'Main', currency: 'EUR' } }),
    );
    expect(written.statusCode).toBe(201);

    // The old key alone no longer does: one line naming the setting, no value, no stack.
    const refused = await cli({ SECRETS_MASTER_KEY: oldKey });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe('');
    expect(lines(refused.stderr)).toHaveLength(1);
    expect(refused.stderr).toContain('SECRETS_MASTER_KEY does not hold the master key');
    expect(refused.stderr).not.toContain(stackFrame);
    expect(refused.stderr).not.toContain(oldKey);
  });
});
