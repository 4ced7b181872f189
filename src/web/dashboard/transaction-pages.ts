import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyChecker } from '../../http/validation.js';
import { SettleBody, type PaymentRecord } from '../../modules/payments/index.js';
import { TransactionsQuery, type TransactionsQueryType } from '../../modules/transactions/index.js';
import { SettleWalletTransferBody } from '../../modules/wallets/index.js';
import { formOf, formRefusal, formText, refusedForm, utcFromLocalInput, type FieldLabels, type FormBody } from '../form.js';
import { pageRoute } from '../page-route.js';
import { listQuery, pagerOf } from './lists.js';
import { redirectWithNotice } from './notices.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

type Outcome = 'completed' | 'failed';
const outcomeWords: Record<Outcome, string> = { completed: 'completed', failed: 'failed, and what it held is available again' };
const checkPaymentSettlement = bodyChecker<{ outcome: Outcome }>(SettleBody);
const checkTransferSettlement = bodyChecker<{ outcome: Outcome }>(SettleWalletTransferBody);
const checkTransactionsQuery = bodyChecker<TransactionsQueryType>(TransactionsQuery);

/** The filters of GET /transactions that the filter form offers, kept in the page links. */
const filterNames = ['account_id', 'status', 'direction', 'created_from', 'created_to', 'limit'] as const;

/** The filter form's fields (a refused filter is shown by its field). */
const filterLabels: FieldLabels = {
  account_id: { label: 'Account', paths: ['/account_id'], id: 'filter-account' },
  status: { label: 'Status', paths: ['/status'], id: 'filter-status' },
  direction: { label: 'Direction', paths: ['/direction'], id: 'filter-direction' },
  created_from: { label: 'Created from', paths: ['/created_from'], id: 'filter-from' },
  created_to: { label: 'Created before', paths: ['/created_to'], id: 'filter-to' },
};

/** The filter values as sent, for the form and the page links. */
function sentFilters(query: FormBody): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const name of filterNames) {
    const value = formText(query, name);
    if (value !== undefined) sent[name] = value;
  }
  return sent;
}

/**
 * Transactions (docs/spec.md §4.5 history): the filtered, paginated list and one record with its payment; in the sandbox,
 * the settlement of pending payments and wallet transfers (docs/architecture.md, Sandbox simulation). Wallet transfers are not history records
 * (they have their own table and ids), so they have their own page, linked from their wallet's page.
 */
export function transactionPages(context: FastifyInstance, services: WebServices): void {
  const { payments } = services.payments;
  const { transactions } = services;

  /** The customer's fiat and virtual accounts with a name each, to name them in the list and offer them as a filter. */
  const accountNames = async (request: FastifyRequest) => {
    const caller = request.dashboard!.caller;
    const [fiat, virtual] = await Promise.all([services.fiatAccounts.list(caller), services.virtualAccounts.list(caller)]);
    return [
      ...fiat.map((account) => ({ id: account.id, name: `${account.account_name} (${account.currency})` })),
      ...virtual.map((account) => ({ id: account.id, name: `${account.account_name} (${account.currency}, virtual)` })),
    ];
  };

  context.get('/transactions', pageRoute, async (request, reply) => {
    const query = formOf(request.query);
    const filters = sentFilters(query);
    const accounts = await accountNames(request);
    const page = (data: Record<string, unknown>, status = 200) =>
      renderPage(services, request, reply, '/dashboard/transactions', 'Transactions', { filters, accounts, ...data }, status);
    let checked: TransactionsQueryType;
    try {
      const input = listQuery(query, filterNames);
      for (const name of ['created_from', 'created_to'] as const) if (typeof input[name] === 'string') input[name] = utcFromLocalInput(input[name]);
      checked = checkTransactionsQuery(input);
    } catch (error) {
      const refused = refusedForm(error, query, filterLabels);
      if (!refused) throw error;
      const { status, ...shown } = refused;
      return page({ ...shown, records: [], pager: undefined }, status);
    }
    const listed = await transactions.list(request.dashboard!.caller, checked);
    return page({ records: listed.data, pager: pagerOf('/dashboard/transactions', listed.meta.pagination, filters) });
  });

  /** One history record, with the payment it belongs to (payments, their returns), settle buttons while pending. */
  const transactionDetail = async (request: FastifyRequest, reply: FastifyReply, id: string, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const record = await transactions.get(caller, id);
    const payment: PaymentRecord | undefined = record.payment_id === null ? undefined : await payments.get(caller, record.payment_id);
    return renderPage(services, request, reply, '/dashboard/transaction', `Transaction ${record.fr_transaction_id}`, { record, payment, ...extra }, status);
  };

  context.get<{ Params: { id: string } }>('/transactions/:id', pageRoute, async (request, reply) => transactionDetail(request, reply, request.params.id));

  const transferDetail = async (request: FastifyRequest, reply: FastifyReply, id: string, extra: Record<string, unknown> = {}, status = 200) => {
    const transfer = await services.wallets.transfers.get(request.dashboard!.caller, id);
    const title = transfer.direction === 'incoming' ? 'Wallet deposit' : 'Wallet transfer';
    return renderPage(services, request, reply, '/dashboard/transaction-wallet-transfer', title, { transfer, ...extra }, status);
  };

  context.get<{ Params: { id: string } }>('/wallet-transfers/:id', pageRoute, async (request, reply) => transferDetail(request, reply, request.params.id));

  const paymentSandbox = services.payments.sandbox;
  if (paymentSandbox) {
    context.post<{ Params: { id: string } }>('/payments/:id/settle', pageRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      // Looked up first: another customer's payment is a 404 page whatever the form holds.
      const payment = await payments.get(caller, request.params.id);
      let outcome: Outcome;
      try {
        ({ outcome } = checkPaymentSettlement({ outcome: formText(formOf(request.body), 'outcome') }));
        await paymentSandbox.settlement.settle(caller.customerId, payment.id, outcome);
      } catch (error) {
        const refused = formRefusal(error);
        if (!refused) throw error;
        return transactionDetail(request, reply, payment.transactionId, { problems: refused.problems }, refused.status);
      }
      return redirectWithNotice(services, request, reply, `/dashboard/transactions/${payment.transactionId}`, `Payment settled: ${outcomeWords[outcome]}.`);
    });
  }

  const walletSandbox = services.wallets.sandbox;
  if (walletSandbox) {
    context.post<{ Params: { id: string } }>('/wallet-transfers/:id/settle', pageRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      const transfer = await services.wallets.transfers.get(caller, request.params.id);
      let outcome: Outcome;
      try {
        ({ outcome } = checkTransferSettlement({ outcome: formText(formOf(request.body), 'outcome') }));
        await walletSandbox.settle(caller.customerId, transfer.local_id, outcome);
      } catch (error) {
        const refused = formRefusal(error);
        if (!refused) throw error;
        return transferDetail(request, reply, transfer.local_id, { problems: refused.problems }, refused.status);
      }
      return redirectWithNotice(services, request, reply, `/dashboard/wallet-transfers/${transfer.local_id}`, `Transfer settled: ${outcomeWords[outcome]}.`);
    });
  }
}
