import type { ApiKeyService, ApiKeyView } from '../modules/api-keys/index.js';
import type { CustomerRow } from '../modules/customers/index.js';
import { InvalidInputError, type CustomerService } from '../modules/customers/index.js';
import type { DashboardUserService, DashboardUserView, SignInLink } from '../modules/dashboard-users/index.js';

/**
 * `sandbox init` (docs/cli.md): one command from an empty database to a key that answers and a dashboard that opens.
 * Run again with the same name it reuses that customer, so it never piles up sandboxes, but prints a new key (a key
 * is shown only once) and a new sign-in link (the previous unused one stops working).
 */

export interface SandboxInitOptions {
  name: string;
  email: string;
}

export interface SandboxCredentials {
  customer: CustomerRow;
  /** False when a customer of that name existed and was reused. */
  customer_created: boolean;
  api_key: ApiKeyView & { key: string };
  dashboard_user: DashboardUserView & SignInLink;
  /** PUBLIC_URL + /v1: where the API answers. */
  api_url: string;
  /** The line to paste into a shell (`eval "$(… --shell)"` sets the same and more). */
  export: string;
  /** A first call with $KEY, a read that needs no CSRF token. */
  first_call: string;
  /** Writes (POST, PATCH, DELETE) send X-CSRF-Token: this fetches one for $KEY. */
  csrf_token_call: string;
}

/** A word a POSIX shell reads back as exactly `value`: bare when that is safe, else single-quoted. */
export function shellWord(value: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** `--shell`: only `export NAME=value` lines, for `eval "$(npx customer-api sandbox init --shell)"`. */
export function shellExports(credentials: SandboxCredentials): string {
  const variables = { KEY: credentials.api_key.key, CUSTOMER_ID: credentials.customer.id, SIGN_IN_URL: credentials.dashboard_user.sign_in_url };
  return Object.entries(variables).map(([name, value]) => `export ${name}=${shellWord(value)}\n`).join('');
}

export async function initSandbox(
  services: { customers: CustomerService; apiKeys: ApiKeyService; users: DashboardUserService },
  publicUrl: string,
  options: SandboxInitOptions,
): Promise<SandboxCredentials> {
  // Everything that can refuse is checked before anything is written.
  const existing = await services.customers.findByName(options.name);
  const user = await services.users.findByEmail(options.email);
  if (user && user.customer_id !== existing?.id) {
    const ownerName = JSON.stringify((await services.customers.get(user.customer_id))?.name);
    throw new InvalidInputError(
      `${user.email} is the dashboard user of customer ${ownerName} (${user.customer_id}); pass --email with another address, or --name ${ownerName} to reuse that customer`,
    );
  }
  const customer = existing ?? (await services.customers.create(options.name));
  const apiKey = await services.apiKeys.create({ customerId: customer.id });
  const dashboardUser = user ? await services.users.issueLink(user.email) : await services.users.create(customer.id, options.email);
  const apiUrl = `${publicUrl}/v1`;
  return {
    customer,
    customer_created: existing === undefined,
    api_key: apiKey,
    dashboard_user: dashboardUser,
    api_url: apiUrl,
    export: `export KEY=${shellWord(apiKey.key)}`,
    first_call: `curl -s ${shellWord(`${apiUrl}/fiat-accounts`)} -H "x-api-key: $KEY"`,
    csrf_token_call: `curl -s ${shellWord(`${apiUrl}/csrf-token`)} -H "x-api-key: $KEY"`,
  };
}
