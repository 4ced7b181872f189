import formbody from '@fastify/formbody';
import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { dashboardFormBytesMax, documentFormBytesMax } from '../../config/limits.js';
import { DomainError, validationError } from '../../errors.js';
import { countUploadAgainst } from '../../http/upload-gate.js';
import { identityUploadTypes, uploadDocumentTypes, type DocumentRecord } from '../../modules/documents/index.js';
import type { EndUserStatus } from '../../modules/end-users/index.js';
import type { VerificationOutcome } from '../../providers/kyc.js';
import type { WebServices } from '../dashboard/services.js';
import { formOf, formProblems, formText, refuseJsonBodies } from '../form.js';
import { installPageErrors } from '../page-errors.js';
import { pageRoute } from '../page-route.js';
import { contentSecurityPolicy, installPageHeaders } from '../page-headers.js';
import { installViews } from '../views.js';
import { show } from '../show.js';
import { documentKindWords } from '../document-kind-words.js';
import { documentFormLimits, fileSizeMaxMegabytes, readDocumentForm, uploadBodyOf, uploadProblems } from './document-form.js';
import { completeOnboarding, legacyLinkRoute, linkNotValid, linkRoute, openOnboardingLink, type LinkParams, type OnboardingVisit } from './onboarding-link.js';

type LinkRequest = { Params: LinkParams };

const statusWords: Record<EndUserStatus, string> = {
  pending_verification: 'Waiting for verification',
  verified: 'Verified',
  rejected: 'Rejected',
  review_required: 'Under review',
};
/** The sandbox's simulated decisions, as the buttons name them (the API's outcome values). */
const outcomeWords: Record<VerificationOutcome, string> = { verified: 'Verified', rejected: 'Rejected', review_required: 'Needs review' };
/** Statuses a decision can still move (modules/end-users/lifecycle.ts); verified and rejected are final. */
const undecidedStatuses = new Set(['pending_verification', 'review_required']);
/** What the person reads once done here, or once decided (from the dashboard, the API or the provider). */
const outcomeMessages: Record<EndUserStatus, (companyName: string) => string> = {
  verified: () => 'Your identity is verified. There is nothing more to do here.',
  rejected: (companyName) => `Your identity could not be verified. ${companyName} will tell you what you can do next.`,
  review_required: (companyName) => `Your documents are under review. ${companyName} will let you know the outcome.`,
  pending_verification: (companyName) => `Your documents have been sent for review. ${companyName} will let you know the outcome.`,
};
/** What the person uploads here (end-user reports the customer attached are the customer's, not shown). */
const personUploadTypes = new Set<string>(uploadDocumentTypes);
const isIdentityDocument = (document: DocumentRecord) => identityUploadTypes.has(document.document_type);
/** What each document is, in words: its kind when one was given, else its type. */
const documentTypeWords: Record<string, string> = {
  identity: 'Identity document',
  IDENTITY_VERIFICATION: 'Identity document',
  proof_of_address: 'Proof of address',
  BUSINESS_REGISTRATION: 'Business registration',
  other: 'Other document',
};
const documentWords = (document: DocumentRecord) =>
  document.document_kind === null ? (documentTypeWords[document.document_type] ?? document.document_type) : documentKindWords[document.document_kind];
const isOutcome = (value: string | undefined): value is VerificationOutcome => value !== undefined && Object.hasOwn(outcomeWords, value);

/** The end user's own details, nothing else of the record (no ids, no risk tier, no other end user). */
function personOf(visit: OnboardingVisit) {
  const row = visit.endUser;
  const address = row.address === null ? null : (JSON.parse(row.address) as { country?: string } | null);
  return {
    name: [row.first_name, row.middle_name, row.last_name].filter((part) => part !== null && part !== '').join(' '),
    email: row.email,
    dob: row.dob,
    nationality: row.nationality,
    birthCountry: row.birth_country,
    residenceCountry: address?.country ?? null,
    statusWords: statusWords[row.status as EndUserStatus] ?? row.status,
  };
}

/**
 * The hosted KYC onboarding page (docs/dashboard.md "Hosted onboarding"): whoever holds an end user's link sees
 * that end user's details, uploads an identity document through the API's own checks, and finishes — in the
 * sandbox by choosing the provider's decision, in production by submitting for the provider's review. Its own
 * context: no session, no cookies; the link is the only credential, and every form token is bound to it.
 */
