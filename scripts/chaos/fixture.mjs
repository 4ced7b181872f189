// What each run starts from: a fresh customer (through the operator CLI, which also migrates the fresh database), an
// API key and CSRF token, webhook subscriptions to every event type pointing at the harness's receiver (made
// first, so every later event is delivered), two EUR accounts, a payee, a wallet, the fees the payments will
// be charged (POST /fees/preview), and the funding.
import { randomUUID } from 'node:crypto';
import { parseExact, toMinor, walletAsset } from './load.mjs';

/**
 * Every type a subscription may list (docs/spec.md §6 and the additive ones, docs/webhooks.md), split over five
 * subscriptions by resource, as a customer with a receiver per concern would have them: the server sends at most
 * four attempts at once to one subscription per instance, so one subscription of everything would make the
 * deliveries, not the faults, what a run waits for.
 */
const subscriptions = {
  payments: ['payment.created', 'payment.status_updated', 'payment.completed', 'payment.failed'],
  'fiat-accounts': ['fiat_account.created', 'fiat_account.status_updated', 'fiat_account.balance_updated'],
  'wallet-transfers': ['wallet_transfer.created', 'wallet_transfer.status_updated', 'wallet_transfer.completed', 'wallet_transfer.failed'],
  'otc-orders': ['otc_order.created', 'otc_order.status_updated'],
  others: [
    'virtual_account.created', 'virtual_account.status_updated', 'virtual_account.balance_updated',
    'end_user.created', 'end_user.status_updated', 'end_user.review_required',
    'payee.created', 'payee.status_updated',
  ],
};

const sourceFundingMinor = 100_000_000n; // 1,000,000.00 EUR
const walletFunding = '1000000';

/** One request that must succeed (the fixture is made before any fault). */
export async function call(client, fixture, method, path, body, headers = {}) {
  const answer = await client.send('setup', {
    method,
    path,
    headers: { 'x-api-key': fixture.apiKey, ...(method === 'GET' ? {} : { 'x-csrf-token': fixture.csrf }), ...headers },
    body,
  });
  if (answer.status === undefined || answer.status >= 300) throw new Error(`${method} ${path} answered ${answer.status ?? answer.failure}: ${answer.text ?? ''}`);
  return parseExact(answer.text);
}

export async function makeFixture({ client, cli, receiver, name }) {
  const customer = await cli(['customers', 'create', '--name', name]);
  const { key } = await cli(['keys', 'create', '--customer', customer.id]);
  const fixture = { name, customerId: customer.id, apiKey: key, csrf: undefined };
  fixture.csrf = (await call(client, fixture, 'GET', '/csrf-token')).data.csrf_token;

  fixture.webhooks = [];
  for (const [resource, eventTypes] of Object.entries(subscriptions)) {
    const hook = receiver.register(`${name}/${resource}`);
    const subscription = (await call(client, fixture, 'POST', '/webhooks', { url: hook.url, eventTypes })).data;
    hook.setSecret(subscription.signing_secret);
    fixture.webhooks.push({ id: subscription.id, received: hook.entry });
  }

  const account = async (accountName) => (await call(client, fixture, 'POST', '/fiat-accounts', { accountName, currency: 'EUR' })).data.id;
  fixture.fiat = { source: await account('Chaos source'), target: await account('Chaos target') };
  fixture.payee = (
    await call(client, fixture, 'POST', '/payees', {
      name: 'Erika Mustermann',
      address: { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' },
      bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
    })
  ).data.id;
  fixture.wallet = (await call(client, fixture, 'POST', '/wallets', { displayName: 'Chaos wallet' })).data.local_id;

  const fee = async (target, amount) =>
    toMinor((await call(client, fixture, 'POST', '/fees/preview', { fromAccountId: fixture.fiat.source, amount, currency: 'EUR', ...target })).data.fee_amount, 2);
  fixture.internalFeeMinor = await fee({ toAccountId: fixture.fiat.target }, 1);
  fixture.payeeFeeMinor = await fee({ payeeId: fixture.payee }, 2);

  const funding = { 'idempotency-key': randomUUID() };
  await call(client, fixture, 'POST', `/sandbox/fiat-accounts/${fixture.fiat.source}/deposits`, { amount: Number(sourceFundingMinor) / 100, reference: 'chaos funding' }, funding);
  const { asset, network, scale } = walletAsset;
  await call(client, fixture, 'POST', `/sandbox/wallets/${fixture.wallet}/deposits`, { asset, network, amount: walletFunding }, { 'idempotency-key': randomUUID() });
  fixture.funding = { sourceMinor: sourceFundingMinor, walletMinor: toMinor(walletFunding, scale), walletAmount: `${walletFunding}.${'0'.repeat(scale)}` };
  return fixture;
}
