import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { deliverDue, subscribe } from '../helpers/webhooks.js';

/** README "Examples": each example runs as a newcomer runs it (`node examples/….ts`) against a fresh sandbox server. */
describe('examples', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    // The examples import the SDK as a package: its build (npm run build) must be there.
    expect(fs.existsSync('sdk/dist/index.js'), 'sdk/dist is missing: run npm run build').toBe(true);
    t = await createTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
    alice = await t.createCustomer('Example Ltd');
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    env = { PATH: process.env.PATH, CUSTOMER_API_URL: `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`, CUSTOMER_API_KEY: alice.key };
  });
  afterAll(async () => t?.close());

  const run = async (example: string) => (await promisify(execFile)(process.execPath, [`examples/${example}`], { env, timeout: 60_000 })).stdout;

  it('onboards and verifies a business with its directors', async () => {
    expect(await run('onboard-business.ts')).toMatch(/^business [0-9a-f-]{36} is verified$/m);
  });

  it('funds an account, pays a SEPA payee and finds the payment in the history', async () => {
    const output = await run('pay-a-payee.ts');
    expect(output).toMatch(/^payment [0-9a-f-]{36}: pending$/m);
    expect(output).toMatch(/^payment [0-9a-f-]{36} is completed; the history holds 1 transaction\(s\) with reference "Invoice [^"]+": 250\.5 EUR$/m);
  });

  it('exchanges EUR into USDC: quote, order, settled', async () => {
    const output = await run('exchange-eur-usdc.ts');
    expect(output).toMatch(/^quote [0-9a-f-]{36}: 1000\.00 EUR → [0-9.]+ USDC/m);
    expect(output).toMatch(/^order [0-9a-f-]{36} is settled$/m);
  });

  it('sends USDC on-chain', async () => {
    expect(await run('send-usdc.ts')).toMatch(/^transfer [0-9a-f-]{36} is completed$/m);
  });

  it('receives a webhook and verifies its signature', async () => {
    const subscription = await subscribe(t, alice, { url: 'http://127.0.0.1:9/placeholder', eventTypes: ['fiat_account.created'] });
    const receiver = spawn(process.execPath, ['examples/webhook-receiver.ts'], { env: { ...env, PORT: '0', WEBHOOK_SECRET: subscription.signing_secret } });
    try {
      let output = '';
      const printed = (pattern: RegExp) =>
        new Promise<RegExpMatchArray>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`the receiver did not print ${pattern}; it printed: ${output}`)), 30_000);
          const check = () => {
            const match = output.match(pattern);
            if (match) {
              clearTimeout(timer);
              resolve(match);
            }
          };
          receiver.stdout.on('data', (chunk: Buffer) => {
            output += chunk.toString();
            check();
          });
          check();
        });
      const [, port] = await printed(/listening on http:\/\/localhost:(\d+)\/webhooks/);
      await t.request({ method: 'PATCH', url: `/webhooks/${subscription.id}`, key: alice.key, csrf: true, body: { url: `http://127.0.0.1:${port}/webhooks` } });
      await t.request({ method: 'POST', url: '/fiat-accounts', key: alice.key, csrf: true, body: { accountName: 'Announced', currency: 'EUR' } });
      await deliverDue(t);
      await printed(/^verified fiat_account\.created [0-9a-f-]{36}$/m);
    } finally {
      receiver.kill('SIGTERM');
    }
  }, 60_000);
});
