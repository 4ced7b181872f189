import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardAccountChoicesMax, dashboardExportBatchSize, dashboardExportRowsMax, paymentReferenceLengthMax } from '../../config/limits.js';
import type { FiatAccountRecord } from '../../modules/fiat-accounts/index.js';
import type { VirtualAccountRecord } from '../../modules/virtual-accounts/index.js';
import { bodyChecker } from '../../http/validation.js';
import { DomainError } from '../../errors.js';
import { SettleBody, type PaymentRecord } from '../../modules/payments/index.js';
import { TransactionsQuery, type TransactionRecordType, type TransactionSearch, type TransactionsQueryType } from '../../modules/transactions/index.js';
import { SettleWalletTransferBody } from '../../modules/wallets/index.js';
import { csvLine } from '../csv.js';
import { plainAmountText } from '../money-text.js';
import { formOf, formRefusal, formText, refusedForm, utcFromLocalInput, type FieldLabels, type FormBody } from '../form.js';
import { pageRoute } from '../page-route.js';
import { listQuery, pagerOf } from './lists.js';
import { isRecordId } from './ids.js';
import { searchOf, type Search } from './search.js';
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

/** The columns of the CSV export, in order: the record's fields as the API names them, and the account's name. */
const exportColumns = [
  'created_at', 'id', 'transaction_type', 'status', 'direction', 'amount', 'currency', 'fee_amount', 'fee_currency', 'balance_after',
  'account_id', 'account_name', 'virtual_account_id', 'reference', 'description', 'counterparty_name', 'counterparty_account', 'payment_id', 'completed_at',
] as const;

/** The filter form's fields (a refused filter is shown by its field). */
const filterLabels: FieldLabels = {
  account_id: { label: 'Account', paths: ['/account_id'], id: 'filter-account' },
  status: { label: 'Status', paths: ['/status'], id: 'filter-status' },
  direction: { label: 'Direction', paths: ['/direction'], id: 'filter-direction' },
  created_from: { label: 'Created from', paths: ['/created_from'], id: 'filter-from' },
  created_to: { label: 'Created before', paths: ['/created_to'], id: 'filter-to' },
};

