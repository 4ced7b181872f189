import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageLimitDefault } from '../../config/limits.js';
import { bodyChecker } from '../../http/validation.js';
import { OrdersQuery, QuoteBody, SettleOrderBody, type QuoteInput } from '../../modules/otc/index.js';
import { formOf, formText, type FieldLabels } from '../form.js';
import { pageRoute } from '../page-route.js';
import { actThenRedirect } from './form-action.js';
import { checkListQuery, listQuery, pagerOf } from './lists.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

const checkQuote = bodyChecker<QuoteInput>(QuoteBody);
const checkOrdersQuery = bodyChecker<{ page?: number; limit?: number }>(OrdersQuery);
const checkSettlement = bodyChecker<{ outcome: 'completed' | 'failed' }>(SettleOrderBody);

/** The quote form's fields, labelled as it shows them. */
const quoteLabels: FieldLabels = {
  source_account_id: { label: 'Pay from', paths: ['/sourceFrAccountId'], id: 'otc-source' },
  wallet_id: { label: 'Receive into', paths: ['/destinationProviderWalletId'], id: 'otc-wallet' },
  amount_eur: { label: 'Amount in EUR', paths: ['/sourceAmountEur'], id: 'otc-amount' },
  destination_currency: { label: 'Receive', paths: ['/destinationCurrency'], id: 'otc-asset' },
};

type QuoteRoute = { Params: { quoteId: string } };
type OrderRoute = { Params: { orderId: string } };

/** The time left to confirm a quote, in words ("1 minute 5 seconds"): the page shows it as text, no script needed. */
function countdownText(seconds: number): string {
  const minutes = Math.floor(seconds / 60);
  const rest = seconds % 60;
  const parts = [minutes > 0 ? `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}` : '', rest > 0 || minutes === 0 ? `${rest} ${rest === 1 ? 'second' : 'seconds'}` : ''];
  return parts.filter((part) => part !== '').join(' ');
}

/**
 * The OTC exchange of EUR into crypto (docs/otc.md), through the same service as /otc-exchanges: request a quote,
 * confirm it within its TTL (the time left shown in words), the orders, and in the sandbox the liquidity
 * provider's settlement of an order.
 */
export function otcPages(context: FastifyInstance, services: WebServices): void {
  const { otc, sandbox } = services.otc;

  const exchangePage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const query = checkListQuery(checkOrdersQuery, listQuery(request.query, []));
    const [accounts, wallets, orders] = await Promise.all([otc.eligibleAccounts(caller), services.wallets.wallets.list(caller), otc.orders(caller, query.page ?? 1, query.limit ?? pageLimitDefault)]);
    return renderPage(services, request, reply, '/dashboard/otc', 'OTC exchange', {
      accounts,
      wallets,
      orders: orders.data,
      pager: pagerOf('/dashboard/otc', orders.meta.pagination, { limit: String(orders.meta.pagination.limit) }),
      ...extra,
    }, status);
  };

  context.get('/otc', pageRoute, async (request, reply) => exchangePage(request, reply));

  context.post('/otc/quotes', pageRoute, async (request, reply) => {
    const form = formOf(request.body);
    return actThenRedirect(
      reply,
      async () => {
        const body = checkQuote({
          sourceFrAccountId: formText(form, 'source_account_id'),
          destinationProviderWalletId: formText(form, 'wallet_id'),
          sourceAmountEur: formText(form, 'amount_eur'),
          destinationCurrency: formText(form, 'destination_currency'),
        });
        return `/dashboard/otc/quotes/${(await otc.quote(request.dashboard!.caller, body)).quoteId}`;
      },
      async ({ problems, form: state, status }) => exchangePage(request, reply, { problems, form: state }, status),
      { sent: form, labels: quoteLabels },
    );
  });

  const quotePage = async (request: FastifyRequest<QuoteRoute>, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const state = await otc.quoteState(request.dashboard!.caller, request.params.quoteId);
    return renderPage(services, request, reply, '/dashboard/otc-quote', 'OTC quote', { ...state, countdown: countdownText(state.secondsLeft), ...extra }, status);
  };

  context.get<QuoteRoute>('/otc/quotes/:quoteId', pageRoute, async (request, reply) => quotePage(request, reply));

  context.post<QuoteRoute>('/otc/quotes/:quoteId/confirm', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    // Looked up first: another customer's quote is a 404 page.
    const { quote } = await otc.quoteState(caller, request.params.quoteId);
    return actThenRedirect(
      reply,
      // No Idempotency-Key: a quote makes one order whatever is sent, and the redirect keeps a reload from sending again.
      async () => `/dashboard/otc/orders/${(await otc.confirm(caller, { quoteId: quote.quoteId }, undefined)).record.orderId}`,
      async ({ problems, status }) => quotePage(request, reply, { problems }, status),
    );
  });

  const orderPage = async (request: FastifyRequest<OrderRoute>, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) =>
    renderPage(services, request, reply, '/dashboard/otc-order', 'OTC order', { order: await otc.order(request.dashboard!.caller, request.params.orderId), ...extra }, status);

  context.get<OrderRoute>('/otc/orders/:orderId', pageRoute, async (request, reply) => orderPage(request, reply));

  // The simulated liquidity provider (docs/architecture.md, Sandbox simulation); production has no such route.
  if (!sandbox) return;
  context.post<OrderRoute>('/otc/orders/:orderId/settle', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    const order = await otc.order(caller, request.params.orderId);
    return actThenRedirect(
      reply,
      async () => {
        const { outcome } = checkSettlement({ outcome: formText(formOf(request.body), 'outcome') });
        await sandbox.settle(caller.customerId, order.orderId, outcome);
        return `/dashboard/otc/orders/${order.orderId}`;
      },
      async ({ problems, status }) => orderPage(request, reply, { problems }, status),
    );
  });
}
