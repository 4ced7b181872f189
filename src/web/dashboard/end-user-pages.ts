import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { pageLimitDefault } from '../../config/limits.js';
import { bodyChecker } from '../../http/validation.js';
import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import type { OnboardingLinks } from '../../modules/end-users/index.js';
import { presentEndUser } from '../../modules/end-users/index.js';
import type { EndUserRow } from '../../modules/end-users/index.js';
import {
  CreateBusinessBody,
  CreateIndividualBody,
  SandboxVerificationBody,
  type CreateBusinessInput,
  type CreateIndividualInput,
  type EndUserStatus,
  type SandboxVerificationInput,
} from '../../modules/end-users/index.js';
import { allowedTransitions } from '../../modules/end-users/index.js';
import { codeWords } from '../code-words.js';
import { timeText } from '../time-text.js';
import { documentKindWords } from '../document-kind-words.js';
import { formOf, formRefusal, formText, pageForms, type FieldLabels, type FormBody } from '../form.js';
import { actThenRedirect } from './form-action.js';
import { pageRoute } from '../page-route.js';
import { checkListQuery, checkPageQuery, listQuery, pagerOf } from './lists.js';
import { recordSearch, searchOf } from './search.js';
import { endUserName } from './names.js';
import { redirectWithNotice } from './notices.js';
import { renderPage } from './render.js';
import type { WebServices } from './services.js';

/** A stored file shown inline loads nothing else and cannot be framed (the browser's own image or PDF viewer shows it). */
const documentPolicy = "default-src 'none'; img-src 'self'; object-src 'self'; frame-ancestors 'none'";

const checkVerificationBody = bodyChecker<SandboxVerificationInput>(SandboxVerificationBody);
const checkIndividual = bodyChecker<CreateIndividualInput>(CreateIndividualBody);
const checkBusiness = bodyChecker<CreateBusinessInput>(CreateBusinessBody);

/** An address typed in the fields `<prefix>_line1`, `_city`, `_postal_code` and `_country`, as the API's address object. */
function addressOf(form: FormBody, prefix: string) {
  return {
    line1: formText(form, `${prefix}_line1`),
    city: formText(form, `${prefix}_city`),
    postalCode: formText(form, `${prefix}_postal_code`),
    country: formText(form, `${prefix}_country`),
  };
}

type EndUserParams = { Params: { endUserId: string } };

/** The fields of an address typed as `address_line1` …, and the API paths (`/address/line1` …) whose problems are theirs. */
function addressLabels(idPrefix: string, apiPaths: readonly string[]): FieldLabels {
  const field = (name: string, label: string, apiName: string, id: string) => [name, { label, paths: apiPaths.map((path) => `${path}/${apiName}`), id: `${idPrefix}-${id}` }] as const;
  return Object.fromEntries([
    field('address_line1', 'Street and number', 'line1', 'line1'),
    field('address_city', 'City', 'city', 'city'),
    field('address_postal_code', 'Postal code', 'postalCode', 'postal-code'),
    field('address_country', 'Country', 'country', 'country'),
  ]);
}

/** The create forms' fields, labelled as the forms show them. */
const endUserFormLabels = {
  individual: {
    first_name: { label: 'First name', paths: ['/firstName'], id: 'individual-first-name' },
    last_name: { label: 'Last name', paths: ['/lastName'], id: 'individual-last-name' },
    email: { label: 'Email', paths: ['/email'], id: 'individual-email' },
    dob: { label: 'Date of birth', paths: ['/dob'], id: 'individual-dob' },
    ...addressLabels('individual', ['/address']),
    nationality: { label: 'Nationality', paths: ['/nationality'], id: 'individual-nationality' },
    verification_method: { label: 'Verification', paths: ['/verificationMethod'], id: 'individual-verification-method' },
  },
  business: {
    company_name: { label: 'Company name', paths: ['/business/companyName'], id: 'business-company-name' },
    registration_number: { label: 'Registration number', paths: ['/business/registrationNumber'], id: 'business-registration-number' },
    registration_date: { label: 'Registration date', paths: ['/business/registrationDate'], id: 'business-registration-date' },
    email: { label: 'Email', paths: ['/business/email'], id: 'business-email' },
    incorporation_country: { label: 'Country of incorporation', paths: ['/business/incorporationCountry'], id: 'business-incorporation-country' },
    // The form asks one address: the director's is the company's, so the director's address problems are its own.
    ...addressLabels('business', ['/business/registeredAddress', '/businessPersons/0/person/address']),
    director_first_name: { label: "Director's first name", paths: ['/businessPersons/0/person/firstName'], id: 'business-director-first-name' },
    director_last_name: { label: "Director's last name", paths: ['/businessPersons/0/person/lastName'], id: 'business-director-last-name' },
    director_dob: { label: "Director's date of birth", paths: ['/businessPersons/0/person/dob'], id: 'business-director-dob' },
    director_email: { label: "Director's email", paths: ['/businessPersons/0/person/email'], id: 'business-director-email' },
  },
} satisfies Record<string, FieldLabels>;