/** The filter values as sent (and the search), for the form, the page links and the export link. */
function sentFilters(query: FormBody): Record<string, string> {
  const sent: Record<string, string> = {};
  for (const name of [...filterNames, 'q']) {
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

  type NamedAccount = { id: string; name: string };
  const named = (fiat: FiatAccountRecord[], virtual: VirtualAccountRecord[]): NamedAccount[] => [
    ...fiat.map((account) => ({ id: account.id, name: `${account.account_name} (${account.currency})` })),
    ...virtual.map((account) => ({ id: account.id, name: `${account.account_name} (${account.currency}, virtual)` })),
  ];

  /** The accounts of these ids with a name each (one query per kind, however many accounts the customer has). */
  const accountsWithIds = async (request: FastifyRequest, ids: ReadonlyArray<string | null>): Promise<NamedAccount[]> => {
    const caller = request.dashboard!.caller;
    const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
    const [fiat, virtual] = await Promise.all([services.fiatAccounts.withIds(caller, wanted), services.virtualAccounts.withIds(caller, wanted)]);
    return named(fiat, virtual);
  };

  /**
   * The accounts the filter offers: the newest dashboardAccountChoicesMax fiat and virtual accounts, and the one
   * filtered by if older (any other is reached from its own page's "Transactions of this account" link).
   */
  const accountChoices = async (request: FastifyRequest, chosen: string | undefined): Promise<NamedAccount[]> => {
    const caller = request.dashboard!.caller;
    const [fiat, virtual] = await Promise.all([
      services.fiatAccounts.page(caller, 1, dashboardAccountChoicesMax),
      services.virtualAccounts.page(caller, 1, dashboardAccountChoicesMax),
    ]);
    const choices = named(fiat.data, virtual.data);
    const older = chosen !== undefined && isRecordId(chosen) && !choices.some((choice) => choice.id === chosen.toLowerCase()) ? await accountsWithIds(request, [chosen.toLowerCase()]) : [];
    return [...choices, ...older];
  };

  /** Names an account by its id (the templates' `it.accountName`); an id not among `accounts` stays the id. */
  const namer = (accounts: NamedAccount[]) => {
    const names = new Map(accounts.map((account) => [account.id, account.name]));
    return (id: string | null) => (id === null ? '—' : (names.get(id) ?? id));
  };

  /**
   * The query of the list and of its export: the API's filters, checked by its own schema, and the search box — an
   * id (that record alone, whatever the filters), an amount, or a reference (the API's exact `reference` filter).
   * Words longer than any reference (the search box takes an email address's 254 characters) match nothing: the
   * search is valid, it finds no record (`none`), rather than a refusal of the reference filter the person never saw.
   */
  const historyQuery = (request: FastifyRequest): { checked: TransactionsQueryType; search: Search; extra: TransactionSearch; none: boolean } => {
    const query = formOf(request.query);
    const search = searchOf(query, { amounts: true });
    const input = listQuery(query, filterNames);
    for (const name of ['created_from', 'created_to'] as const) if (typeof input[name] === 'string') input[name] = utcFromLocalInput(input[name]);
    const none = search.kind === 'words' && search.text.length > paymentReferenceLengthMax;
    if (search.kind === 'words' && !none) input.reference = search.text;
    const checked = checkTransactionsQuery(input);
    return { checked, search, extra: search.kind === 'amount' ? { amountMinor: search.amountMinor } : {}, none };
  };

  /** The one record an id search names, or none: another customer's id finds nothing, like an unknown one. */
  const recordOfId = async (request: FastifyRequest, id: string): Promise<TransactionRecordType | undefined> =>
    transactions.get(request.dashboard!.caller, id).catch((error: unknown) => {
      if (error instanceof DomainError && error.code === 'NOT_FOUND') return undefined;
      throw error;
    });

  context.get('/transactions', pageRoute, async (request, reply) => {
    const query = formOf(request.query);
    const filters = sentFilters(query);
    const accounts = await accountChoices(request, filters.account_id);
    const exportPath = `/dashboard/transactions/export.csv?${new URLSearchParams(Object.entries(filters).filter(([name]) => name !== 'limit')).toString()}`;
    const page = (data: Record<string, unknown>, status = 200) =>
      renderPage(services, request, reply, '/dashboard/transactions', 'Transactions', { filters, accounts, exportPath, exportRowsMax: dashboardExportRowsMax, ...data }, status);
    let wanted: ReturnType<typeof historyQuery>;
    try {
      wanted = historyQuery(request);
    } catch (error) {
      const refused = refusedForm(error, query, filterLabels);
      if (!refused) throw error;
      const { status, ...shown } = refused;
      return page({ ...shown, records: [], pager: undefined }, status);
    }
    const shown = async (records: TransactionRecordType[]) => namer(await accountsWithIds(request, records.map((record) => record.virtual_account_id ?? record.account_id)));
    if (wanted.none) return page({ records: [], accountName: namer([]), pager: undefined });
    if (wanted.search.kind === 'id') {
      const found = await recordOfId(request, wanted.search.id);
      const records = found ? [found] : [];
      return page({ records, accountName: await shown(records), pager: undefined });
    }
    const listed = await transactions.list(request.dashboard!.caller, wanted.checked, wanted.extra);
    return page({ records: listed.data, accountName: await shown(listed.data), pager: pagerOf('/dashboard/transactions', listed.meta.pagination, filters) });
  });

  /**
   * The filtered history as CSV (docs/dashboard.md "Lists"), written as it is read: batch by batch from the
   * service, so a long history never sits in memory; at most dashboardExportRowsMax records.
   */
  context.get('/transactions/export.csv', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    const wanted = historyQuery(request);
    const line = (record: TransactionRecordType, accountName: (id: string | null) => string) =>
      csvLine(
        exportColumns.map((column) => {
          if (column === 'account_name') return accountName(record.virtual_account_id ?? record.account_id);
          if (column === 'amount' || column === 'balance_after') return plainAmountText(record[column], record.currency);
          if (column === 'fee_amount') return plainAmountText(record.fee_amount, record.fee_currency);
          const value = record[column];
          return typeof value === 'string' || typeof value === 'number' ? value : null;
        }),
      );
    async function* lines(): AsyncGenerator<string> {
      yield csvLine(exportColumns);
      if (wanted.none) return;
      if (wanted.search.kind === 'id') {
        const found = await recordOfId(request, wanted.search.id);
        if (found) yield line(found, namer(await accountsWithIds(request, [found.virtual_account_id ?? found.account_id])));
        return;
      }
      let written = 0;
      for await (const batch of transactions.batches(caller, wanted.checked, wanted.extra, dashboardExportBatchSize)) {
        const kept = batch.slice(0, dashboardExportRowsMax - written);
        const accountName = namer(await accountsWithIds(request, kept.map((record) => record.virtual_account_id ?? record.account_id)));
        yield kept.map((record) => line(record, accountName)).join('');
        written += kept.length;
        if (written >= dashboardExportRowsMax) return;
      }
    }
    const day = services.clock.now().toISOString().slice(0, 10);
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="transactions-${day}.csv"`)
      .send(Readable.from(lines()));
  });

  /** One history record, with the payment it belongs to (payments, their returns), settle buttons while pending. */
  const transactionDetail = async (request: FastifyRequest, reply: FastifyReply, id: string, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const record = await transactions.get(caller, id);
    const payment: PaymentRecord | undefined = record.payment_id === null ? undefined : await payments.get(caller, record.payment_id);
    const accountName = namer(await accountsWithIds(request, [record.account_id, record.virtual_account_id, payment?.fromAccountId ?? null, payment?.toAccountId ?? null]));
    const payeeName = payment?.payeeId ? (await services.payees.payees.get(caller, payment.payeeId)).payee_name : undefined;
    return renderPage(services, request, reply, '/dashboard/transaction', `Transaction ${record.fr_transaction_id}`, { record, payment, accountName, payeeName, ...extra }, status);
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
