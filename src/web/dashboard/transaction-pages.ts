import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, validationError } from '../../errors.js';
import { bodyChecker } from '../../http/validation.js';
import { SettleBody, type PaymentRecord } from '../../modules/payments/schemas.js';
import { TransactionsQuery, type TransactionsQueryType } from '../../modules/transactions/schemas.js';
import { SettleWalletTransferBody } from '../../modules/wallets/schemas.js';
import { formOf, formProblems, formText, type FormBody } from '../form.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

const dashboardRoute = { config: { public: true }, schema: { hide: true } } as const;

type Outcome = 'completed' | 'failed';
const checkPaymentSettlement = bodyChecker<{ outcome: Outcome }>(SettleBody);
const checkTransferSettlement = bodyChecker<{ outcome: Outcome }>(SettleWalletTransferBody);
const checkTransactionsQuery = bodyChecker<TransactionsQueryType>(TransactionsQuery);

/** The filters of GET /transactions that the filter form offers, kept in the page links. */
const filterNames = ['account_id', 'status', 'direction', 'created_from', 'created_to', 'limit'] as const;

/**
 * A query string as the API's query schema takes it: the first value of each named parameter, whole numbers as
 * numbers (a query is text; anything else stays text for the schema to refuse), empty ones left out.
 */
export function queryInput(query: unknown, names: readonly string[]): Record<string, unknown> {
  const form = formOf(query);
  const input: Record<string, unknown> = {};
  for (const name of names) {
    const value = formText(form, name);
    if (value !== undefined) input[name] = /^\d{1,15}$/.test(value) ? Number(value) : value;
  }
  return input;
}

/** A list's query checked by the API's schema; refused, it is the 400 page saying what is wrong with the address. */
export function checkQuery<T>(checker: (data: unknown) => T, input: unknown): T {
  try {
    return checker(input);
  } catch (error) {
    const problems = formProblems(error);
    throw problems ? validationError([], `This address asks for something not valid: ${problems.join('; ')}.`) : error;
  }
}

export interface Pager {
  page: number;
  pages: number;
  total: number;
  previous: string | undefined;
  next: string | undefined;
}

/** The links to the neighbouring pages of a list, keeping the parameters that chose it. */
export function pagerOf(path: string, keep: Record<string, string>, pagination: { page: number; limit: number; total: number }): Pager {
  const { page, limit, total } = pagination;
  const pages = Math.max(1, Math.ceil(total / limit));
  const href = (target: number) => `${path}?${new URLSearchParams({ ...keep, page: String(target) }).toString()}`;
  return { page, pages, total, previous: page > 1 ? href(Math.min(page - 1, pages)) : undefined, next: page < pages ? href(page + 1) : undefined };
}

/** A datetime-local input has no zone and no seconds; the label says UTC. Anything else goes to the schema as sent. */
function utcTimestamp(text: string): string {
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text) ? `${text}:00Z` : text;
}

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
 * What a refused form shows again: the API's reasons and status (400 not valid, 422 not possible now). Not found is
 * no form problem: it stays the 404 page, like an unknown id.
 */
export function formRefusal(error: unknown): { problems: string[]; status: number } | undefined {
  const problems = formProblems(error);
  if (!problems || !(error instanceof DomainError) || error.code === 'NOT_FOUND') return undefined;
  return { problems, status: error.statusCode };
}

/**
 * Transactions (spec §4.5 history): the filtered, paginated list and one record with its payment; in the sandbox,
 * the settlement of pending payments and wallet transfers (DESIGN §3). Wallet transfers are not history records
 * (they have their own table and ids), so they have their own page, linked from their wallet's page.
 */