type EndUserFormName = keyof typeof endUserFormLabels;
const endUserFormNames = Object.keys(endUserFormLabels) as EndUserFormName[];

/** The verification methods a create form offers (docs/spec.md end users). */
const verificationMethods = ['hosted_kyc', 'pdf_upload', 'provider_websdk'] as const;

/** Status is always in words; the colour only repeats it. */
const statusClasses: Partial<Record<EndUserStatus, string>> = { verified: 'status-ok', rejected: 'status-bad' };

/** The record as the API answers it, with what the dashboard adds: names and states in words, the hosted onboarding link. */
function endUserView(row: EndUserRow, caller: AuthenticatedKey, onboardingLinks: OnboardingLinks) {
  const record = presentEndUser(row, caller.frOwnerBusinessId);
  return {
    ...record,
    name: endUserName(record),
    type_words: codeWords(record.end_user_type),
    status_words: codeWords(record.status),
    status_class: statusClasses[record.status] ?? '',
    verification_method_words: row.verification_method === null ? 'Not set' : codeWords(row.verification_method),
    // Only a hosted_kyc end user has a hosted onboarding link (modules/end-users/onboarding.ts).
    onboarding: onboardingLinks.linkOf(row) ?? null,
  };
}

/** End users (docs/spec.md §4): the customer's list, one end user with its documents and, in the sandbox, the verification decision. */
export function endUserPages(context: FastifyInstance, services: WebServices): void {
  const sandbox = services.config.apiEnvironment === 'sandbox';

  /** Newest first, a page at a time; the search box takes an id, or words of a name or an email address. `extra`: a refused create form. */
  const listPage = async (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const search = searchOf(request.query, { amounts: false });
    const { page, limit } = checkListQuery(checkPageQuery, listQuery(request.query, []));
    const found = await services.endUsers.pageOfRows(caller, recordSearch(search), page ?? 1, limit ?? pageLimitDefault);
    const q = search.kind === 'none' ? undefined : search.text;
    return renderPage(services, request, reply, '/dashboard/end-users', 'End users', {
      endUsers: found.rows.map((row) => endUserView(row, caller, services.onboardingLinks)),
      pager: pagerOf('/dashboard/end-users', found.pagination, { q, page: undefined, limit: String(found.pagination.limit) }),
      q: q ?? '',
      verificationMethods: verificationMethods.map((method) => [method, codeWords(method)]),
      forms: pageForms(endUserFormNames),
      ...extra,
    }, status);
  };

  context.get('/end-users', pageRoute, async (request, reply) => listPage(request, reply));

  /** A create form of the list page: the API's body schema judges it; a refusal shows the page again with what was typed. */
  const createFrom = (formName: EndUserFormName, create: (form: FormBody, caller: AuthenticatedKey) => Promise<{ id: string }>) => async (request: FastifyRequest, reply: FastifyReply) => {
    const form = formOf(request.body);
    return actThenRedirect(
      reply,
      async () => `/dashboard/end-users/${(await create(form, request.dashboard!.caller)).id}`,
      async ({ problems, form: refused, status }) => listPage(request, reply, { problems, forms: pageForms(endUserFormNames, { name: formName, form: refused }) }, status),
      { sent: form, labels: endUserFormLabels[formName] },
    );
  };

  context.post(
    '/end-users',
    pageRoute,
    createFrom('individual', async (form, caller) =>
      services.endUsers.createIndividual(
        caller,
        checkIndividual({
          firstName: formText(form, 'first_name'),
          lastName: formText(form, 'last_name'),
          email: formText(form, 'email'),
          dob: formText(form, 'dob'),
          address: addressOf(form, 'address'),
          nationality: formText(form, 'nationality'),
          verificationMethod: formText(form, 'verification_method'),
        }),
      ),
    ),
  );

  context.post(
    '/end-users/businesses',
    pageRoute,
    createFrom('business', async (form, caller) => {
      const address = addressOf(form, 'address');
      const director = {
        firstName: formText(form, 'director_first_name'),
        lastName: formText(form, 'director_last_name'),
        dob: formText(form, 'director_dob'),
        email: formText(form, 'director_email'),
        // The form asks one address: the director's is the company's.
        address,
      };
      return services.endUsers.createBusiness(
        caller,
        checkBusiness({
          business: {
            companyName: formText(form, 'company_name'),
            registrationNumber: formText(form, 'registration_number'),
            registrationDate: formText(form, 'registration_date'),
            email: formText(form, 'email'),
            incorporationCountry: formText(form, 'incorporation_country'),
            registeredAddress: address,
          },
          businessPersons: [{ person: director, types: ['director'] }],
        }),
      );
    }),
  );

  const detail = async (request: FastifyRequest<EndUserParams>, reply: FastifyReply, extra: Record<string, unknown> = {}, status = 200) => {
    const caller = request.dashboard!.caller;
    const row = await services.endUsers.require(caller, request.params.endUserId);
    const endUser = endUserView(row, caller, services.onboardingLinks);
    return renderPage(services, request, reply, '/dashboard/end-user', endUser.name || 'End user', {
      endUser,
      documents: (await services.documents.listOfEndUser(caller, row.id)).map((document) => ({
        ...document,
        kind_words: document.document_kind === null ? '' : documentKindWords[document.document_kind],
      })),
      // The sandbox offers only the decisions the current status allows.
      outcomes: sandbox ? allowedTransitions[endUser.status].map((outcome) => ({ outcome, words: codeWords(outcome) })) : [],
      ...extra,
    }, status);
  };

  context.get<EndUserParams>('/end-users/:endUserId', pageRoute, async (request, reply) => detail(request, reply));

  // A new hosted onboarding link (lost, expired, or the person must come back): the old one opens nothing after.
  context.post<EndUserParams>('/end-users/:endUserId/onboarding-link', pageRoute, async (request, reply) => {
    const renewed = await services.endUsers.renewOnboardingLink(request.dashboard!.caller, request.params.endUserId);
    const link = services.onboardingLinks.linkOf(renewed);
    return redirectWithNotice(services, request, reply, `/dashboard/end-users/${renewed.id}`, `A new onboarding link is ready, valid until ${timeText(link?.expires_at ?? '')}; the previous link no longer opens the page.`);
  });

  /**
   * A document's file, as uploaded: shown in the browser (PDF, JPEG, PNG: the only types an upload may have, checked
   * against their content), or downloaded with `?download=1`. Sandboxed by its own policy: nothing in it runs.
   */
  context.get<{ Params: { documentId: string }; Querystring: { download?: string } }>('/documents/:documentId/file', pageRoute, async (request, reply) => {
    const { document, bytes } = await services.documents.withContent(request.dashboard!.caller, request.params.documentId);
    const disposition = request.query.download === undefined ? 'inline' : 'attachment';
    reply.header('content-disposition', `${disposition}; filename*=UTF-8''${encodeURIComponent(document.file_name)}`);
    reply.header('content-security-policy', documentPolicy);
    return reply.type(document.mime_type).send(bytes);
  });

  // Deciding a verification by hand is a sandbox simulation (docs/architecture.md, Sandbox simulation); production has no such route.
  if (!sandbox) return;
  context.post<EndUserParams>('/end-users/:endUserId/verification', pageRoute, async (request, reply) => {
    const outcome = formText(formOf(request.body), 'outcome');
    try {
      const body = checkVerificationBody(outcome === undefined ? {} : { outcome });
      const decided = await services.verification.decide(request.dashboard!.customerId, request.params.endUserId, body.outcome);
      return await redirectWithNotice(services, request, reply, `/dashboard/end-users/${decided.id}`, `Verification decided: ${codeWords(decided.status)}.`);
    } catch (error) {
      // A refused outcome (400) or a move the status does not allow (422) is shown on the page; an unknown id is the 404 page.
      const refused = formRefusal(error);
      if (!refused) throw error;
      return detail(request, reply, { problems: refused.problems }, refused.status);
    }
  });
}
