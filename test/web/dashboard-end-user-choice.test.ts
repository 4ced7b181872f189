import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardAccountChoicesMax, dashboardEndUserMatchesMax } from '../../src/config/limits.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createFiatAccount, createIndividual } from '../helpers/fixtures.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/**
 * The account and wallet forms name their end user by a name, an email address or an id, resolved by the server:
 * any of a thousand end users can be chosen without a script, not only the newest the page could list.
 */
describe('choosing an end user beyond the newest on the account and wallet forms', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  let masterId: string;
  let oldest: string;
  const smiths: string[] = [];
  let bobsEndUser: string;
  let ada: string;

  /** The wallets of a customer through the API, newest first, with their end user. */
  const wallets = async () => ((await t.request({ url: '/wallets', key: alice.key })).json().data as Array<{ local_id: string; end_user_id: string | null; display_name: string }>);

  async function post(action: string, fields: Record<string, string>) {
    await browser.get('/dashboard/accounts');
    return browser.post(action, fields);
  }

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    masterId = (await createFiatAccount(t, alice, { accountName: 'Operating EUR', currency: 'EUR' })).id;
    oldest = (await createIndividual(t, alice, { firstName: 'Oldest', lastName: 'Customer', email: 'oldest@example.com' })).id;
    t.clock.advance(1000);
    // A longer name that contains the oldest's whole name.
    await createIndividual(t, alice, { firstName: 'Oldest', lastName: 'Customer-Smythe', email: 'smythe@example.com' });
    t.clock.advance(1000);
    for (let index = 0; index < dashboardEndUserMatchesMax + 2; index += 1) {
      smiths.push((await createIndividual(t, alice, { firstName: `Jo${index}`, lastName: 'Smith', email: `jo${index}@smith.example` })).id);
      t.clock.advance(1000);
    }
    for (let index = 0; index < dashboardAccountChoicesMax; index += 1) {
      await createIndividual(t, alice, { firstName: `Newer${index}`, lastName: 'Person', email: `newer${index}@example.com` });
      t.clock.advance(1000);
    }
    ada = (await createIndividual(t, alice, { firstName: 'Ada', middleName: 'King', lastName: 'Lovelace', email: 'ada@lovelace.example' })).id;
    t.clock.advance(1000);
    bobsEndUser = (await createIndividual(t, bob, { firstName: 'Oldest', lastName: 'Bobsdottir', email: 'oldest@bob.example' })).id;
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  it('offers a field that takes a name, an email address or an id, suggesting the newest end users by name', async () => {
    const page = (await browser.get('/dashboard/accounts')).body;
    expect(page).toMatch(/<input id="wallet-owner" name="end_user" type="text"[^>]* list="end-user-suggestions"/);
    expect(page).toMatch(/<input id="virtual-holder" name="end_user" type="text"/);
    expect(page.match(/<datalist id="end-user-suggestions">[\s\S]*?<\/datalist>/)![0].match(/<option /g)).toHaveLength(dashboardAccountChoicesMax);
    expect(page).not.toContain('Oldest Customer');
  });

  it('opens a wallet and a virtual account for an end user older than the newest 100, by email address, id or whole name (among longer names that contain it)', async () => {
    const byEmail = await post('/dashboard/accounts/wallets', { display_name: 'By email', end_user: 'OLDEST@example.com' });
    expect(byEmail.statusCode, byEmail.body).toBe(303);
    const byId = await post('/dashboard/accounts/wallets', { display_name: 'By id', end_user: oldest.toUpperCase() });
    expect(byId.statusCode, byId.body).toBe(303);
    const byName = await post('/dashboard/accounts/wallets', { display_name: 'By name', end_user: ' oldest customer ' });
    expect(byName.statusCode, byName.body).toBe(303);
    const made = await wallets();
    for (const name of ['By email', 'By id', 'By name']) expect(made.find((wallet) => wallet.display_name === name)?.end_user_id, name).toBe(oldest);

    const virtual = await post('/dashboard/accounts/virtual', { account_name: 'Held for the oldest', master_fiat_account_id: masterId, currency: 'EUR', end_user: 'oldest@example.com' });
    expect(virtual.statusCode, virtual.body).toBe(303);
    const account = (await t.request({ url: String(virtual.headers.location).replace('/dashboard/accounts/virtual', '/virtual-accounts'), key: alice.key })).json().data;
    expect(account.account_holder_name).toBe('Oldest Customer');
  });

  it('refuses a field several end users match, listing the newest of them to choose from, then opens it for the one chosen', async () => {
    const before = (await wallets()).length;
    const refused = await post('/dashboard/accounts/wallets', { display_name: 'For a Smith', end_user: 'smith' });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain(`<a href="#wallet-owner">For: ${smiths.length} end users match “smith”: choose one below, or type more of the name, the email address or the id</a>`);
    expect(refused.body).toMatch(/id="wallet-owner"[^>]* aria-invalid="true" aria-describedby="wallet-owner-problem"/);
    const listed = [...refused.body.matchAll(/name="end_user_id" value="([0-9a-f-]{36})"/g)].map((match) => match[1]);
    expect(listed).toEqual([...smiths].reverse().slice(0, dashboardEndUserMatchesMax));
    expect(refused.body).toContain(`and ${smiths.length - dashboardEndUserMatchesMax} more, not listed.`);
    expect(refused.body).toContain('value="For a Smith"');
    expect(refused.body).toContain('value="smith"');
    expect((await wallets()).length).toBe(before);

    const chosen = smiths[smiths.length - 2]!;
    const created = await browser.post('/dashboard/accounts/wallets', { display_name: 'For a Smith', end_user: 'smith', end_user_id: chosen });
    expect(created.statusCode, created.body).toBe(303);
    expect((await wallets()).find((wallet) => wallet.display_name === 'For a Smith')?.end_user_id).toBe(chosen);
    // A choice that is not among the matches of what is typed does not count: the field is asked again.
    const stale = await post('/dashboard/accounts/wallets', { display_name: 'Stale', end_user: 'smith', end_user_id: oldest });
    expect(stale.statusCode).toBe(400);
  });

  it('asks to confirm the one end user that part of a name matches, instead of opening an account in its name', async () => {
    const before = (await wallets()).length;
    const partial = await post('/dashboard/accounts/wallets', { display_name: 'For Ada', end_user: 'lovel' });
    expect(partial.statusCode).toBe(400);
    expect(partial.body).toContain('<a href="#wallet-owner">For: one end user matches “lovel”: choose it below to confirm, or type the whole name, email address or id</a>');
    expect([...partial.body.matchAll(/name="end_user_id" value="([0-9a-f-]{36})"/g)].map((match) => match[1])).toEqual([ada]);
    expect((await wallets()).length).toBe(before);
    const confirmed = await browser.post('/dashboard/accounts/wallets', { display_name: 'For Ada', end_user: 'lovel', end_user_id: ada });
    expect(confirmed.statusCode, confirmed.body).toBe(303);
    expect((await wallets()).find((wallet) => wallet.display_name === 'For Ada')?.end_user_id).toBe(ada);
  });

  it('finds an end user by the whole name the page suggests, middle name included', async () => {
    expect((await browser.get('/dashboard/accounts')).body).toContain('<option value="Ada King Lovelace">');
    const byName = await post('/dashboard/accounts/wallets', { display_name: 'For Ada King', end_user: 'Ada King Lovelace' });
    expect(byName.statusCode, byName.body).toBe(303);
    expect((await wallets()).find((wallet) => wallet.display_name === 'For Ada King')?.end_user_id).toBe(ada);
  });

  it("says when no end user matches — another customer's are none — and shows the other fields' problems at once", async () => {
    const before = (await wallets()).length;
    const none = await post('/dashboard/accounts/wallets', { display_name: 'w'.repeat(101), end_user: 'nobody at all' });
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('<a href="#wallet-owner">For: no end user of yours matches “nobody at all”');
    expect(none.body).toContain('<a href="#wallet-name">Name: ');
    for (const theirs of [bobsEndUser, 'oldest@bob.example', 'Bobsdottir']) {
      const refused = await post('/dashboard/accounts/virtual', { account_name: 'Theirs', master_fiat_account_id: masterId, currency: 'EUR', end_user: theirs });
      expect(refused.statusCode, theirs).toBe(400);
      expect(refused.body, theirs).toContain('<a href="#virtual-holder">Held in the name of: no end user of yours matches');
    }
    // 254 characters (an email address's longest) is looked for; one more is refused by its length.
    const longest = await post('/dashboard/accounts/wallets', { end_user: 'x'.repeat(254) });
    expect(longest.body).toContain('For: no end user of yours matches');
    expect(longest.body).toContain(`value="${'x'.repeat(254)}"`);
    const tooLong = await post('/dashboard/accounts/wallets', { end_user: 'x'.repeat(255) });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain('For: must be at most 254 characters');
    expect((await wallets()).length).toBe(before);
  });

  it('opens it for the company when the field is empty', async () => {
    const company = await post('/dashboard/accounts/wallets', { display_name: 'Company wallet', end_user: '' });
    expect(company.statusCode).toBe(303);
    expect((await wallets()).find((wallet) => wallet.display_name === 'Company wallet')?.end_user_id).toBeNull();
  });
});
