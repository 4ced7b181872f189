import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardAccountsPerPage } from '../../config/limits.js';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import { bodyChecker } from '../../http/validation.js';
import type { FiatAccountRecord } from '../../modules/fiat-accounts/index.js';
import type { DepositInput } from '../../modules/deposits/index.js';
import { DepositBody } from '../../modules/deposits/index.js';
import type { TransactionRecordType } from '../../modules/transactions/index.js';
import type { VirtualAccountRecord } from '../../modules/virtual-accounts/index.js';
import { WalletDepositBody, WalletTransfersQuery, type WalletDepositInput, type WalletTransferRecord } from '../../modules/wallets/index.js';
import { DomainError } from '../../errors.js';
import { formOf, formText, refusedForm, type FieldLabels } from '../form.js';
import { moneyText } from '../money-text.js';
import { redirectWithNotice } from './notices.js';
import { pageRoute } from '../page-route.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';
import { endUserName } from './names.js';
import { checkListQuery, listQuery, pageNumberOf, pagerOf } from './lists.js';

const checkDeposit = bodyChecker<DepositInput>(DepositBody);
const checkWalletDeposit = bodyChecker<WalletDepositInput>(WalletDepositBody);
const checkTransfersQuery = bodyChecker<{ page: number; limit: number }>(WalletTransfersQuery);

/** Transfers shown per page of a wallet. */
const transfersPerPage = 20;

type AccountOfCustomer = { kind: 'fiat'; account: FiatAccountRecord } | { kind: 'virtual'; account: VirtualAccountRecord };

/** The path of an account's page: fiat and virtual accounts share the deposit route but not their page. */
const accountPath = (kind: AccountOfCustomer['kind'], id: string) => `/dashboard/accounts/${kind}/${id}`;

const depositLabels: FieldLabels = {
  amount: { label: 'Amount', paths: ['/amount'], id: 'deposit-amount' },
  reference: { label: 'Reference', paths: ['/reference'], id: 'deposit-reference' },
  counterparty_name: { label: "Sender's name", paths: ['/counterpartyName'], id: 'deposit-counterparty' },
};

const walletDepositLabels: FieldLabels = {
  pair: { label: 'Asset and network', paths: ['/asset', '/network'], id: 'wallet-deposit-pair' },
  amount: { label: 'Amount', paths: ['/amount'], id: 'wallet-deposit-amount' },
};

/** A number typed in a form as the JSON number the API takes; anything else stays text for the schema to refuse. */
function formNumber(text: string | undefined): number | string | undefined {
  return text !== undefined && /^-?\d{1,15}(\.\d{1,15})?$/.test(text) ? Number(text) : text;
}

/**
 * Accounts: the customer's fiat accounts, virtual accounts and wallets, a page for each with its details and
 * balances; in the sandbox, deposits from outside into any of them (docs/architecture.md, Sandbox simulation).
 */