export async function registerOnboardingPages(app: FastifyInstance, services: WebServices): Promise<void> {
  await app.register(
    async (context) => {
      await installViews(context);
      installPageHeaders(context);
      // Relative: from a refused form (/onboarding/{link}/documents) "Back" leads to the page itself.
      installPageErrors(context, '.');
      context.addHook('onSend', async (_request, reply) => {
        reply.header('x-robots-tag', 'noindex');
      });
      refuseJsonBodies(context);
      await context.register(formbody, { bodyLimit: dashboardFormBytesMax });
      await context.register(multipart, { limits: documentFormLimits });
      pageRoutes(context, services);
    },
    { prefix: '/onboarding' },
  );
}

function pageRoutes(context: FastifyInstance, services: WebServices): void {
  const sandbox = services.config.apiEnvironment === 'sandbox';

  const requireFormToken = (visit: OnboardingVisit, presented: unknown) => {
    if (!services.formTokens.verify(visit.formBinding, presented)) throw new DomainError('CSRF_TOKEN_INVALID', 'The form token is missing or not valid.');
  };

  const uploadedDocuments = async (visit: OnboardingVisit) =>
    (await services.documents.listOfEndUser(visit.caller, visit.endUser.id)).filter((document) => personUploadTypes.has(document.document_type));

  /** The customer's logo is an image from its own origin: the page's policy allows exactly that origin's images. */
  const allowLogo = (reply: FastifyReply, visit: OnboardingVisit) => {
    if (visit.logoUrl !== null) reply.header('content-security-policy', contentSecurityPolicy({ 'img-src': `'self' ${new URL(visit.logoUrl).origin}` }));
  };

  const page = async (reply: FastifyReply, visit: OnboardingVisit, extra: Record<string, unknown> = {}, status = 200) => {
    const documents = await uploadedDocuments(visit);
    allowLogo(reply, visit);
    return reply.code(status).view('/onboarding/page', {
      logoUrl: visit.logoUrl,
      title: 'Verify your identity',
      show,
      sandbox,
      csrf: services.formTokens.issue(visit.formBinding),
      pagePath: visit.pagePath,
      companyName: visit.companyName,
      person: personOf(visit),
      documents: documents.map((document) => ({ ...document, words: documentWords(document) })),
      documentKindWords,
      fileSizeMaxMegabytes,
      canFinish: documents.some(isIdentityDocument),
      outcomes: sandbox && undecidedStatuses.has(visit.endUser.status) ? outcomeWords : null,
      ...extra,
    });
  };

  /**
   * What a link shows once the person is done (it was completed here) or decided (verified or rejected, e.g. from the
   * dashboard): the outcome, never a request to verify, and nothing of their details.
   */
  const outcomePage = (reply: FastifyReply, visit: OnboardingVisit) => {
    const status = visit.endUser.status as EndUserStatus;
    allowLogo(reply, visit);
    return reply.view('/onboarding/done', {
      logoUrl: visit.logoUrl,
      title: visit.endUser.onboarding_completed_at === null ? 'Verification decided' : 'Verification complete',
      show,
      sandbox,
      companyName: visit.companyName,
      completedAt: visit.endUser.onboarding_completed_at,
      statusWords: statusWords[status] ?? visit.endUser.status,
      message: (outcomeMessages[status] ?? outcomeMessages.pending_verification)(visit.companyName),
    });
  };
  const decided = (visit: OnboardingVisit) => visit.endUser.onboarding_completed_at !== null || !undecidedStatuses.has(visit.endUser.status);

  /**
   * Finishing needs an identity document on file (uploaded here or by the customer through the API): without one
   * there is nothing to verify, in the sandbox as in production. Refused on the page, with the form to upload one.
   */
  const hasIdentityDocument = async (visit: OnboardingVisit) => (await uploadedDocuments(visit)).some(isIdentityDocument);
  const identityDocumentFirst = (reply: FastifyReply, visit: OnboardingVisit) => page(reply, visit, { problems: ['Upload an identity document first.'] }, 400);

  // Every other address here answers like an unknown link, a token longer than any link included (the router does
  // not match it to a link's route at all).
  context.route({ method: ['GET', 'POST'], url: '/*', ...pageRoute, handler: async () => Promise.reject(linkNotValid()) });

  /** Links opened by the upload route's hook, before its body is read. */
  const openedLinks = new WeakMap<FastifyRequest, OnboardingVisit>();
  const openedLinkOf = (request: FastifyRequest) => {
    const visit = openedLinks.get(request);
    if (!visit) throw linkNotValid();
    return visit;
  };

  // Each page and form of a link, and the same of a link issued before links carried a secret.
  for (const link of [linkRoute, legacyLinkRoute]) {
    context.get<LinkRequest>(link, pageRoute, async (request, reply) => {
      const visit = await openOnboardingLink(services, request.params, { completed: true });
      if (decided(visit)) return outcomePage(reply, visit);
      // After an upload (redirected here, so a reload uploads nothing again), the page confirms what arrived.
      const uploadedId = formText(formOf(request.query), 'uploaded');
      const uploaded = uploadedId === undefined ? undefined : (await uploadedDocuments(visit)).find((document) => document.id === uploadedId);
      return page(reply, visit, uploaded ? { notice: `Received: your ${documentWords(uploaded)} (${uploaded.file_name}). Upload another, or finish below.` } : {});
    });

    const upload = {
      ...pageRoute,
      bodyLimit: documentFormBytesMax,
      // The link is this page's caller: checked on the headers, and named as the uploader, before the upload gate
      // gives a permit (http/upload-gate.ts) — an unknown link never holds one, and a link holds its own, never the
      // customer's.
      onRequest: async (request: FastifyRequest<LinkRequest>) => {
        const visit = await openOnboardingLink(services, request.params);
        openedLinks.set(request, visit);
        countUploadAgainst(request, `onboarding:${visit.endUser.id}`);
      },
    };
    context.post<LinkRequest>(`${link}/documents`, upload, async (request, reply) => {
      const visit = openedLinkOf(request);
      if (!request.isMultipart()) throw new DomainError('UNSUPPORTED_MEDIA_TYPE', 'Send the document with the upload form on this page.');
      // Decided meanwhile (the page was open while the dashboard decided): nothing more to upload; the page says why.
      if (decided(visit)) return reply.redirect(visit.pagePath, 303);
      let uploaded;
      try {
        const form = await readDocumentForm(request, (presented) => requireFormToken(visit, presented));
        // Every check of POST /documents (schema, magic bytes against the type, size, quota) runs before anything is stored.
        uploaded = await services.documents.upload(visit.caller, uploadBodyOf(visit.endUser.id, form));
      } catch (error) {
        const problems = uploadProblems(error);
        if (!problems) throw error;
        return page(reply, visit, { problems }, (error as DomainError).statusCode);
      }
      return reply.redirect(`${visit.pagePath}?uploaded=${uploaded.id}`, 303);
    });

    if (sandbox) {
      context.post<LinkRequest>(`${link}/outcome`, pageRoute, async (request, reply) => {
        const visit = await openOnboardingLink(services, request.params);
        const form = formOf(request.body);
        requireFormToken(visit, form._csrf);
        const outcome = formText(form, 'outcome');
        if (!isOutcome(outcome)) {
          const refusal = validationError([{ location: 'body', path: '/outcome', reason: `must be one of ${Object.keys(outcomeWords).join(', ')}` }]);
          return page(reply, visit, { problems: formProblems(refusal) }, 400);
        }
        if (decided(visit)) return reply.redirect(visit.pagePath, 303);
        if (!(await hasIdentityDocument(visit))) return identityDocumentFirst(reply, visit);
        await services.verification.decide(visit.endUser.customer_id, visit.endUser.id, outcome);
        await completeOnboarding(services, visit);
        // To the page, which now says it is complete and what was decided: a reload decides nothing again.
        return reply.redirect(visit.pagePath, 303);
      });
    } else {
      // Production: the provider decides later; the person only says they are done.
      context.post<LinkRequest>(`${link}/submit`, pageRoute, async (request, reply) => {
        const visit = await openOnboardingLink(services, request.params);
        requireFormToken(visit, formOf(request.body)._csrf);
        if (decided(visit)) return reply.redirect(visit.pagePath, 303);
        if (!(await hasIdentityDocument(visit))) return identityDocumentFirst(reply, visit);
        await completeOnboarding(services, visit);
        return reply.redirect(visit.pagePath, 303);
      });
    }
  }
}
