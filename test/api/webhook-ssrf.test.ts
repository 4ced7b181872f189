import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPublicAddress, type HostResolver } from '../../src/modules/webhooks/address-guard.js';
import { signedInBrowser } from '../helpers/dashboard.js';
import { createPayee } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { deliverDue, subscribe } from '../helpers/webhooks.js';

/**
 * The SSRF guard with WEBHOOK_ALLOW_PRIVATE_URLS unset. Names resolve through a stub: each points at an address the
 * guard must refuse, while a real receiver listens on 127.0.0.1 at the URL's port and counts connections — none may
 * be opened. No test dials anything but loopback.
 */
describe('webhook SSRF guard', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let receiver: WebhookReceiver;
  const resolved = new Map<string, string[]>([
    ['loopback.example', ['127.0.0.1']],
    ['private.example', ['10.0.0.7']],
    ['metadata.example', ['169.254.169.254']],
    ['cgnat.example', ['100.100.100.200']],
    ['mapped.example', ['::ffff:127.0.0.1']],
    ['unique-local.example', ['fd00:ec2::254']],
    ['ipv6-loopback.example', ['::1']],
    ['multicast.example', ['224.0.0.251']],
    ['nat64.example', ['64:ff9b::a00:7']],
    // One private address among public ones is enough to refuse the name (no round-robin luck).
    ['mixed.example', ['93.184.216.34', '127.0.0.1']],
  ]);
  const lookups: string[] = [];
  const resolveHost: HostResolver = async (hostname) => {
    lookups.push(hostname);
    const addresses = resolved.get(hostname);
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off', WEBHOOK_TIMEOUT_MS: '2000' }, resolveHost });
    alice = await t.createCustomer('Alice Ltd');
    receiver = await new WebhookReceiver().listen();
  });
  afterAll(async () => {
    await receiver.close();
    await t.close();
  });

  it('refuses at subscription time URLs that are plain http, literal non-public addresses, or localhost', async () => {
    const refused = [
      `http://hooks.example.com/in`,
      'https://127.0.0.1/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.10/hook',
      'https://172.16.5.4/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://100.64.0.1/hook',
      'https://0.0.0.0/hook',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://[::ffff:7f00:1]/hook',
      'https://[fd00:ec2::254]/hook',
      'https://[fe80::1]/hook',
      'https://[::127.0.0.1]/hook',
      'https://[::a9fe:a9fe]/hook',
      'https://224.0.0.1/hook',
      'https://0x7f.1/hook',
      'https://2130706433/hook',
      'https://localhost/hook',
      'https://api.localhost/hook',
    ];
    for (const url of refused) {
      const response = await t.request({ method: 'POST', url: '/webhooks', key: alice.key, csrf: true, body: { url, eventTypes: ['payee.created'] } });
      expect(response.statusCode, url).toBe(400);
      expect(response.json().error.details.fields[0].path).toBe('/url');
    }
    // A public literal address and any name pass here; names are checked when they are dialled.
    for (const url of ['https://93.184.216.34/hook', 'https://[2606:2800:220:1:248:1893:25c8:1946]/hook', 'https://loopback.example/hook']) {
      const response = await t.request({ method: 'POST', url: '/webhooks', key: alice.key, csrf: true, body: { url, eventTypes: ['payee.created'] } });
      expect(response.statusCode, url).toBe(201);
      await t.request({ method: 'DELETE', url: `/webhooks/${response.json().data.id}`, key: alice.key, csrf: true });
    }
    expect(lookups).toEqual([]);
  });

  it('refuses at delivery every name that resolves to a non-public address, without opening a connection', async () => {
    const hooks = new Map<string, string>();
    for (const hostname of resolved.keys()) {
      const hook = await subscribe(t, alice, { url: `https://${hostname}:${receiver.port}/hook`, eventTypes: ['payee.created'] });
      hooks.set(hostname, hook.id);
      if (hooks.size === 10) break;
    }
    await createPayee(t, alice);
    await deliverDue(t);
    expect(receiver.connections).toBe(0);
    expect(receiver.received).toHaveLength(0);
    const browser = await signedInBrowser(t, alice.id);
    for (const [hostname, id] of hooks) {
      const [listed] = (await t.request({ url: `/webhooks/${id}/deliveries`, key: alice.key })).json().data;
      const delivery = (await t.request({ url: `/webhooks/${id}/deliveries/${listed.id}`, key: alice.key })).json().data;
      expect(delivery.attempts[0], hostname).toMatchObject({ succeeded: false, status_code: null });
      // The customer learns that the name is refused, never the internal address it resolves to (no DNS mapping).
      expect(delivery.attempts[0].error).toContain(`${hostname} resolves to a non-public address`);
      expect(delivery.last_error).toBe(delivery.attempts[0].error);
      const page = await browser.get(`/dashboard/webhooks/${id}`);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(`${hostname} resolves to a non-public address`);
      for (const address of resolved.get(hostname)!) {
        expect(JSON.stringify(delivery), hostname).not.toContain(address);
        expect(page.body, hostname).not.toContain(address);
      }
    }
    expect(new Set(lookups)).toEqual(new Set(hooks.keys()));
  });

  it('classifies addresses with ipaddr.js: only global unicast is public', () => {
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:8.8.8.8']) expect(isPublicAddress(address), address).toBe(true);
    for (const address of ['127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '::', '::1', 'fe80::1', 'fd12::1', 'ff02::1', '::ffff:10.0.0.1', '::7f00:1', '2002:0a00:0001::1', '100::1', 'not-an-ip']) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });
});
