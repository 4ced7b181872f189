import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import axe from 'axe-core';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { businessBody, individualBody } from '../helpers/fixtures.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { checkout, databaseDeployments, ensureBuilt, processTestTimeoutMs, runCli, startApiServer, type Deployment, type Spawned } from './support.js';

/**
 * The dashboard and the hosted onboarding page in a real browser: Debian's Chromium (installed by .ci/run),
 * driven by puppeteer-core, against a real server process on each database. With DASHBOARD_SCREENSHOTS_DIR set
 * (`DASHBOARD_SCREENSHOTS_DIR=docs/images npx vitest run test/e2e/dashboard-browser.test.ts`) the main pages are
 * saved there as PNG, as in the README (compressed with pngquant when it is installed).
 */
const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
if (!fs.existsSync(chromiumPath) && process.env.CI) throw new Error(`no Chromium at ${chromiumPath}: .ci/run installs Debian's chromium package`);
const screenshotsDir = process.env.DASHBOARD_SCREENSHOTS_DIR ? path.resolve(checkout, process.env.DASHBOARD_SCREENSHOTS_DIR) : undefined;
const password = 'a long enough passphrase';

/**
 * The screenshots are committed, so they are made small with pngquant (Debian's `pngquant` package) when it is on
 * PATH: a developer's tool, never needed by CI or the project; without it the PNG stays as Chromium wrote it.
 * Exit 98 (the result would be larger) and 99 (below the quality floor) keep the original, as asked.
 */
function compressScreenshot(file: string): void {
  const run = spawnSync('pngquant', ['--quality=70-90', '--skip-if-larger', '--strip', '--ext', '.png', '--force', file], { encoding: 'utf8' });
  if (run.error && 'code' in run.error && run.error.code === 'ENOENT') return;
  if (run.error || ![0, 98, 99].includes(run.status ?? -1)) throw new Error(`pngquant ${file}: ${run.error?.message ?? run.stderr}`);
}

