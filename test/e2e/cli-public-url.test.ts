import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseDeployments, ensureBuilt, exitWithin, freePort, processTestTimeoutMs, runCli, spawnServer, waitForHealth, type Deployment, type Spawned } from './support.js';

/**
 * The links the CLI prints open on the server (docs/cli.md "Links"): the CLI runs in another shell, without the
 * server's PORT or PUBLIC_URL, while the server listens elsewhere than 3000. The server records its PUBLIC_URL in
 * the database at start-up; the CLI uses its own PUBLIC_URL if it has one, else that.
 */

interface Credentials {
  api_key: { key: string };
  dashboard_user: { email: string; sign_in_url: string };
  api_url: string;
  first_call: string;
}

beforeAll(async () => ensureBuilt(), processTestTimeoutMs);

describe.each(databaseDeployments('SQLite', 'public-url'))('links printed by the CLI, server on another port, on %s', { timeout: processTestTimeoutMs }, (_label, makeDeployment) => {
  const servers: Spawned[] = [];
  let deployment: Deployment;

  /** A server on a free port of 127.0.0.1 with these settings; its origin as browsers reach it by default. */
  async function startServer(settings: Record<string, string> = {}): Promise<{ server: Spawned; port: number }> {
    const port = await freePort();
    const server = spawnServer(process.execPath, ['dist/server.js'], { ...deployment.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', PORT: String(port), ...settings });
    servers.push(server);
    await waitForHealth(`http://127.0.0.1:${port}`, server);
    return { server, port };
  }

  /** Opens a sign-in link as a browser would: the page to choose a password for that user. */
  async function expectChoosePasswordPage(url: string, email: string): Promise<void> {
    const response = await fetch(url);
    expect(response.status, url).toBe(200);
    const page = await response.text();
    expect(page).toContain('Choose a password');
    expect(page).toContain(email);
  }

  beforeAll(async () => {
    deployment = makeDeployment();
    await deployment.prepare();
  }, processTestTimeoutMs);
  afterAll(async () => {
    for (const server of servers) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => exitWithin(server, 10_000)));
    for (const server of servers) server.kill();
    await deployment.cleanUp();
  });

  it('sandbox init and users link print links of the running server, which open there, and its API answers the key', async () => {
    const { server, port } = await startServer();
    // The CLI's environment: the same database, no PORT, no PUBLIC_URL.
    const credentials = await runCli<Credentials>(deployment.env, 'sandbox', 'init');
    const origin = `http://localhost:${port}`;
    expect(credentials.dashboard_user.sign_in_url.startsWith(`${origin}/dashboard/link/`), credentials.dashboard_user.sign_in_url).toBe(true);
    expect(credentials.api_url).toBe(`${origin}/v1`);
    expect(credentials.first_call).toBe(`curl -s ${origin}/v1/fiat-accounts -H "x-api-key: $KEY"`);
    await expectChoosePasswordPage(credentials.dashboard_user.sign_in_url, 'admin@example.com');

    const accounts = await fetch(`${credentials.api_url}/fiat-accounts`, { headers: { 'x-api-key': credentials.api_key.key } });
    expect(accounts.status).toBe(200);
    expect(await accounts.json()).toEqual({ data: [] });

    const link = await runCli<{ sign_in_url: string }>(deployment.env, 'users', 'link', '--email', 'admin@example.com');
    expect(link.sign_in_url.startsWith(`${origin}/dashboard/link/`)).toBe(true);
    await expectChoosePasswordPage(link.sign_in_url, 'admin@example.com');

    // The CLI's own PUBLIC_URL wins: the operator says where browsers reach the server.
    const told = await runCli<{ sign_in_url: string }>({ ...deployment.env, PUBLIC_URL: 'https://customer-api.example.com/' }, 'users', 'link', '--email', 'admin@example.com');
    expect(told.sign_in_url).toMatch(/^https:\/\/customer-api\.example\.com\/dashboard\/link\/[A-Za-z0-9_-]{43}$/);

    server.child.kill('SIGTERM');
    await exitWithin(server, 10_000);
  });

  it('the last server started decides, with the PUBLIC_URL it was given', async () => {
    // Browsers reach this one through a proxy on another address: the CLI prints that address, not the port.
    const proxied = 'https://proxy.example.com:8443/customer-api';
    await startServer({ PUBLIC_URL: `${proxied}/` });
    const customer = await runCli<{ id: string }>(deployment.env, 'customers', 'create', '--name', 'Told');
    const user = await runCli<{ sign_in_url: string }>(deployment.env, 'users', 'create', '--customer', customer.id, '--email', 'told@example.com');
    expect(user.sign_in_url).toMatch(/^https:\/\/proxy\.example\.com:8443\/customer-api\/dashboard\/link\/[A-Za-z0-9_-]{43}$/);

    const second = await startServer();
    const link = await runCli<{ sign_in_url: string }>(deployment.env, 'users', 'link', '--email', 'told@example.com');
    expect(link.sign_in_url.startsWith(`http://localhost:${second.port}/dashboard/link/`)).toBe(true);
    await expectChoosePasswordPage(link.sign_in_url, 'told@example.com');
  });
});
