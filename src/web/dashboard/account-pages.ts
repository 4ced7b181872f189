import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardAccountChoicesMax, dashboardAccountsPerPage } from '../../config/limits.js';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import { bodyChecker } from '../../http/validation.js';
import { CreateFiatAccountBody, FiatAccountStatusBody, ibanCountries, type CreateFiatAccountInput, type FiatAccountRecord } from '../../modules/fiat-accounts/index.js';
import type { DepositInput } from '../../modules/deposits/index.js';
import { DepositBody } from '../../modules/deposits/index.js';
import type { TransactionRecordType } from '../../modules/transactions/index.js';
import { CreateVirtualAccountBody, type CreateVirtualAccountInput, type VirtualAccountRecord } from '../../modules/virtual-accounts/index.js';
import {
  CreateWalletBody,
  CreateWalletTransferBody,
  WalletDepositBody,
  WalletTransfersQuery,
  type CreateWalletInput,
  type CreateWalletTransferInput,
  type WalletDepositInput,
  type WalletTransferRecord,
} from '../../modules/wallets/index.js';
import { fiatCurrencies, type FiatCurrency } from '../../ledger/assets.js';
import { DomainError } from '../../errors.js';
import { fieldProblems, formNumber, formOf, formText, pageForms, refuseForm, refusedForm, type FieldLabels, type FieldProblem, type FormBody } from '../form.js';
import { moneyText } from '../money-text.js';
import { chooseEndUser, type EndUserOption } from './end-user-choice.js';
import { actThenRedirect, type FormRefusal } from './form-action.js';
import { redirectWithNotice } from './notices.js';
import { pageRoute } from '../page-route.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';
import { endUserName } from './names.js';
import { checkListQuery, listQuery, pageNumberOf, pagerOf } from './lists.js';

const checkDeposit = bodyChecker<DepositInput>(DepositBody);
const checkWalletDeposit = bodyChecker<WalletDepositInput>(WalletDepositBody);
const checkTransfersQuery = bodyChecker<{ page: number; limit: number }>(WalletTransfersQuery);
const checkFiatAccount = bodyChecker<CreateFiatAccountInput>(CreateFiatAccountBody);
const checkVirtualAccount = bodyChecker<CreateVirtualAccountInput>(CreateVirtualAccountBody);
const checkWallet = bodyChecker<CreateWalletInput>(CreateWalletBody);
const checkWalletTransfer = bodyChecker<CreateWalletTransferInput>(CreateWalletTransferBody);
// Fiat and virtual accounts take the same statuses.
const checkAccountStatus = bodyChecker<{ status: string }>(FiatAccountStatusBody);

/**
 * The currency a new account's form starts with: EUR, the platform's home currency (its accounts' IBANs and its OTC
 * exchanges start from EUR), rather than USD for being listed first (the spec's order: USD, EUR, GBP).
 */
const newAccountCurrency: FiatCurrency = 'EUR';

/** Transfers shown per page of a wallet. */
const transfersPerPage = 20;

type AccountOfCustomer = { kind: 'fiat'; account: FiatAccountRecord } | { kind: 'virtual'; account: VirtualAccountRecord };

/** The path of an account's page: fiat and virtual accounts share the deposit route but not their page. */
const accountPath = (kind: AccountOfCustomer['kind'], id: string) => `/dashboard/accounts/${kind}/${id}`;

/** The deposit form of an account in this currency. */
const depositLabels = (currency: string): FieldLabels => ({
  amount: { label: `Amount in ${currency}`, paths: ['/amount'], id: 'deposit-amount' },
  reference: { label: 'Reference', paths: ['/reference'], id: 'deposit-reference' },
  counterparty_name: { label: "Sender's name", paths: ['/counterpartyName'], id: 'deposit-counterparty' },
});

/** The forms that open an account or a wallet, their fields labelled as they show them. */
const accountFormLabels = {
  fiat: {
    account_name: { label: 'Account name', paths: ['/accountName'], id: 'fiat-name' },
    currency: { label: 'Currency', paths: ['/currency'], id: 'fiat-currency' },
    iban_country: { label: 'IBAN country', paths: ['/ibanCountry'], id: 'fiat-iban-country' },
  },
  virtual: {
    account_name: { label: 'Account name', paths: ['/accountName'], id: 'virtual-name' },
    master_fiat_account_id: { label: 'Master account', paths: ['/masterFiatAccountId'], id: 'virtual-master' },
    currency: { label: 'Currency', paths: ['/currency'], id: 'virtual-currency' },
    end_user: { label: 'Held in the name of', paths: ['/endUserId'], id: 'virtual-holder' },
  },
  wallet: {
    display_name: { label: 'Name', paths: ['/displayName'], id: 'wallet-name' },
    end_user: { label: 'For', paths: ['/endUserId'], id: 'wallet-owner' },
  },
} satisfies Record<string, FieldLabels>;

