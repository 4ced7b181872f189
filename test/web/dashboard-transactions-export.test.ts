import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardExportBatchSize } from '../../src/config/limits.js';
import { signedInBrowser, type DashboardBrowser } from '../helpers/dashboard.js';
import { createFiatAccount } from '../helpers/fixtures.js';
import { deposit } from '../helpers/money.js';
import { createTestApp, type TestApp, type TestCustomer } from '../helpers/test-app.js';

/** RFC 4180 records of a CSV text (quoted fields may hold commas, quotes doubled, and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  for (let index = 0; index < text.length; index += 1) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        field += '"';
        index += 1;
      } else if (char === '"') quoted = false;
      else field += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      index += 1;
    } else field += char;
  }
  expect(field).toBe('');
  return records;
}

/** The ids of the history rows the list page shows, in order. */
function listedIds(html: string): string[] {
  return [...html.matchAll(/<a href="\/dashboard\/transactions\/([0-9a-f-]{36})">/g)].map((match) => match[1]!);
}

describe('dashboard transaction search and CSV export', () => {
  let t: TestApp;
  let alice: TestCustomer;
  let bob: TestCustomer;
  let browser: DashboardBrowser;
  let main: { id: string };
  let side: { id: string };
  const awkward = { reference: 'Invoice "7", part 2', counterpartyName: '=HYPERLINK("http://evil.example","click")' };

  beforeAll(async () => {
    t = await createTestApp({ env: { SANDBOX_AUTO_SETTLE_MS: 'off' } });
    alice = await t.createCustomer('Alice Ltd');
    bob = await t.createCustomer('Bob GmbH');
    main = await createFiatAccount(t, alice, { accountName: 'Main, EUR', currency: 'EUR' });
    side = await createFiatAccount(t, alice, { accountName: 'Side EUR', currency: 'EUR' });
    const bobs = await createFiatAccount(t, bob, { accountName: 'Bob EUR', currency: 'EUR' });
    await deposit(t, bob, bobs.id, 5, { reference: 'Bob only' });
    await deposit(t, alice, main.id, 1234.5, awkward);
    // More than one batch of the export, on the account the export is filtered by; one record on the other.
    for (let index = 0; index < dashboardExportBatchSize + 3; index += 1) await deposit(t, alice, main.id, 1, { reference: `Small ${index}` });
    await deposit(t, alice, side.id, 7, { reference: '+1 side', counterpartyName: '@mention' });
    browser = await signedInBrowser(t, alice.id);
  });
  afterAll(async () => t.close());

  it('exports the filtered history as CSV, streamed over batches: every record once, newest first, quoted per RFC 4180', async () => {
    const page = await browser.get(`/dashboard/transactions?account_id=${main.id}`);
    expect(page.body).toContain(`href="/dashboard/transactions/export.csv?account_id=${main.id}" download`);

    const response = await browser.get(`/dashboard/transactions/export.csv?account_id=${main.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="transactions-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(response.body.endsWith('\r\n')).toBe(true);
    const [header, ...rows] = parseCsv(response.body);
    expect(header).toEqual([
      'created_at', 'id', 'transaction_type', 'status', 'direction', 'amount', 'currency', 'fee_amount', 'fee_currency', 'balance_after',
      'account_id', 'account_name', 'virtual_account_id', 'reference', 'description', 'counterparty_name', 'counterparty_account', 'payment_id', 'completed_at',
    ]);
    expect(rows).toHaveLength(dashboardExportBatchSize + 4);
    const ids = rows.map((row) => row[1]);
    expect(new Set(ids).size).toBe(rows.length);
    // The same records, in the same order, as the API's filtered history.
    const api: string[] = [];
    for (let pageNumber = 1; api.length < rows.length; pageNumber += 1) {
      const listed = await t.request({ url: `/transactions?account_id=${main.id}&limit=100&page=${pageNumber}`, key: alice.key });
      api.push(...(listed.json().data as Array<{ id: string }>).map((record) => record.id));
    }
    expect(ids).toEqual(api);

    const oldest = rows.at(-1)!;
    const column = (name: string) => header!.indexOf(name);
    expect(oldest[column('amount')]).toBe('1234.50');
    expect(oldest[column('balance_after')]).toBe('1234.50');
    expect(oldest[column('account_name')]).toBe('Main, EUR (EUR)');
    expect(oldest[column('reference')]).toBe(awkward.reference);
    // A spreadsheet shows it as text instead of running it.
    expect(oldest[column('counterparty_name')]).toBe(`'${awkward.counterpartyName}`);
    expect(response.body).toContain(`,"Invoice ""7"", part 2",`);
    expect(response.body).not.toContain('Bob only');
    expect(response.body).not.toContain('+1 side');
  });

  it('makes every cell a spreadsheet would run as a formula text, and exports a search as the page shows it', async () => {
    const response = await browser.get('/dashboard/transactions/export.csv?q=%2B1+side');
    const [header, ...rows] = parseCsv(response.body);
    expect(rows).toHaveLength(1);
    expect(rows[0]![header!.indexOf('reference')]).toBe("'+1 side");
    expect(rows[0]![header!.indexOf('counterparty_name')]).toBe("'@mention");
  });

  it('searches the history by reference, by amount and by id, and finds nothing of another customer', async () => {
    const all = (await t.request({ url: `/transactions?limit=100`, key: alice.key })).json().data as Array<{ id: string; reference: string | null }>;
    const reference = `Small ${dashboardExportBatchSize}`;
    const byReference = await browser.get(`/dashboard/transactions?q=${encodeURIComponent(reference)}`);
    const expected = all.filter((record) => record.reference === reference).map((record) => record.id);
    expect(expected).toHaveLength(1);
    expect(listedIds(byReference.body)).toEqual(expected);

    const byAmount = await browser.get('/dashboard/transactions?q=1%2C234.50');
    expect(listedIds(byAmount.body)).toHaveLength(1);
    expect(byAmount.body).toContain('+1,234.50 EUR');
    expect(listedIds((await browser.get('/dashboard/transactions?q=7')).body)).toHaveLength(1);

    const someId = all[5]!.id;
    expect(listedIds((await browser.get(`/dashboard/transactions?q=${someId.toUpperCase()}`)).body)).toEqual([someId]);
    const bobsRecord = (await t.request({ url: '/transactions', key: bob.key })).json().data[0].id as string;
    const notFound = await browser.get(`/dashboard/transactions?q=${bobsRecord}`);
    expect(notFound.statusCode).toBe(200);
    expect(listedIds(notFound.body)).toEqual([]);
    expect(notFound.body).toContain('No transactions match these filters.');
    const exported = parseCsv((await browser.get(`/dashboard/transactions/export.csv?q=${bobsRecord}`)).body);
    expect(exported).toHaveLength(1);
  });

  it('refuses a search or filter that is not valid with a 400 page, on the list and the export', async () => {
    // 254 characters is the longest search: taken by the list (kept in its box) and the export, though longer than
    // any reference (200), so it finds nothing.
    const longest = await browser.get(`/dashboard/transactions?q=${'x'.repeat(254)}`);
    expect(longest.statusCode).toBe(200);
    expect(longest.body).toContain(`value="${'x'.repeat(254)}"`);
    expect(longest.body).toContain('No transactions match these filters.');
    const exported = await browser.get(`/dashboard/transactions/export.csv?q=${'x'.repeat(254)}`);
    expect(exported.statusCode).toBe(200);
    expect(parseCsv(exported.body)).toHaveLength(1);
    for (const path of ['/dashboard/transactions', '/dashboard/transactions/export.csv']) {
      const tooLong = await browser.get(`${path}?q=${'x'.repeat(255)}`);
      expect(tooLong.statusCode).toBe(400);
      expect(tooLong.body).toContain('q: must be at most 254 characters');
      expect((await browser.get(`${path}?status=lost`)).statusCode).toBe(400);
    }
  });
});
