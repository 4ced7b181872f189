import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { masterKeyId } from '../../src/config/master-keys.js';
import { ApiKeyService } from '../../src/modules/api-keys/service.js';
import { CsrfTokenService } from '../../src/modules/csrf-tokens/service.js';
import { CustomerService } from '../../src/modules/customers/service.js';
import { sandboxProviders } from '../../src/providers/providers.js';
import type { Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { SecretBox } from '../../src/storage/secret-box.js';
import { generatedMasterKeyFileName, serverSecretNames } from '../../src/storage/server-secrets.js';
import { TestClock } from '../helpers/clock.js';
import { durableStorage } from '../helpers/durable-storage.js';
import { temporaryDirectory, testDialect } from '../helpers/test-app.js';
import { WebhookReceiver, type ReceivedWebhook } from '../helpers/webhook-receiver.js';
import { deliverDue } from '../helpers/webhooks.js';
import { ReadCaches } from '../../src/storage/cache.js';

/**
 * The CSRF, form and webhook-secret keys live in the database they protect; a master key of the operator wraps them
 * (docs/operations.md "Server secrets"), so a backup of the database alone forges no token and opens no signing
 * secret, and restarts — with the key, or during a rotation with the new key and the previous one — change nothing
 * a client holds.
 */

const newMasterKey = () => randomBytes(32).toString('base64');
const hexSecret = /^[0-9a-f]{64}$/;

type Durable = Awaited<ReturnType<typeof durableStorage>>;

/** One start of the server on the durable database: the app, and requests as the API key. */
interface Instance {
  app: FastifyInstance;
  storage: Storage;
  request(method: 'GET' | 'POST' | 'PATCH', url: string, options?: { body?: unknown; csrf?: string }): Promise<LightMyRequestResponse>;
}

async function start(durable: Durable, env: Record<string, string>, clock: TestClock, apiKey: () => string, logStream?: PassThrough): Promise<Instance> {
  const storage = await durable.open();
  try {
    const settings = { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', ...env };
    // Production has no real provider in this build; the simulator stands in, as in the other production tests.
    const app = await buildApp(durable.configWith(settings), { storage, clock, providers: sandboxProviders(), ...(logStream ? { logStream } : {}) });
    return {
      app,
      storage,
      request: (method, url, options = {}) =>
        app.inject({
          method,
          url,
          headers: { 'x-api-key': apiKey(), ...(options.csrf ? { 'x-csrf-token': options.csrf } : {}) },
          ...(options.body !== undefined ? { payload: options.body as object } : {}),
        }),
    };
  } catch (error) {
    await storage.close();
    throw error;
  }
}

/** The customer and key an operator would have made with the CLI. */
async function customerWithKey(storage: Storage, clock: TestClock) {
  const customer = await new CustomerService(storage, clock).create('Acme Ltd');
  return new ApiKeyService(storage, clock, 'sandbox', new ReadCaches(clock)).create({ customerId: customer.id });
}

async function storedSecrets(storage: Storage) {
  return storage.db.selectFrom('server_secrets').select(['name', 'value', 'key_id']).orderBy('name').execute();
}

const verifies = (secret: string, received: ReceivedWebhook) =>
  new Webhook(secret).verify(received.body, {
    'webhook-id': received.headers['webhook-id']!,
    'webhook-timestamp': received.headers['webhook-timestamp']!,
    'webhook-signature': received.headers['webhook-signature']!,
  }) as { type: string };

describe('server secrets wrapped with a master key', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => receiver.close());

  it('stores them wrapped, keeps CSRF tokens and webhook signatures valid across restarts and a rotation, and refuses a wrong key', async () => {
    const durable = await durableStorage();
    const clock = new TestClock();
    const [oldKey, newKey, wrongKey] = [newMasterKey(), newMasterKey(), newMasterKey()];
    let apiKey = '';
    let instance = await start(durable, { SECRETS_MASTER_KEY: oldKey }, clock, () => apiKey);
    try {
      const created = await customerWithKey(instance.storage, clock);
      apiKey = created.key;
      const csrf = (await instance.request('GET', '/csrf-token')).json().data.csrf_token as string;
      const hook = await instance.request('POST', '/webhooks', { csrf, body: { url: receiver.url(), eventTypes: ['fiat_account.created'] } });
      expect(hook.statusCode).toBe(201);
      const { id: hookId, signing_secret: signingSecret } = hook.json().data as { id: string; signing_secret: string };

      // What a backup holds: no secret in the clear, each wrapped under the master key's id, and the CSRF key inside
      // the wrapping is the one the tokens are made with.
      const rows = await storedSecrets(instance.storage);
      expect(rows.map((row) => row.name)).toEqual([...serverSecretNames]);
      for (const row of rows) {
        expect(row.value).not.toMatch(hexSecret);
        expect(row.key_id).toBe(masterKeyId(Buffer.from(oldKey, 'base64')));
      }
      const csrfKey = new SecretBox(Buffer.from(oldKey, 'base64')).open(rows[0]!.value, 'server-secret:csrf');
      expect(new CsrfTokenService(Buffer.from(csrfKey, 'hex'), clock).issue(created.id).csrf_token).toBe(csrf);

      /** After a restart: the CSRF token fetched before still writes, and a delivery verifies with the secret of then. */
      const stillValid = async () => {
        const patched = await instance.request('PATCH', `/webhooks/${hookId}`, { csrf, body: { description: 'after restart' } });
        expect(patched.statusCode).toBe(200);
        receiver.received.length = 0;
        clock.set(new Date());
        expect((await instance.request('POST', '/fiat-accounts', { csrf, body: { accountName: 'Main', currency: 'EUR' } })).statusCode).toBe(201);
        await deliverDue(instance);
        expect(receiver.received).toHaveLength(1);
        expect(verifies(signingSecret, receiver.received[0]!).type).toBe('fiat_account.created');
      };

      await instance.app.close();
      instance = await start(durable, { SECRETS_MASTER_KEY: oldKey }, clock, () => apiKey);
      await stillValid();

      // Rotation: the new key first, the previous one after it; the start re-wraps every secret with the new key.
      await instance.app.close();
      instance = await start(durable, { SECRETS_MASTER_KEY: `${newKey},${oldKey}` }, clock, () => apiKey);
      expect((await storedSecrets(instance.storage)).map((row) => row.key_id)).toEqual(Array(serverSecretNames.length).fill(masterKeyId(Buffer.from(newKey, 'base64'))));
      await stillValid();
      await instance.app.close();
      instance = await start(durable, { SECRETS_MASTER_KEY: newKey }, clock, () => apiKey);
      await stillValid();
      await instance.app.close();

      // The previous key alone, or another key, no longer opens them: start-up stops naming the setting, not a value.
      for (const given of [oldKey, wrongKey]) {
        const refusal = start(durable, { SECRETS_MASTER_KEY: given }, clock, () => apiKey);
        await expect(refusal).rejects.toThrow(ConfigError);
        const message = await refusal.catch((error: Error) => error.message);
        expect(message).toContain('SECRETS_MASTER_KEY');
        expect(message).toContain(masterKeyId(Buffer.from(newKey, 'base64')));
        for (const key of [oldKey, newKey, wrongKey]) expect(message).not.toContain(key);
      }
      // Nor does a start without any (the sandbox on PostgreSQL would keep them unwrapped; SQLite makes its own key).
      await expect(start(durable, {}, clock, () => apiKey)).rejects.toThrow(/master key/);
    } finally {
      await durable.drop();
    }
  });

  it('wraps the unwrapped secrets of an existing deployment on the first start with a master key, without changing them', async () => {
    const durable = await durableStorage();
    const clock = new TestClock();
    try {
      // The database as an earlier version left it: the secrets in the clear.
      const storage = await durable.open();
      await migrateToLatest(storage);
      const [csrfKey, webhookKey] = [randomBytes(32).toString('hex'), randomBytes(32).toString('hex')];
      const now = clock.now().toISOString();
      await storage.db
        .insertInto('server_secrets')
        .values([
          { name: 'csrf', value: csrfKey, created_at: now },
          { name: 'webhook-signing-secrets', value: webhookKey, created_at: now },
        ])
        .execute();
      const created = await customerWithKey(storage, clock);
      await storage.close();

      const masterKey = newMasterKey();
      const instance = await start(durable, { SECRETS_MASTER_KEY: masterKey }, clock, () => created.key);
      try {
        const csrf = (await instance.request('GET', '/csrf-token')).json().data.csrf_token;
        expect(csrf).toBe(new CsrfTokenService(Buffer.from(csrfKey, 'hex'), clock).issue(created.id).csrf_token);
        const hook = (await instance.request('POST', '/webhooks', { csrf, body: { url: receiver.url(), eventTypes: ['payee.created'] } })).json().data;
        const sealed = await instance.storage.db.selectFrom('webhook_subscriptions').select('secret_encrypted').where('id', '=', hook.id).executeTakeFirstOrThrow();
        expect(new SecretBox(Buffer.from(webhookKey, 'hex')).open(sealed.secret_encrypted)).toBe(hook.signing_secret);
        const rows = await storedSecrets(instance.storage);
        expect(rows.map((row) => [row.name, row.key_id])).toEqual(serverSecretNames.map((name) => [name, masterKeyId(Buffer.from(masterKey, 'base64'))]));
        for (const row of rows) for (const plain of [csrfKey, webhookKey]) expect(row.value).not.toContain(plain);
      } finally {
        await instance.app.close();
      }
    } finally {
      await durable.drop();
    }
  });

  // PostgreSQL: several instances share one database. (Processes on one SQLite file share DATA_DIR and its key file;
  // two apps in one process would wait on each other's synchronous SQLite lock.)
  it.skipIf(testDialect !== 'postgres')('gives two instances starting at once with the same master key the same secrets', async () => {
    const durable = await durableStorage();
    const clock = new TestClock();
    const masterKey = newMasterKey();
    try {
      const setup = await durable.open();
      await migrateToLatest(setup);
      const created = await customerWithKey(setup, clock);
      await setup.close();
      const [one, two] = await Promise.all([0, 1].map(() => start(durable, { SECRETS_MASTER_KEY: masterKey }, clock, () => created.key)));
      try {
        const csrf = (await one!.request('GET', '/csrf-token')).json().data.csrf_token;
        expect((await two!.request('GET', '/csrf-token')).json().data.csrf_token).toBe(csrf);
        expect((await two!.request('POST', '/fiat-accounts', { csrf, body: { accountName: 'Main', currency: 'EUR' } })).statusCode).toBe(201);
        expect(await storedSecrets(one!.storage)).toHaveLength(serverSecretNames.length);
      } finally {
        await Promise.all([one!.app.close(), two!.app.close()]);
      }
    } finally {
      await durable.drop();
    }
  });

  it('without a master key: the embedded sandbox writes its own into a 0600 file in DATA_DIR, the sandbox on PostgreSQL stores them unwrapped and says so', async () => {
    const durable = await durableStorage();
    const clock = new TestClock();
    const log = new PassThrough();
    let logged = '';
    log.on('data', (chunk: Buffer) => (logged += chunk.toString()));
    try {
      let instance = await start(durable, { LOG_LEVEL: 'warn' }, clock, () => '', log);
      const keyFile = path.join(durable.config.dataDir, generatedMasterKeyFileName);
      const rows = await storedSecrets(instance.storage);
      await instance.app.close();
      if (testDialect === 'sqlite') {
        expect(fs.statSync(keyFile).mode & 0o777).toBe(0o600);
        const fileKey = Buffer.from(fs.readFileSync(keyFile, 'utf8').trim(), 'base64');
        expect(fileKey).toHaveLength(32);
        for (const row of rows) {
          expect(row.key_id).toBe(masterKeyId(fileKey));
          expect(row.value).not.toMatch(hexSecret);
        }
        expect(logged).not.toContain('SECRETS_MASTER_KEY');
        // The next start finds its key again and opens them.
        instance = await start(durable, {}, clock, () => '');
        expect(await storedSecrets(instance.storage)).toEqual(rows);
        await instance.app.close();
      } else {
        expect(fs.existsSync(keyFile)).toBe(false);
        for (const row of rows) {
          expect(row.key_id).toBeNull();
          expect(row.value).toMatch(hexSecret);
        }
        expect(logged).toContain('SECRETS_MASTER_KEY is not set');
      }
    } finally {
      await durable.drop();
    }
  });

  it('refuses to start in production without a master key, naming the settings', async () => {
    const durable = await durableStorage();
    try {
      const refusal = start(durable, { API_ENVIRONMENT: 'production' }, new TestClock(), () => '');
      await expect(refusal).rejects.toThrow(ConfigError);
      await expect(refusal).rejects.toThrow(/API_ENVIRONMENT=production needs SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE/);
      expect(fs.existsSync(path.join(durable.config.dataDir, generatedMasterKeyFileName))).toBe(false);
      // Refused before the database changed: not even migrated.
      const storage = await durable.open();
      await expect(storedSecrets(storage)).rejects.toThrow();
      await storage.close();
      // With one it starts.
      await (await start(durable, { API_ENVIRONMENT: 'production', SECRETS_MASTER_KEY: newMasterKey() }, new TestClock(), () => '')).app.close();
    } finally {
      await durable.drop();
    }
  });

  it('reads the master keys from SECRETS_MASTER_KEY or SECRETS_MASTER_KEY_FILE, and refuses a malformed one without echoing it', () => {
    const [first, second] = [newMasterKey(), newMasterKey()];
    const ids = (env: Record<string, string>) => loadConfig(env).secretsMasterKeys?.ids;
    const idOf = (key: string) => masterKeyId(Buffer.from(key, 'base64'));
    expect(ids({})).toBeUndefined();
    expect(ids({ SECRETS_MASTER_KEY: ` ${first} , ${second} ` })).toEqual([idOf(first), idOf(second)]);
    // URL-safe base64 without padding is the same key.
    expect(ids({ SECRETS_MASTER_KEY: first.replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '') })).toEqual([idOf(first)]);
    const directory = temporaryDirectory();
    try {
      const file = path.join(directory, 'master.key');
      fs.writeFileSync(file, `${second}\n${first}\n`, { mode: 0o600 });
      expect(ids({ SECRETS_MASTER_KEY_FILE: file })).toEqual([idOf(second), idOf(first)]);
      // Nothing of the keys shows when the configuration is logged.
      const config = loadConfig({ SECRETS_MASTER_KEY_FILE: file });
      expect(JSON.stringify(config)).not.toContain(first.slice(0, 20));
      expect(JSON.stringify(config)).not.toContain(Buffer.from(first, 'base64').toString('hex').slice(0, 20));

      const refused = (env: Record<string, string>) => {
        expect(() => loadConfig(env)).toThrow(ConfigError);
        return (() => {
          try {
            loadConfig(env);
          } catch (error) {
            return (error as Error).message;
          }
          return '';
        })();
      };
      const short = randomBytes(16).toString('base64');
      expect(refused({ SECRETS_MASTER_KEY: `${first},${short}` })).toMatch(/^SECRETS_MASTER_KEY .*entry 2 is not one/);
      expect(refused({ SECRETS_MASTER_KEY: `${first},${short}` })).not.toContain(short);
      expect(refused({ SECRETS_MASTER_KEY: 'not a key!' })).not.toContain('not a key');
      expect(refused({ SECRETS_MASTER_KEY: first, SECRETS_MASTER_KEY_FILE: file })).toContain('not both');
      expect(refused({ SECRETS_MASTER_KEY_FILE: path.join(directory, 'missing.key') })).toContain('SECRETS_MASTER_KEY_FILE cannot be read (ENOENT)');
      expect(refused({ SECRETS_MASTER_KEY: Array(11).fill(first).join(',') })).toContain('at most 10 keys');
    } finally {
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
