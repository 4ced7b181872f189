import type { FastifyInstance } from 'fastify';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import { overviewRecentTransactions } from '../../config/limits.js';
import { assetOf, type Asset } from '../../ledger/assets.js';
import { parseAmount } from '../../ledger/amounts.js';
import { formatDecimal } from '../../ledger/money.js';
import { pageRoute } from '../page-route.js';
import { renderPage } from './render.js';
import { SampleData, SandboxNotEmpty } from './sample-data.js';
import type { WebServices } from './services.js';

/** Adds up balances per asset exactly (base units), whatever form the API gives them in (number or decimal text). */
class Totals {
  private readonly units = new Map<Asset, bigint>();

  add(assetCode: string, amount: number | string): void {
    const asset = assetOf(assetCode);
    const text = String(amount);
    const negative = text.startsWith('-');
    const units = parseAmount(negative ? text.slice(1) : text, asset);
    this.units.set(asset, (this.units.get(asset) ?? 0n) + (negative ? -units : units));
  }

  list(): Array<{ asset: string; total: string }> {
    return [...this.units].map(([asset, units]) => ({ asset, total: formatDecimal(units, asset) })).sort((a, b) => a.asset.localeCompare(b.asset));
  }
}

/**
 * The balances per currency: the fiat accounts (a virtual account's money is inside its master, so it is not
 * counted twice) and the wallets' assets.
 */
async function balancesPerCurrency(services: WebServices, caller: AuthenticatedKey) {
  const [fiat, wallets] = await Promise.all([services.fiatAccounts.list(caller), services.wallets.wallets.list(caller)]);
  const totals = new Totals();
  for (const account of fiat) totals.add(account.currency, account.balance);
  for (const wallet of await Promise.all(wallets.map((listed) => services.wallets.wallets.get(caller, listed.local_id)))) {
    for (const balance of wallet.balances) totals.add(balance.asset, balance.balance);
  }
  return totals.list();
}

/**
 * The landing page after sign-in: balances per currency, the latest transactions, the webhooks that fail, where
 * things are, and in an empty sandbox the button that fills it with sample data.
 */
export function overviewPages(context: FastifyInstance, services: WebServices): void {
  const simulations = services.deposits && services.wallets.sandbox && { deposits: services.deposits, wallets: services.wallets.sandbox };
  const sampleData = simulations && new SampleData(services, simulations);

  context.get('/', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    const [keys, endUsers, accounts, webhooks, balances, recent, sandboxEmpty] = await Promise.all([
      services.apiKeys.list(caller.customerId),
      services.endUsers.list(caller),
      services.fiatAccounts.list(caller),
      services.webhooks.list(caller),
      balancesPerCurrency(services, caller),
      services.transactions.list(caller, { page: 1, limit: overviewRecentTransactions }),
      sampleData ? sampleData.isEmpty(caller) : false,
    ]);
    const sampled = request.query !== null && typeof request.query === 'object' && 'sample' in request.query;
    return renderPage(services, request, reply, '/dashboard/overview', 'Overview', {
      counts: {
        keys: keys.filter((key) => key.revoked_at === null && (key.expires_at === null || key.expires_at > services.clock.now().toISOString())).length,
        endUsers: endUsers.length,
        accounts: accounts.length,
        webhooks: webhooks.length,
      },
      balances,
      recent: recent.data,
      // Failing (its last attempts failed) or disabled: either way events are not reaching the receiver.
      failingWebhooks: webhooks.filter((webhook) => !webhook.is_active || webhook.consecutive_failures > 0),
      sandboxEmpty,
      notice: sampled && !sandboxEmpty ? 'Sample data created: a business with two directors, two funded accounts, a payee and a payment, a wallet with a deposit, and an OTC order.' : undefined,
      apiUrl: services.config.publicUrl,
    });
  });

  // Sample data is a sandbox simulation (docs/architecture.md, Sandbox simulation); production has no such route.
  if (!sampleData) return;
  context.post('/sample-data', pageRoute, async (request, reply) => {
    try {
      await sampleData.create(request.dashboard!.caller);
    } catch (error) {
      if (!(error instanceof SandboxNotEmpty)) throw error;
      // 409: the state of the sandbox, not the form, is what stands in the way.
      return renderPage(services, request, reply, '/error', 'Sample data not created', { message: error.message, homePath: '/dashboard', status: 409 }, 409);
    }
    return reply.redirect('/dashboard?sample=created', 303);
  });
}