describe.skipIf(!fs.existsSync(chromiumPath)).each(databaseDeployments('SQLite', 'browser'))('the dashboard in Chromium on %s', (label, makeDeployment) => {
  const servers: Spawned[] = [];
  let deployment: Deployment;
  let baseUrl: string;
  let browser: Browser;
  let page: Page;
  const notFound: string[] = [];
  let customerId: string;
  let operatorKey: string;
  let receiver: WebhookReceiver;

  const api = async (method: string, url: string, key: string, body?: unknown) => {
    const headers: Record<string, string> = { 'x-api-key': key };
    if (method !== 'GET') {
      const token = await fetch(`${baseUrl}/csrf-token`, { headers });
      headers['x-csrf-token'] = ((await token.json()) as { data: { csrf_token: string } }).data.csrf_token;
      headers['content-type'] = 'application/json';
    }
    const response = await fetch(`${baseUrl}${url}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { status: response.status, body: (await response.json()) as { data: any } };
  };

  async function screenshot(name: string): Promise<void> {
    if (!screenshotsDir || label !== 'SQLite') return;
    fs.mkdirSync(screenshotsDir, { recursive: true });
    const file = path.join(screenshotsDir, `dashboard-${name}.png`);
    await page.screenshot({ path: file, fullPage: true });
    compressScreenshot(file);
  }

  /** Clicks and waits for the page the click loads. */
  async function submit(selector: string): Promise<void> {
    await Promise.all([page.waitForNavigation(), page.click(selector)]);
  }

  beforeAll(async () => {
    await ensureBuilt();
    receiver = await new WebhookReceiver().listen();
    deployment = makeDeployment();
    await deployment.prepare();
    // A quote lives long enough to be scanned at both widths; the settings page may name a logo of this origin.
    ({ baseUrl } = await startApiServer(
      { ...deployment.env, WEBHOOK_ALLOW_PRIVATE_URLS: 'true', SANDBOX_AUTO_SETTLE_MS: 'off', OTC_QUOTE_TTL_SECONDS: '600', ONBOARDING_LOGO_ORIGINS: 'https://cdn.example.com' },
      servers,
    ));
    const cli = <T>(...args: string[]) => runCli<T>({ ...deployment.env, PUBLIC_URL: baseUrl }, ...args);
    customerId = (await cli<{ id: string }>('customers', 'create', '--name', 'Browser Ltd')).id;
    operatorKey = (await cli<{ key: string }>('keys', 'create', '--customer', customerId)).key;
    const user = await cli<{ sign_in_url: string }>('users', 'create', '--customer', customerId, '--email', 'ada@example.com');
    browser = await puppeteer.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
    page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 800 });
    page.on('dialog', (dialog) => void dialog.accept());
    // Every address the pages load (icon, style sheet, script) answers: no 404 anywhere.
    page.on('response', (response) => {
      if (response.status() === 404) notFound.push(response.url());
    });
    await page.goto(user.sign_in_url);
  }, processTestTimeoutMs);

  afterAll(async () => {
    await browser?.close();
    await receiver?.close();
    for (const server of servers) server.kill();
    await deployment?.cleanUp();
  });

  it('chooses a password on the one-time link, signs out and signs in again', async () => {
    expect(await page.$eval('h1', (heading) => heading.textContent)).toBe('Choose a password');
    await page.type('#password', password);
    await page.type('#password_confirmation', password);
    await submit('button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    const cookie = (await browser.cookies()).find((candidate) => candidate.name === 'customer_api_session')!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    await screenshot('overview');

    await submit('form.sign-out button');
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    // A page asked for while signed out is where sign-in returns to.
    await page.goto(`${baseUrl}/dashboard/webhooks`);
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await page.type('#email', 'ada@example.com');
    await page.type('#password', password);
    await submit('button[type="submit"]');
    expect(await page.$eval('h1', (heading) => heading.textContent)).toBe('Webhooks');
  }, processTestTimeoutMs);

  it('creates a key that works against the API, then revokes it and the API refuses it', async () => {
    await page.goto(`${baseUrl}/dashboard/api-keys`);
    await page.click('input[name="access"][value="scopes"]');
    await page.click('input[name="scopes"][value="fiat-accounts:read"]');
    await submit('form.stacked button[type="submit"]');
    const key = await page.$eval('#new-key-value', (input) => (input as unknown as { value: string }).value);
    expect(key).toMatch(/^sk_test_/);
    expect(await page.$eval('.notice', (notice) => notice.textContent)).toContain('created');
    expect((await api('GET', '/fiat-accounts', key)).status).toBe(200);
    expect((await api('GET', '/end-users', key)).status).toBe(403);
    // The key was shown once: a reload says so, shows no key and makes none.
    await page.reload();
    expect(await page.$('#new-key-value')).toBeNull();
    expect(await page.$eval('main', (main) => main.textContent)).toContain('already been shown');
    await page.goto(`${baseUrl}/dashboard/api-keys`);
    await screenshot('api-keys');

    // The revoke button of the new key asks for confirmation (accepted above), then the key is refused at once.
    await submit(`form[data-confirm*="${key.slice(0, 12)}"] button`);
    expect(await page.$eval('.notice', (notice) => notice.textContent)).toContain('is revoked');
    expect((await api('GET', '/fiat-accounts', key)).status).toBe(401);
    expect((await api('GET', '/fiat-accounts', operatorKey)).status).toBe(200);
  }, processTestTimeoutMs);

  it('creates a webhook subscription and sends it a test event, signed with the secret shown once', async () => {
    await page.goto(`${baseUrl}/dashboard/webhooks`);
    await page.type('#url', receiver.url());
    await page.type('#description', 'Browser test receiver');
    await page.click('#all_event_types');
    await submit('form.stacked button[type="submit"]');
    const secret = await page.$eval('#new-secret-value', (input) => (input as unknown as { value: string }).value);
    expect(secret).toMatch(/^whsec_/);
    await screenshot('webhooks');

    await submit('a[href^="/dashboard/webhooks/"]');
    const detailUrl = page.url();
    await submit('form[action$="/test"] button');
    const [delivery] = await receiver.waitFor(1, 20_000);
    const event = new Webhook(secret).verify(delivery!.body, delivery!.headers) as { type: string };
    expect(event.type).toBe('webhook.test');
    // The delivery table shows the attempt once the server has recorded it (a real process: polled, bounded). The
    // page is fetched again with GET: a reload would post the test form a second time.
    const deliveryStatus = () => page.$eval('#deliveries ~ table tbody tr td', (cell) => cell.textContent?.trim());
    for (let tries = 0; tries < 50 && (await deliveryStatus()) !== 'Succeeded'; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      await page.goto(detailUrl);
    }
    expect(await deliveryStatus()).toBe('Succeeded');
    expect(await page.$eval('#deliveries ~ table tbody tr td:nth-child(5)', (cell) => cell.textContent?.trim())).toBe('200');
    expect(await page.$$eval('#deliveries ~ table tbody tr', (rows) => rows.length)).toBe(1);
    await screenshot('webhook');
  }, processTestTimeoutMs);

  it('funds an account, settles a payment and verifies an end user with the sandbox buttons', async () => {
    const endUser = (await api('POST', '/end-users', operatorKey, individualBody({ firstName: 'Grace', lastName: 'Hopper', email: 'grace@example.com' }))).body.data;
    const account = (await api('POST', '/fiat-accounts', operatorKey, { accountName: 'Main EUR', currency: 'EUR' })).body.data;
    const payee = (await api('POST', '/payees', operatorKey, { name: 'Erika Mustermann', address: { line1: 'Hauptstraße 1', city: 'Berlin', postalCode: '10115', country: 'DE' }, bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' } })).body.data;

    await page.goto(`${baseUrl}/dashboard/accounts`);
    await submit(`a[href="/dashboard/accounts/fiat/${account.id}"]`);
    await page.type('#deposit-amount', '250.00');
    await submit('form.stacked button[type="submit"]');
    expect((await api('GET', `/fiat-accounts/${account.id}`, operatorKey)).body.data.balance).toBe(250);
    await page.goto(`${baseUrl}/dashboard/accounts`);
    await screenshot('accounts');

    const payment = (await api('POST', '/payments', operatorKey, { fromAccountId: account.id, payeeId: payee.id, amount: 40, currency: 'EUR', reference: 'Invoice 42' })).body.data;
    await page.goto(`${baseUrl}/dashboard/transactions`);
    await screenshot('transactions');
    await submit(`td a[href^="/dashboard/transactions/"]`);
    await submit(`form[action="/dashboard/payments/${payment.id}/settle"]:not([data-confirm]) button`);
    expect((await api('GET', `/payments/${payment.id}`, operatorKey)).body.data.status).toBe('completed');

    await page.goto(`${baseUrl}/dashboard/end-users/${endUser.id}`);
    await screenshot('end-user');
    await submit('form[action$="/verification"]:has(input[name="outcome"][value="verified"]) button');
    expect((await api('GET', `/end-users/${endUser.id}`, operatorKey)).body.data.status).toBe('verified');
  }, processTestTimeoutMs);

  it('walks an end user through the hosted onboarding page: their details, an identity document, a decision', async () => {
    const endUser = (await api('POST', '/end-users', operatorKey, individualBody({ firstName: 'Katherine', lastName: 'Johnson', email: 'katherine@example.com', verificationMethod: 'hosted_kyc' }))).body.data;
    const link = (await api('GET', `/end-users/${endUser.id}/onboarding-link`, operatorKey)).body.data;
    // PUBLIC_URL is unset: links start with http://localhost and the server's PORT; the server's secret follows the token.
    expect(link.url).toMatch(new RegExp(`^http://localhost:${new URL(baseUrl).port}/onboarding/${link.onboarding_url_token}\\.[A-Za-z0-9_-]{43}$`));
    const linkPath = new URL(link.url).pathname;

    // The end user opens the page in a browser of their own: no dashboard session.
    const person = await browser.createBrowserContext();
    const onboarding = await person.newPage();
    await onboarding.goto(`${baseUrl}${linkPath}`);
    expect(await onboarding.$eval('main', (main) => main.textContent)).toContain('Katherine');
    const scan = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'customer-api-scan-')), 'passport.pdf');
    fs.writeFileSync(scan, '%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n');
    const fileInput = await onboarding.$('#document');
    await (fileInput as unknown as { uploadFile(file: string): Promise<void> }).uploadFile(scan);
    await Promise.all([onboarding.waitForNavigation(), onboarding.click('form[enctype="multipart/form-data"] button')]);
    expect(await onboarding.$eval('main', (main) => main.textContent)).toContain('passport.pdf');
    expect(await onboarding.$eval('.notice', (notice) => notice.textContent)).toContain('Received: your Passport (passport.pdf)');
    if (screenshotsDir && label === 'SQLite') {
      await onboarding.screenshot({ path: path.join(screenshotsDir, 'onboarding.png'), fullPage: true });
      compressScreenshot(path.join(screenshotsDir, 'onboarding.png'));
    }
    await Promise.all([onboarding.waitForNavigation(), onboarding.click('button[value="verified"]')]);
    expect(await onboarding.$eval('h1', (heading) => heading.textContent)).toBe('Verification complete');

    expect((await api('GET', `/end-users/${endUser.id}`, operatorKey)).body.data.status).toBe('verified');
    const documents = (await api('GET', `/end-users/${endUser.id}/documents`, operatorKey)).body.data as Array<{ file_name: string }>;
    expect(documents.map((document) => document.file_name)).toEqual(['passport.pdf']);
    // Reopened once used, the link says it is complete: no form, nothing of the person.
    await onboarding.reload();
    expect(await onboarding.$eval('main', (main) => main.textContent)).toContain('Your identity is verified.');
    expect(await onboarding.$('form')).toBeNull();
    await person.close();
    expect(notFound).toEqual([]);
  }, processTestTimeoutMs);

  it('passes an axe-core scan with no violation on every page type, at 1280 and 390 px, and never scrolls sideways on a phone', async () => {
    // Something of each kind to show: a wallet with a deposit and a transfer, a business end user, the records above.
    const wallet = (await api('POST', '/wallets', operatorKey, { displayName: 'Treasury' })).body.data;
    await api('POST', `/sandbox/wallets/${wallet.local_id}/deposits`, operatorKey, { asset: 'USDC', network: 'ETH', amount: '2500.015' });
    const transfer = (await api('POST', `/wallets/${wallet.local_id}/transfers`, operatorKey, { asset: 'USDC', network: 'ETH', amount: '0.015', destination: `0x${'ab'.repeat(20)}` })).body.data;
    await api('POST', '/end-users/businesses', operatorKey, businessBody({}, { companyName: 'A Rather Long Company Name Trading Internationally Ltd' }));
    const firstOf = async (url: string) => ((await api('GET', url, operatorKey)).body.data as Array<{ id: string }>)[0]!.id;
    const account = await firstOf('/fiat-accounts');
    const webhook = await firstOf('/webhooks');

    // A subscription whose receiver refuses connections, so the overview lists a failing webhook.
    const failing = (await api('POST', '/webhooks', operatorKey, { url: 'http://127.0.0.1:9/refused', eventTypes: ['payee.created'], description: 'Refusing receiver' })).body.data;
    await api('POST', `/webhooks/${failing.id}/test`, operatorKey);
    for (let tries = 0; tries < 100 && (await api('GET', `/webhooks/${failing.id}`, operatorKey)).body.data.consecutive_failures === 0; tries += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await page.goto(`${baseUrl}/dashboard`);
    expect(await page.$eval('main', (main) => main.textContent)).toContain('http://127.0.0.1:9/refused');
    // The settings a customer chose, shown in their form.
    await page.goto(`${baseUrl}/dashboard/settings`);
    await page.type('#display_name', 'Browser Payments');
    await page.type('#logo_url', 'https://cdn.example.com/brand/logo.svg');
    await submit('form.stacked button[type="submit"]');
    // An OTC order made through the forms, and a live quote (600 s) besides.
    const requestQuote = async () => {
      await page.goto(`${baseUrl}/dashboard/otc`);
      await page.type('#otc-amount', '50');
      await submit('form.stacked button[type="submit"]');
      return new URL(page.url()).pathname;
    };
    await requestQuote();
    await submit('form[action$="/confirm"] button');
    const order = new URL(page.url()).pathname;
    expect(order).toMatch(/^\/dashboard\/otc\/orders\//);
    const liveQuote = await requestQuote();
    expect(await page.$eval('main', (main) => main.textContent)).toContain('left to confirm');
    // A reveal page shows its secret once: each visit makes a key to reveal.
    const reveal = async () => {
      await page.goto(`${baseUrl}/dashboard/api-keys`);
      await page.type('#name', 'Scanned key');
      await submit('form.stacked button[type="submit"]');
      expect(new URL(page.url()).pathname).toMatch(/^\/dashboard\/reveal\//);
    };

    const pageTypes: Array<[string, string | (() => Promise<void>)]> = [
      ['overview', '/dashboard'],
      ['api-keys', '/dashboard/api-keys'],
      ['accounts', '/dashboard/accounts'],
      ['account', `/dashboard/accounts/fiat/${account}`],
      ['wallet', `/dashboard/accounts/wallets/${wallet.local_id}`],
      ['wallet-transfer', `/dashboard/wallet-transfers/${transfer.local_id}`],
      ['transactions', '/dashboard/transactions'],
      ['transaction', `/dashboard/transactions/${await firstOf('/transactions')}`],
      ['end-users', '/dashboard/end-users'],
      ['end-user', `/dashboard/end-users/${await firstOf('/end-users')}`],
      ['webhooks', '/dashboard/webhooks'],
      ['webhook', `/dashboard/webhooks/${webhook}`],
      ['webhook-delivery', `/dashboard/webhooks/${webhook}/deliveries/${await firstOf(`/webhooks/${webhook}/deliveries`)}`],
      ['events', '/dashboard/events'],
      ['event', `/dashboard/events/${await firstOf('/events')}`],
      ['payees', '/dashboard/payees'],
      ['payee', `/dashboard/payees/${await firstOf('/payees')}`],
      ['otc', '/dashboard/otc'],
      ['otc-quote', liveQuote],
      ['otc-order', order],
      ['settings', '/dashboard/settings'],
      ['reveal', reveal],
      ['not-found', '/dashboard/transactions/00000000-0000-4000-8000-000000000000'],
    ];
    const findings: string[] = [];
    for (const [width, height, suffix] of [[1280, 800, ''], [390, 844, '-phone']] as const) {
      await page.setViewport({ width, height });
      for (const [name, url] of pageTypes) {
        if (typeof url === 'string') await page.goto(`${baseUrl}${url}`);
        else await url();
        // Evaluated through the DevTools protocol: the pages' own policy allows no inline script, and keeps it.
        await page.evaluate(axe.source);
        const violations = await page.evaluate(async () => {
          const result = await (globalThis as unknown as { axe: { run(): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: unknown }> }> }> } }).axe.run();
          return result.violations.map((violation) => `${violation.id} at ${JSON.stringify(violation.nodes.map((node) => node.target))}`);
        });
        findings.push(...violations.map((violation) => `${name} (${width} px): ${violation}`));
        const scrollWidth = await page.$eval('html', (html) => html.scrollWidth);
        if (scrollWidth > width) findings.push(`${name} (${width} px): ${scrollWidth} px wide`);
        await screenshot(`${name}${suffix}`);
      }
    }
    expect(findings).toEqual([]);

    // On a phone the menu is folded until opened; it works without the script (a <details>).
    await page.goto(`${baseUrl}/dashboard/transactions`);
    expect(await page.$eval('details.menu nav', (nav) => (nav as unknown as { checkVisibility(): boolean }).checkVisibility())).toBe(false);
    await page.click('details.menu > summary');
    expect(await page.$eval('details.menu nav', (nav) => (nav as unknown as { checkVisibility(): boolean }).checkVisibility())).toBe(true);
    await page.setViewport({ width: 1280, height: 800 });
  }, processTestTimeoutMs * 2);

  it('shows times in the browser\'s own zone, the exact UTC instant in their title', async () => {
    await page.emulateTimezone('Asia/Tokyo');
    await page.goto(`${baseUrl}/dashboard/events`);
    const shown = await page.$eval('td time', (time) => ({ text: time.textContent, title: time.getAttribute('title'), datetime: time.getAttribute('datetime') }));
    expect(shown.title).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3} UTC$/);
    expect(shown.text).toMatch(/GMT\+9/);
    const expectedDay = new Intl.DateTimeFormat('en-US', { timeZone: 'Asia/Tokyo', day: 'numeric' }).format(new Date(shown.datetime));
    expect(shown.text).toContain(expectedDay);
    await page.emulateTimezone(undefined);
  }, processTestTimeoutMs);

  it('renders the API reference at /docs under its Content-Security-Policy, and tries an operation from it', async () => {
    // Chromium reports every blocked script, style, image or connection as a console error naming the policy.
    const reader = await (await browser.createBrowserContext()).newPage();
    const refusals: string[] = [];
    reader.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refusals.push(message.text());
    });
    reader.on('pageerror', (error) => refusals.push(String(error)));
    await reader.goto(`${baseUrl}/docs`, { waitUntil: 'networkidle0' });
    await reader.waitForSelector('.opblock');
    expect(await reader.$eval('.info .title', (title) => title.textContent)).toContain('Customer API');
    // Swagger UI renders each part after the click before it: wait for it rather than race its rendering.
    // Swagger UI names an operation's block by its tag and operationId.
    await reader.click('[id$="-getHealth"] .opblock-summary-control');
    await (await reader.waitForSelector('.opblock.is-open .try-out__btn'))!.click();
    await (await reader.waitForSelector('.opblock.is-open .execute'))!.click();
    await reader.waitForSelector('.opblock.is-open .live-responses-table tbody .response-col_status');
    expect(await reader.$eval('.opblock.is-open .live-responses-table tbody .response-col_status', (status) => status.textContent?.trim())).toBe('200');
    expect(refusals).toEqual([]);
    await reader.browserContext().close();
  }, processTestTimeoutMs);
});