export function transactionPages(context: FastifyInstance, services: WebServices): void {
  const { payments, transactions } = services.payments;

  /** The customer's fiat and virtual accounts with a name each, to name them in the list and offer them as a filter. */
  const accountNames = async (request: FastifyRequest) => {
    const caller = request.dashboard!.caller;
    const [fiat, virtual] = await Promise.all([services.fiatAccounts.list(caller), services.virtualAccounts.list(caller)]);
    return [
      ...fiat.map((account) => ({ id: account.id, name: `${account.account_name} (${account.currency})` })),
      ...virtual.map((account) => ({ id: account.id, name: `${account.account_name} (${account.currency}, virtual)` })),
    ];
  };

  context.get('/transactions', dashboardRoute, async (request, reply) => {
    const query = formOf(request.query);
    const filters = sentFilters(query);
    const accounts = await accountNames(request);
    const page = (data: Record<string, unknown>, status = 200) =>
      renderPage(services, request, reply, '/dashboard/transactions', 'Transactions', { filters, accounts, ...data }, status);
    let checked: TransactionsQueryType;
    try {
      const input = queryInput(query, ['page', ...filterNames]);
      for (const name of ['created_from', 'created_to'] as const) if (typeof input[name] === 'string') input[name] = utcTimestamp(input[name]);
      checked = checkTransactionsQuery(input);
    } catch (error) {
      const refused = formRefusal(error);
      if (!refused) throw error;
      return page({ problems: refused.problems, records: [], pager: undefined }, refused.status);
    }
    const listed = await transactions.list(request.dashboard!.caller, checked);
    return page({ records: listed.data, pager: pagerOf('/dashboard/transactions', filters, listed.meta.pagination) });
  });

  /** One history record, with the payment it belongs to (payments, their returns), settle buttons while pending. */
  const transactionDetail = async (request: FastifyRequest, reply: FastifyReply, id: string, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const record = await transactions.get(caller, id);
    const payment: PaymentRecord | undefined = record.payment_id === null ? undefined : await payments.get(caller, record.payment_id);
    return renderPage(services, request, reply, '/dashboard/transaction', `Transaction ${record.fr_transaction_id}`, { record, payment, ...extra }, status);
  };

  context.get<{ Params: { id: string } }>('/transactions/:id', dashboardRoute, async (request, reply) => transactionDetail(request, reply, request.params.id));

  const transferDetail = async (request: FastifyRequest, reply: FastifyReply, id: string, extra: Record<string, unknown> = {}, status = 200) => {
    const transfer = await services.wallets.transfers.get(request.dashboard!.caller, id);
    const title = transfer.direction === 'incoming' ? 'Wallet deposit' : 'Wallet transfer';
    return renderPage(services, request, reply, '/dashboard/transaction-wallet-transfer', title, { transfer, ...extra }, status);
  };

  context.get<{ Params: { id: string } }>('/wallet-transfers/:id', dashboardRoute, async (request, reply) => transferDetail(request, reply, request.params.id));

  const paymentSandbox = services.payments.sandbox;
  if (paymentSandbox) {
    context.post<{ Params: { id: string } }>('/payments/:id/settle', dashboardRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      // Looked up first: another customer's payment is a 404 page whatever the form holds.
      const payment = await payments.get(caller, request.params.id);
      try {
        const { outcome } = checkPaymentSettlement({ outcome: formText(formOf(request.body), 'outcome') });
        await paymentSandbox.settlement.settle(caller.customerId, payment.id, outcome);
      } catch (error) {
        const refused = formRefusal(error);
        if (!refused) throw error;
        return transactionDetail(request, reply, payment.transactionId, { problems: refused.problems }, refused.status);
      }
      return reply.redirect(`/dashboard/transactions/${payment.transactionId}`, 303);
    });
  }

  const walletSandbox = services.wallets.sandbox;
  if (walletSandbox) {
    context.post<{ Params: { id: string } }>('/wallet-transfers/:id/settle', dashboardRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      const transfer = await services.wallets.transfers.get(caller, request.params.id);
      try {
        const { outcome } = checkTransferSettlement({ outcome: formText(formOf(request.body), 'outcome') });
        await walletSandbox.settle(caller.customerId, transfer.local_id, outcome);
      } catch (error) {
        const refused = formRefusal(error);
        if (!refused) throw error;
        return transferDetail(request, reply, transfer.local_id, { problems: refused.problems }, refused.status);
      }
      return reply.redirect(`/dashboard/wallet-transfers/${transfer.local_id}`, 303);
    });
  }
}
