import type { LightMyRequestResponse } from 'fastify';
import { DashboardUserService } from '../../src/modules/dashboard-users/service.js';
import type { TestApp } from './test-app.js';

export const testPassword = 'correct horse battery staple';

/** The value of the first `_csrf` hidden field of a page. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([0-9a-f]{64})"/.exec(html);
  if (!match) throw new Error('the page has no form token');
  return match[1]!;
}

/** Cookies a response sets, as name → value (a cleared cookie maps to ''). */
export function cookiesSet(response: LightMyRequestResponse): Record<string, string> {
  const header = response.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [header];
  return Object.fromEntries(lines.map((line) => line.split(';')[0]!.split('=') as [string, string]));
}

/**
 * A browser for app.inject: keeps the cookies the dashboard sets, and posts forms urlencoded with the form token of
 * the page last fetched (or of `csrfFrom`).
 */
export class DashboardBrowser {
  readonly cookies = new Map<string, string>();
  lastPage = '';

  constructor(private readonly test: TestApp) {}

  private cookieHeader(): Record<string, string> {
    const pairs = [...this.cookies].filter(([, value]) => value !== '').map(([name, value]) => `${name}=${value}`);
    return pairs.length > 0 ? { cookie: pairs.join('; ') } : {};
  }

  private keep(response: LightMyRequestResponse): LightMyRequestResponse {
    for (const [name, value] of Object.entries(cookiesSet(response))) this.cookies.set(name, value);
    if (String(response.headers['content-type'] ?? '').startsWith('text/html')) this.lastPage = response.body;
    return response;
  }

  async get(url: string, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.keep(await this.test.app.inject({ method: 'GET', url, headers: { ...this.cookieHeader(), ...headers } }));
  }

  /** Posts `fields` (arrays repeat the field) with `_csrf` from the last page unless `fields` has its own. */
  async post(
    url: string,
    fields: Record<string, string | string[]> = {},
    headers: Record<string, string> = {},
    options: { remoteAddress?: string } = {},
  ): Promise<LightMyRequestResponse> {
    const form = new URLSearchParams();
    if (fields._csrf === undefined) form.append('_csrf', csrfOf(this.lastPage));
    for (const [name, value] of Object.entries(fields)) for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
    return this.keep(
      await this.test.app.inject({
        method: 'POST',
        url,
        payload: form.toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...this.cookieHeader(), ...headers },
        ...options,
      }),
    );
  }

  /**
   * Posts like `post`, and follows a 303 (the Post/Redirect/Get of every form that acted) with a GET, as a browser
   * does: answers the page shown after the form, with the address it was redirected to as `redirectedTo`.
   */
  async submit(url: string, fields: Record<string, string | string[]> = {}): Promise<LightMyRequestResponse & { redirectedTo?: string }> {
    const posted = await this.post(url, fields);
    if (posted.statusCode !== 303) return posted;
    const redirectedTo = String(posted.headers.location);
    return Object.assign(await this.get(redirectedTo), { redirectedTo });
  }
}

export function dashboardUsers(test: TestApp): DashboardUserService {
  return new DashboardUserService(test.storage, test.clock, { publicUrl: test.config.publicUrl, idleMs: test.config.dashboardSessionIdleMs, maxMs: test.config.dashboardSessionMaxMs });
}

/** A dashboard user of the customer, signed in through the one-time link as a person would. */
export async function signedInBrowser(test: TestApp, customerId: string, email = `user-${customerId.slice(-8)}@example.com`): Promise<DashboardBrowser> {
  const { sign_in_url } = await dashboardUsers(test).create(customerId, email);
  const browser = new DashboardBrowser(test);
  const path = new URL(sign_in_url).pathname;
  await browser.get(path);
  const response = await browser.post(path, { password: testPassword, password_confirmation: testPassword });
  if (response.statusCode !== 303) throw new Error(`choosing a password answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
  return browser;
}