type AccountFormName = keyof typeof accountFormLabels;
const accountFormNames = Object.keys(accountFormLabels) as AccountFormName[];

const walletTransferLabels: FieldLabels = {
  pair: { label: 'Asset and network', paths: ['/asset', '/network'], id: 'wallet-transfer-pair' },
  amount: { label: 'Amount', paths: ['/amount'], id: 'wallet-transfer-amount' },
  destination: { label: 'To address', paths: ['/destination'], id: 'wallet-transfer-destination' },
  note: { label: 'Note', paths: ['/note'], id: 'wallet-transfer-note' },
};

/** The wallet page's forms. */
const walletFormNames = ['deposit', 'transfer'] as const;

const walletDepositLabels: FieldLabels = {
  pair: { label: 'Asset and network', paths: ['/asset', '/network'], id: 'wallet-deposit-pair' },
  amount: { label: 'Amount', paths: ['/amount'], id: 'wallet-deposit-amount' },
};

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

  /**
   * Three lists, newest first, each paged on its own (`fiat_page`, `virtual_page`, `wallet_page`; the links keep the
   * others' pages), and the forms that open new accounts (`extra.forms`: one refused; `extra.endUserMatches`: the end
   * users its end user field matched, to choose from). The end user fields suggest the newest end users by name.
   */
  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const pages = { fiat_page: 0, virtual_page: 0, wallet_page: 0 };
    for (const name of Object.keys(pages) as Array<keyof typeof pages>) pages[name] = pageNumberOf(request.query, name);
    const [fiat, virtual, walletList, masters, endUsers] = await Promise.all([
      fiatAccounts.page(caller, pages.fiat_page, dashboardAccountsPerPage),
      virtualAccounts.page(caller, pages.virtual_page, dashboardAccountsPerPage),
      wallets.wallets.page(caller, pages.wallet_page, dashboardAccountsPerPage),
      fiatAccounts.list(caller),
      // The newest end users, suggested (without a script: a datalist) by the end user fields of the forms.
      services.endUsers.pageOfRows(caller, {}, 1, dashboardAccountChoicesMax),
    ]);
    const openMasters = masters.filter((account) => account.is_master && account.status !== 'closed');
    const virtualMaster = openMasters.find((account) => account.currency === newAccountCurrency) ?? openMasters[0];
    const keep = Object.fromEntries(Object.entries(pages).map(([name, page]) => [name, page === 1 ? undefined : String(page)]));
    return renderPage(services, request, reply, '/dashboard/accounts', 'Accounts', {
      fiat: fiat.data,
      virtual: virtual.data,
      wallets: walletList.data,
      fiatPager: pagerOf('/dashboard/accounts', fiat.pagination, keep, 'fiat_page'),
      virtualPager: pagerOf('/dashboard/accounts', virtual.pagination, keep, 'virtual_page'),
      walletPager: pagerOf('/dashboard/accounts', walletList.pagination, keep, 'wallet_page'),
      masters: openMasters,
      newAccountCurrency,
      // A virtual account's currency is its master's: the form starts on a EUR master if there is one, in its currency.
      virtualMaster: virtualMaster?.id ?? '',
      virtualCurrency: virtualMaster?.currency ?? newAccountCurrency,
      endUsers: endUsers.rows.map((endUser) => ({ id: endUser.id, name: endUserName(endUser) })),
      currencies: fiatCurrencies,
      ibanCountries,
      forms: pageForms(accountFormNames),
      ...extra,
    }, status);
  };

  context.get('/accounts', pageRoute, async (request, reply) => listPage(request, reply));

  /**
   * A form of the accounts page: its end user field resolved to one end user (chooseEndUser), its fields checked by
   * the API's body schema (`check`), then `create`; a refusal shows the page again with what was typed and every
   * problem at once — the end user field's and the schema's together.
   */
  const createFrom =
    <Body>(formName: AccountFormName, check: (form: FormBody, endUserId: string | undefined) => Body, create: (caller: AuthenticatedKey, body: Body) => Promise<string>) =>
    async (request: FastifyRequest, reply: FastifyReply) => {
      const caller = request.dashboard!.caller;
      const form = formOf(request.body);
      const labels: FieldLabels = accountFormLabels[formName];
      const refusedPage = ({ problems, form: state, status }: FormRefusal, endUserMatches?: { form: AccountFormName; matches: EndUserOption[]; more: number }) =>
        listPage(request, reply, { problems, forms: pageForms(accountFormNames, { name: formName, form: state }), endUserMatches }, status);
      const choice = 'end_user' in labels ? await chooseEndUser(services, caller, form) : { endUserId: undefined };
      if ('problem' in choice) {
        const problems: FieldProblem[] = [];
        try {
          check(form, undefined);
        } catch (error) {
          const found = fieldProblems(error, labels);
          if (!found) throw error;
          problems.push(...found);
        }
        const refused = refuseForm(form, labels, [...problems, { field: 'end_user', message: choice.problem }]);
        return refusedPage(refused, { form: formName, matches: choice.matches, more: choice.more });
      }
      return actThenRedirect(reply, async () => create(caller, check(form, choice.endUserId)), refusedPage, { sent: form, labels });
    };

  context.post(
    '/accounts/fiat',
    pageRoute,
    createFrom(
      'fiat',
      (form) => checkFiatAccount({ accountName: formText(form, 'account_name'), currency: formText(form, 'currency'), ibanCountry: formText(form, 'iban_country') }),
      async (caller, body) => accountPath('fiat', (await fiatAccounts.create(caller, body)).id),
    ),
  );

  context.post(
    '/accounts/virtual',
    pageRoute,
    createFrom(
      'virtual',
      (form, endUserId) =>
        checkVirtualAccount({
          accountName: formText(form, 'account_name'),
          masterFiatAccountId: formText(form, 'master_fiat_account_id'),
          currency: formText(form, 'currency'),
          endUserId,
        }),
      async (caller, body) => accountPath('virtual', (await virtualAccounts.create(caller, body)).id),
    ),
  );

  context.post(
    '/accounts/wallets',
    pageRoute,
    createFrom(
      'wallet',
      (form, endUserId) => checkWallet({ displayName: formText(form, 'display_name'), endUserId }),
      async (caller, body) => `/dashboard/accounts/wallets/${(await wallets.wallets.create(caller, body)).local_id}`,
    ),
  );

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
      { wallet, endUserName: endUser && endUserName(endUser), transfers: transfers.data, pager: pagerOf(`/dashboard/accounts/wallets/${wallet.local_id}`, transfers.meta.pagination, {}), forms: pageForms(walletFormNames), ...extra },
      status,
    );
  };

  context.get<{ Params: { id: string } }>('/accounts/wallets/:id', pageRoute, async (request, reply) => walletPage(request, reply, request.params.id));

  context.post<{ Params: { id: string } }>('/accounts/wallets/:id/transfers', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    // Looked up first: another customer's wallet is a 404 page whatever the form holds.
    const wallet = await wallets.wallets.get(caller, request.params.id);
    const form = formOf(request.body);
    return actThenRedirect(
      reply,
      async () => {
        const [asset, network] = (formText(form, 'pair') ?? '').split('/');
        const body = checkWalletTransfer({ asset: asset || undefined, network, amount: formText(form, 'amount'), destination: formText(form, 'destination'), note: formText(form, 'note') });
        // No Idempotency-Key: the redirect keeps a reload from sending again.
        return `/dashboard/wallet-transfers/${(await wallets.transfers.create(caller, wallet.local_id, body)).record.local_id}`;
      },
      async ({ problems, form: state, status }) => walletPage(request, reply, wallet.local_id, { problems, forms: pageForms(walletFormNames, { name: 'transfer', form: state }) }, status),
      { sent: form, labels: walletTransferLabels },
    );
  });

  // The simulated bank's status changes (docs/architecture.md, Sandbox simulation); production has no such route.
  const statuses = services.accountStatuses;
  if (statuses) {
    context.post<{ Params: { kind: string; id: string } }>('/accounts/:kind/:id/status', pageRoute, async (request, reply) => {
      const caller = request.dashboard!.caller;
      const { kind } = request.params;
      if (kind !== 'fiat' && kind !== 'virtual') throw new DomainError('NOT_FOUND', 'There is nothing at this address, or it is not yours to see.');
      const found: AccountOfCustomer =
        kind === 'fiat' ? { kind, account: await fiatAccounts.get(caller, request.params.id) } : { kind, account: await virtualAccounts.get(caller, request.params.id) };
      return actThenRedirect(
        reply,
        async () => {
          const { status } = checkAccountStatus({ status: formText(formOf(request.body), 'status') });
          await statuses[kind].set(caller.customerId, found.account.id, status);
          return accountPath(kind, found.account.id);
        },
        async ({ problems, status }) => accountPage(request, reply, found, { problems }, status),
      );
    });
  }

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
        const refused = refusedForm(error, form, depositLabels(found.account.currency));
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
        return walletPage(request, reply, wallet.local_id, { problems: refused.problems, forms: pageForms(walletFormNames, { name: 'deposit', form: refused.form }) }, refused.status);
      }
      return redirectWithNotice(services, request, reply, `/dashboard/accounts/wallets/${wallet.local_id}`, `Deposit of ${moneyText(deposit.amount, deposit.asset)} on ${deposit.network} received.`);
    });
  }
}
