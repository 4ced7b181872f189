import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageLimitDefault } from '../../config/limits.js';
import { bodyChecker } from '../../http/validation.js';
import { CreatePayeeBody, PayeeStatusBody, payeeStatusValues, type CreatePayeeInput, type PayeeRecord } from '../../modules/payees/index.js';
import { CreatePaymentBody, type CreatePaymentInput } from '../../modules/payments/index.js';
import { formNumber, formOf, formText, type FieldLabels, type FormBody } from '../form.js';
import { moneyText } from '../money-text.js';
import { pageRoute } from '../page-route.js';
import { actThenRedirect } from './form-action.js';
import { checkListQuery, checkPageQuery, listQuery, pagerOf } from './lists.js';
import { recordSearch, searchOf } from './search.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

const checkPayee = bodyChecker<CreatePayeeInput>(CreatePayeeBody);
const checkPayeeStatus = bodyChecker<{ status: string }>(PayeeStatusBody);
const checkPayment = bodyChecker<CreatePaymentInput>(CreatePaymentBody);

type PayeeRoute = { Params: { id: string } };

/** The payee form's fields, labelled as it shows them; the bank details as a whole (no rail given) are its fieldset's. */
const payeeLabels: FieldLabels = {
  name: { label: 'Name', paths: ['/name'], id: 'payee-name' },
  address_line1: { label: 'Street and number', paths: ['/address/line1'], id: 'payee-line1' },
  address_city: { label: 'City', paths: ['/address/city'], id: 'payee-city' },
  address_postal_code: { label: 'Postal code', paths: ['/address/postalCode'], id: 'payee-postal-code' },
  address_country: { label: 'Country', paths: ['/address/country'], id: 'payee-country' },
  iban: { label: 'IBAN', paths: ['/bankDetails/iban'], id: 'payee-iban' },
  bic: { label: 'BIC', paths: ['/bankDetails/bic'], id: 'payee-bic' },
  sort_code: { label: 'Sort code', paths: ['/bankDetails/sortCode'], id: 'payee-sort-code' },
  routing_number: { label: 'Routing number', paths: ['/bankDetails/routingNumber'], id: 'payee-routing-number' },
  account_number: { label: 'Account number', paths: ['/bankDetails/accountNumber'], id: 'payee-account-number' },
  bank_details: { label: 'Their bank details', paths: ['/bankDetails'], id: 'payee-bank' },
};

/** The payment form of a payee in this currency. */
const paymentLabels = (currency: string): FieldLabels => ({
  from_account_id: { label: 'From', paths: ['/fromAccountId'], id: 'payment-from' },
  amount: { label: `Amount in ${currency}`, paths: ['/amount'], id: 'payment-amount' },
  reference: { label: 'Reference', paths: ['/reference'], id: 'payment-reference' },
});

/** The API's body of the payee form: the fields left empty are left out, so the bank details say which rail it is. */
function payeeBody(form: FormBody) {
  const present = (fields: Record<string, string | undefined>) => Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return {
    name: formText(form, 'name'),
    address: present({
      line1: formText(form, 'address_line1'),
      city: formText(form, 'address_city'),
      postalCode: formText(form, 'address_postal_code'),
      country: formText(form, 'address_country'),
    }),
    bankDetails: present({
      iban: formText(form, 'iban'),
      bic: formText(form, 'bic'),
      sortCode: formText(form, 'sort_code'),
      accountNumber: formText(form, 'account_number'),
      routingNumber: formText(form, 'routing_number'),
    }),
  };
}

/**
 * Payees (docs/payees.md): the list with a create form, one payee with a form that pays it (POST /payments) and, in
 * the sandbox, the simulated bank's status change.
 */
export function payeePages(context: FastifyInstance, services: WebServices): void {
  const { payees, sandbox } = services.payees;

  /** Newest first, a page at a time; the search box takes an id, or words of a name or of the bank details. `extra`: a refused create form. */
  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const search = searchOf(request.query, { amounts: false });
    const { page, limit } = checkListQuery(checkPageQuery, listQuery(request.query, []));
    const found = await payees.page(request.dashboard!.caller, recordSearch(search), page ?? 1, limit ?? pageLimitDefault);
    const q = search.kind === 'none' ? undefined : search.text;
    return renderPage(services, request, reply, '/dashboard/payees', 'Payees', {
      payees: found.data,
      pager: pagerOf('/dashboard/payees', found.pagination, { q, page: undefined, limit: String(found.pagination.limit) }),
      q: q ?? '',
      ...extra,
    }, status);
  };

  context.get('/payees', pageRoute, async (request, reply) => listPage(request, reply));

  context.post('/payees', pageRoute, async (request, reply) => {
    const form = formOf(request.body);
    return actThenRedirect(
      reply,
      async () => `/dashboard/payees/${(await payees.create(request.dashboard!.caller, checkPayee(payeeBody(form)))).id}`,
      async ({ problems, form: state, status }) => listPage(request, reply, { problems, form: state }, status),
      { sent: form, labels: payeeLabels },
    );
  });

  /** A payee, and the accounts of its currency that can pay it. */
  const detailPage = async (request: FastifyRequest, reply: FastifyReply, payee: PayeeRecord, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const [fiat, virtual] = await Promise.all([services.fiatAccounts.list(caller), services.virtualAccounts.list(caller)]);
    const payable = [...fiat, ...virtual]
      .filter((account) => account.currency === payee.currency && account.status === 'active')
      .map((account) => ({ id: account.id, name: `${account.account_name} (${moneyText(account.balance, account.currency)})` }));
    return renderPage(services, request, reply, '/dashboard/payee', payee.payee_name, { payee, payable, statuses: payeeStatusValues, ...extra }, status);
  };

  context.get<PayeeRoute>('/payees/:id', pageRoute, async (request, reply) => detailPage(request, reply, await payees.get(request.dashboard!.caller, request.params.id)));

  context.post<PayeeRoute>('/payees/:id/payments', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    // Looked up first: another customer's payee is a 404 page whatever the form holds.
    const payee = await payees.get(caller, request.params.id);
    const form = formOf(request.body);
    return actThenRedirect(
      reply,
      async () => {
        const body = checkPayment({
          fromAccountId: formText(form, 'from_account_id'),
          amount: formNumber(formText(form, 'amount')),
          currency: payee.currency,
          reference: formText(form, 'reference'),
          payeeId: payee.id,
        });
        const created = await services.payments.payments.create(caller, body);
        return `/dashboard/transactions/${(await services.payments.payments.get(caller, created.id)).transactionId}`;
      },
      async ({ problems, form: state, status }) => detailPage(request, reply, payee, { problems, form: state }, status),
      { sent: form, labels: paymentLabels(payee.currency) },
    );
  });

  // The simulated bank's status change (docs/architecture.md, Sandbox simulation); production has no such route.
  if (!sandbox) return;
  context.post<PayeeRoute>('/payees/:id/status', pageRoute, async (request, reply) => {
    const caller = request.dashboard!.caller;
    const payee = await payees.get(caller, request.params.id);
    return actThenRedirect(
      reply,
      async () => {
        const { status } = checkPayeeStatus({ status: formText(formOf(request.body), 'status') });
        await sandbox.set(caller.customerId, payee.id, status);
        return `/dashboard/payees/${payee.id}`;
      },
      async ({ problems, status }) => detailPage(request, reply, payee, { problems }, status),
    );
  });
}