export function accountPages(context: FastifyInstance, services: WebServices): void {
  const { fiatAccounts, virtualAccounts, wallets } = services;

  /** The customer's fiat or virtual account of this id: deposits take either, as the API's deposit route does. */
  const accountOf = async (caller: AuthenticatedKey, id: string): Promise<AccountOfCustomer> => {
    try {
      return { kind: 'fiat', account: await fiatAccounts.get(caller, id) };
    } catch (error) {
      if (!(error instanceof DomainError && error.code === 'NOT_FOUND')) throw error;
      return { kind: 'virtual', account: await virtualAccounts.get(caller, id) };
    }
  };

  /** Three lists, newest first, each paged on its own (`fiat_page`, `virtual_page`, `wallet_page`); the links keep the others' pages. */
  context.get('/accounts', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    const pages = { fiat_page: 0, virtual_page: 0, wallet_page: 0 };
    for (const name of Object.keys(pages) as Array<keyof typeof pages>) pages[name] = pageNumberOf(request.query, name);
    const [fiat, virtual, walletList] = await Promise.all([
      fiatAccounts.page(caller, pages.fiat_page, dashboardAccountsPerPage),
      virtualAccounts.page(caller, pages.virtual_page, dashboardAccountsPerPage),
      wallets.wallets.page(caller, pages.wallet_page, dashboardAccountsPerPage),
    ]);
    const keep = Object.fromEntries(Object.entries(pages).map(([name, page]) => [name, page === 1 ? undefined : String(page)]));
    return renderPage(services, request, reply, '/dashboard/accounts', 'Accounts', {
      fiat: fiat.data,
      virtual: virtual.data,
      wallets: walletList.data,
      fiatPager: pagerOf('/dashboard/accounts', fiat.pagination, keep, 'fiat_page'),
      virtualPager: pagerOf('/dashboard/accounts', virtual.pagination, keep, 'virtual_page'),
      walletPager: pagerOf('/dashboard/accounts', walletList.pagination, keep, 'wallet_page'),
    });
  });

  /** An account's page (and its deposit form, as typed when refused). */
  const accountPage = async (request: FastifyRequest, reply: FastifyReply, found: AccountOfCustomer, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const master = found.kind === 'virtual' ? await fiatAccounts.get(caller, found.account.master_fiat_account_id) : undefined;
    const data = { ...found, master, depositPath: `/dashboard/accounts/${found.account.id}/deposits`, ...extra };
    return renderPage(services, request, reply, '/dashboard/account', found.account.account_name, data, status);
  };

  context.get<{ Params: { id: string } }>('/accounts/fiat/:id', pageRoute, async (request, reply) =>
    accountPage(request, reply, { kind: 'fiat', account: await fiatAccounts.get(request.dashboard!.caller, request.params.id) }),
  );

  context.get<{ Params: { id: string } }>('/accounts/virtual/:id', pageRoute, async (request, reply) =>
    accountPage(request, reply, { kind: 'virtual', account: await virtualAccounts.get(request.dashboard!.caller, request.params.id) }),
  );

  /** A wallet's page: balances, addresses, its transfers and deposits (paginated). */
  const walletPage = async (request: FastifyRequest, reply: FastifyReply, walletId: string, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const wallet = await wallets.wallets.get(caller, walletId);
    const query = formOf(request.query);
    const { page } = checkListQuery(checkTransfersQuery, listQuery(query, []));
    const transfers = await wallets.transfers.list(caller, wallet.local_id, page, transfersPerPage);
    // The wallet's end user by name, linked; the id alone when the end user is gone.
    const endUser = wallet.end_user_id === null ? undefined : await services.endUsers.get(caller, wallet.end_user_id).catch(() => undefined);
    return renderPage(
      services,
      request,
      reply,
      '/dashboard/account-wallet',
      wallet.display_name,
      { wallet, endUserName: endUser && endUserName(endUser), transfers: transfers.data, pager: pagerOf(`/dashboard/accounts/wallets/${wallet.local_id}`, transfers.meta.pagination, {}), ...extra },
      status,
    );
  };

  context.get<{ Params: { id: string } }>('/accounts/wallets/:id', pageRoute, async (request, reply) => walletPage(request, reply, request.params.id));

  const deposits = services.deposits;
  if (deposits) {
    context.post<{ Params: { id: string } }>('/accounts/:id/deposits', pageRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      // Looked up first: another customer's account is a 404 page whatever the form holds.
      const found = await accountOf(caller, request.params.id);
      const form = formOf(request.body);
      let deposit: TransactionRecordType;
      try {
        const body = checkDeposit({
          amount: formNumber(formText(form, 'amount')),
          reference: formText(form, 'reference'),
          counterpartyName: formText(form, 'counterparty_name'),
        });
        deposit = (await deposits.deposit(caller, found.account.id, body)).record;
      } catch (error) {
        const refused = refusedForm(error, form, depositLabels);
        if (!refused) throw error;
        return accountPage(request, reply, found, refused, refused.status);
      }
      // Redirected, so that reloading the page shows the account rather than making a second deposit.
      const notice = `Deposit of ${moneyText(deposit.amount, deposit.currency)} received; the balance is now ${moneyText(deposit.balance_after, deposit.currency)}.`;
      return redirectWithNotice(services, request, reply, accountPath(found.kind, found.account.id), notice);
    });
  }

  const walletSandbox = wallets.sandbox;
  if (walletSandbox) {
    context.post<{ Params: { id: string } }>('/accounts/wallets/:id/deposits', pageRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      const wallet = await wallets.wallets.get(caller, request.params.id);
      const form = formOf(request.body);
      let deposit: WalletTransferRecord;
      try {
        // The form offers the wallet's addresses as "asset/network" pairs: a deposit arrives at one of them.
        const [asset, network] = (formText(form, 'pair') ?? '').split('/');
        const body = checkWalletDeposit({ asset: asset || undefined, network, amount: formText(form, 'amount') });
        deposit = (await walletSandbox.deposit(caller, wallet.local_id, body)).record;
      } catch (error) {
        const refused = refusedForm(error, form, walletDepositLabels);
        if (!refused) throw error;
        return walletPage(request, reply, wallet.local_id, refused, refused.status);
      }
      return redirectWithNotice(services, request, reply, `/dashboard/accounts/wallets/${wallet.local_id}`, `Deposit of ${moneyText(deposit.amount, deposit.asset)} on ${deposit.network} received.`);
    });
  }
}
