import { randomBytes } from 'node:crypto';
import { newId } from '../../ids.js';
import { customerTimeOf, type Clock, type CustomerClocks } from '../../clock.js';
import { notFound, validationError, type FieldError } from '../../errors.js';
import { appendEvent } from '../../events/outbox.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import { endUserReferenceRandomBytes, ownershipPercentMax, pageLimitMax, reportSizeMaxBytes } from '../../config/limits.js';
import type { Provisioning } from '../../providers/provisioning.js';
import type { Storage } from '../../storage/database.js';
import { recordWithFiles, type FileStore } from '../../storage/files.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { findEndUserByLegacyOnboardingToken, findEndUserByOnboardingLink, markOnboardingCompleted, replaceOnboardingLink, type OnboardingLinks } from './onboarding.js';
import { assertWithinStorageQuota, insertStoredDocuments, storedDocumentRow } from '../documents/index.js';
import { checkFile, type CheckedFile } from '../documents/index.js';
import type { RegisteredEndUser } from '../../providers/kyc.js';
import type { AnnouncedAnswers } from '../../providers/sandbox/timers.js';
import { isCalendarDate } from './calendar-date.js';
import { presentEndUser } from './presenter.js';
import { findEndUser, insertEndUser, listEndUsers, pageOfEndUsers, updateEndUser, type EndUserRow, type EndUserSearch } from './repository.js';
import type { CreateBusinessInput, CreateIndividualInput, EndUserRecord, UpdateEndUserInput } from './schemas.js';

const riskTierByRating: Record<string, string> = { LOW: 'low_risk', MEDIUM: 'medium_risk', HIGH: 'high_risk' };
const defaultRiskTier = 'low_risk';
const defaultDisclosureVersion = '1.0';
const defaultBusinessType = 'LIMITED_COMPANY';
const defaultSector = 'OTHER_PRODUCTS_SERVICES';
/** PATCH fields that describe a person; a business end user has none of them. */
const individualOnlyFields = ['firstName', 'middleName', 'lastName', 'dob', 'birthCountry', 'nationality'] as const;

interface ReportUpload {
  field: string;
  documentType: 'kyc_report' | 'kyb_report' | 'provider_report';
  base64: string | undefined;
  fileName: string | undefined;
}

interface CheckedReport {
  documentType: ReportUpload['documentType'];
  file: CheckedFile;
}

function referenceCode(): string {
  return `EU-${randomBytes(endUserReferenceRandomBytes).toString('hex').toUpperCase()}`;
}

function json(value: unknown): string {
  return JSON.stringify(value ?? null);
}

/** Dates the schema's pattern lets through but the calendar does not (2023-02-30), and birthdays to come. */
function dateErrors(dates: Array<[string, string | undefined]>, today: string, pastOnly: Set<string>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [path, value] of dates) {
    if (value === undefined) continue;
    if (!isCalendarDate(value)) errors.push({ location: 'body', path, reason: 'must be a real calendar date' });
    else if (pastOnly.has(path) && value > today) errors.push({ location: 'body', path, reason: 'must not be in the future' });
  }
  return errors;
}

export class EndUserService {
  constructor(
    private readonly storage: Storage,
    private readonly provisioning: Provisioning,
    private readonly files: FileStore,
    private readonly clock: Clock,
    private readonly onboardingLinks: OnboardingLinks,
    /** Where a decision the provider announced at registration waits until it is due (the sandbox's timers). */
    private readonly announcedDecisions: AnnouncedAnswers,
    private readonly storageQuotaBytes: number,
    /** Its reports' sync attempts are due in the customer's time (docs/test-clocks.md). */
    private readonly customerClocks: CustomerClocks,
  ) {}

  /**
   * The end user a hosted onboarding link opens (its token and secret, or a legacy link's token alone), whoever's it
   * is; undefined for a link that opens nothing. The page checks that it is still valid (docs/end-users.md).
   */
  async findByOnboardingLink(token: string, secret: string | undefined): Promise<EndUserRow | undefined> {
    return secret === undefined ? findEndUserByLegacyOnboardingToken(this.storage.db, token) : findEndUserByOnboardingLink(this.storage.db, token, secret);
  }

  /** The person is done on the hosted page: from now on its link opens nothing. */
  async completeOnboarding(endUserId: string): Promise<void> {
    await markOnboardingCompleted(this.storage.db, endUserId, this.clock.now());
  }

  /**
   * A new hosted onboarding link for one of the caller's hosted_kyc end users (the old one opens nothing after);
   * 404 for an end user without a hosted page, as GET /end-users/{id}/onboarding-link answers.
   */
  async renewOnboardingLink(caller: AuthenticatedKey, id: string): Promise<EndUserRow> {
    const row = await this.require(caller, id);
    if (row.verification_method !== 'hosted_kyc') throw notFound('hosted onboarding page');
    await replaceOnboardingLink(this.storage.db, row.id, this.onboardingLinks.columns(row.id, 'hosted_kyc', undefined, this.clock.now()));
    return this.require(caller, id);
  }

  /** `onCreated` runs in the transaction that writes the end user (an Idempotency-Key's answer is stored there). */
  async createIndividual(caller: AuthenticatedKey, input: CreateIndividualInput, onCreated?: OnCreated<EndUserRecord>): Promise<EndUserRecord> {
    const today = this.clock.now().toISOString().slice(0, 10);
    const errors = dateErrors(
      [
        ['/dob', input.dob],
        ['/identificationDocument/issueDate', input.identificationDocument?.issueDate],
        ['/identificationDocument/expiryDate', input.identificationDocument?.expiryDate],
      ],
      today,
      new Set(['/dob', '/identificationDocument/issueDate']),
    );
    const reports = this.checkReports(
      [
        { field: '/kycReportBase64', documentType: 'kyc_report', base64: input.kycReportBase64, fileName: input.kycReportFilename },
        { field: '/providerReportBase64', documentType: 'provider_report', base64: input.providerReportBase64, fileName: input.providerReportFilename },
      ],
      errors,
    );
    if (errors.length > 0) throw validationError(errors);

    // Known before the row is built: the hosted onboarding link's secret is derived from it.
    const id = newId();
    const attestation = input.reverseSolicitationAttestation;
    return this.create(caller, 'INDIVIDUAL', input.lastName, {
      id,
      first_name: input.firstName,
      middle_name: input.middleName ?? null,
      last_name: input.lastName,
      email: input.email,
      dob: input.dob,
      phone: input.phone ?? null,
      birth_country: input.birthCountry ?? null,
      nationality: input.nationality ?? null,
      ip_address: input.ipAddress ?? null,
      annual_salary_range: input.annualSalaryRange ?? null,
      risk_rating: input.riskRating ?? null,
      risk_tier: input.riskRating ? (riskTierByRating[input.riskRating] ?? defaultRiskTier) : defaultRiskTier,
      verification_method: input.verificationMethod ?? null,
      address: json(input.address),
      identification_document: input.identificationDocument ? json(input.identificationDocument) : null,
      // An attestation means the customer relies on reverse solicitation for this person (docs/end-users.md).
      reverse_solicitation_required: attestation ? 1 : 0,
      reverse_solicitation_accepted: attestation?.accepted ? 1 : 0,
      reverse_solicitation_attestation: attestation ? json(attestation) : null,
      disclosure_accepted_at: attestation?.accepted ? (attestation.acceptedAt ?? this.clock.now().toISOString()) : null,
      disclosure_version: attestation?.accepted ? (attestation.disclosureVersion ?? defaultDisclosureVersion) : null,
      ...this.commonColumns(input),
      ...this.onboardingLinks.columns(id, input.verificationMethod, input.onboarding_url_token, this.clock.now()),
    }, reports, onCreated);
  }

  async createBusiness(caller: AuthenticatedKey, input: CreateBusinessInput, onCreated?: OnCreated<EndUserRecord>): Promise<EndUserRecord> {
    const today = this.clock.now().toISOString().slice(0, 10);
    const dates: Array<[string, string | undefined]> = [['/business/registrationDate', input.business.registrationDate]];
    input.businessPersons.forEach((entry, index) => dates.push([`/businessPersons/${index}/person/dob`, entry.person.dob]));
    const errors = dateErrors(dates, today, new Set(dates.map(([path]) => path)));
    // Ownership is a share of one company: its persons cannot own more than all of it together.
    const owned = input.businessPersons.reduce((sum, entry) => sum + (entry.ownership ?? 0), 0);
    if (owned > ownershipPercentMax) {
      errors.push({ location: 'body', path: '/businessPersons', reason: `ownership adds up to ${owned}; the persons of a business own at most 100 % together` });
    }
    const reports = this.checkReports(
      [
        { field: '/kybReportBase64', documentType: 'kyb_report', base64: input.kybReportBase64, fileName: input.kybReportFilename },
        { field: '/providerReportBase64', documentType: 'provider_report', base64: input.providerReportBase64, fileName: input.providerReportFilename },
      ],
      errors,
    );
    if (errors.length > 0) throw validationError(errors);

    const { business } = input;
    return this.create(caller, 'BUSINESS', business.companyName, {
      company_name: business.companyName,
      email: business.email,
      phone: business.phone ?? null,
      ip_address: input.ipAddress ?? null,
      registration_number: business.registrationNumber,
      registration_date: business.registrationDate,
      business_type: business.businessType ?? defaultBusinessType,
      incorporation_country: business.incorporationCountry,
      sector: input.sector ?? defaultSector,
      risk_tier: defaultRiskTier,
      address: json(business.registeredAddress),
      business: json(business),
      business_persons: json(input.businessPersons),
      ...this.commonColumns(input),
    }, reports, onCreated);
  }

  async list(caller: AuthenticatedKey): Promise<EndUserRecord[]> {
    return (await listEndUsers(this.storage.db, caller.customerId)).map((row) => presentEndUser(row, caller.frOwnerBusinessId));
  }

  /**
   * A page of the caller's end users as stored, newest first, that match the search (the dashboard's list: it also
   * shows what the record leaves out), with the API's pagination figures.
   */
  async pageOfRows(caller: AuthenticatedKey, search: EndUserSearch, page: number, limit: number): Promise<{ rows: EndUserRow[]; pagination: { page: number; limit: number; total: number } }> {
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await pageOfEndUsers(this.storage.db, this.storage.dialect, caller.customerId, search, (page - 1) * size, size);
    return { rows, pagination: { page, limit: size, total: Number(total) } };
  }

  async get(caller: AuthenticatedKey, id: string): Promise<EndUserRecord> {
    return presentEndUser(await this.require(caller, id), caller.frOwnerBusinessId);
  }

  async update(caller: AuthenticatedKey, id: string, input: UpdateEndUserInput): Promise<EndUserRecord> {
    const existing = await this.require(caller, id);
    const errors: FieldError[] = [];
    if (existing.end_user_type === 'BUSINESS') {
      for (const field of individualOnlyFields) {
        if (input[field] !== undefined) errors.push({ location: 'body', path: `/${field}`, reason: 'applies to individual end users only' });
      }
    }
    const today = this.clock.now().toISOString().slice(0, 10);
    errors.push(...dateErrors([['/dob', input.dob]], today, new Set(['/dob'])));
    if (errors.length > 0) throw validationError(errors);

    const wanted: Partial<EndUserRow> = {};
    if (input.firstName !== undefined) wanted.first_name = input.firstName;
    if (input.middleName !== undefined) wanted.middle_name = input.middleName;
    if (input.lastName !== undefined) wanted.last_name = input.lastName;
    if (input.email !== undefined) wanted.email = input.email;
    if (input.dob !== undefined) wanted.dob = input.dob;
    if (input.phone !== undefined) wanted.phone = input.phone;
    if (input.birthCountry !== undefined) wanted.birth_country = input.birthCountry;
    if (input.nationality !== undefined) wanted.nationality = input.nationality;
    if (input.ipAddress !== undefined) wanted.ip_address = input.ipAddress;
    if (input.tags !== undefined) wanted.tags = json(input.tags);
    if (input.signupAt !== undefined) wanted.signup_at = input.signupAt;
    if (input.metadata !== undefined) wanted.metadata = json(input.metadata);
    if (input.linkedCryptoWallets !== undefined) wanted.linked_crypto_wallets = json(input.linkedCryptoWallets);
    // A PATCH that changes nothing (`{}`, or the values the record has) is a no-op: updated_at stays what it was.
    const changes = Object.fromEntries(Object.entries(wanted).filter(([column, value]) => existing[column as keyof EndUserRow] !== value)) as Partial<EndUserRow>;
    if (Object.keys(changes).length === 0) return presentEndUser(existing, caller.frOwnerBusinessId);
    changes.updated_at = this.clock.now().toISOString();
    await updateEndUser(this.storage.db, caller.customerId, existing.id, changes);
    return presentEndUser({ ...existing, ...changes }, caller.frOwnerBusinessId);
  }

  /** The caller's end user or 404, for this module and the ones that reference end users. */
  async require(caller: AuthenticatedKey, id: string): Promise<EndUserRow> {
    const row = await findEndUser(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('end user');
    return row;
  }

  private commonColumns(input: CreateIndividualInput | CreateBusinessInput): Partial<EndUserRow> {
    return {
      tags: json(input.tags ?? []),
      metadata: json(input.metadata ?? {}),
      linked_crypto_wallets: json(input.linkedCryptoWallets ?? []),
      signup_at: input.signupAt ?? null,
      umbrella_link_id: input.umbrellaLinkId?.toLowerCase() ?? null,
      onboarding_url_token: input.onboarding_url_token ?? null,
    };
  }

  /** Reports pass the checks of any uploaded file (documents/upload.ts); problems are appended to `errors`. */
  private checkReports(uploads: ReportUpload[], errors: FieldError[]): CheckedReport[] {
    const checked: CheckedReport[] = [];
    for (const upload of uploads) {
      if (upload.base64 === undefined) continue;
      const file = checkFile(
        {
          path: upload.field,
          base64: upload.base64,
          fileNamePath: upload.field.replace(/Base64$/, 'Filename'),
          ...(upload.fileName === undefined ? {} : { fileName: upload.fileName }),
          defaultName: upload.documentType.replace('_', '-'),
          sizeMaxBytes: reportSizeMaxBytes,
        },
        errors,
      );
      if (file) checked.push({ documentType: upload.documentType, file });
    }
    return checked;
  }

  /** The row of a new end user the provider has registered. */
  private newRow(caller: AuthenticatedKey, type: EndUserRow['end_user_type'], registered: RegisteredEndUser, columns: Partial<EndUserRow>): EndUserRow {
    const now = this.clock.now();
    const empty: EndUserRow = {
      id: columns.id ?? newId(),
      customer_id: caller.customerId,
      fr_end_user_id: registered.frEndUserId,
      end_user_type: type,
      status: 'pending_verification',
      reference_code: referenceCode(),
      first_name: null,
      middle_name: null,
      last_name: null,
      company_name: null,
      email: '',
      dob: null,
      phone: null,
      birth_country: null,
      nationality: null,
      ip_address: null,
      annual_salary_range: null,
      risk_rating: null,
      risk_tier: defaultRiskTier,
      verification_method: null,
      signup_at: null,
      umbrella_link_id: null,
      onboarding_url_token: null,
      onboarding_token_hash: null,
      onboarding_secret_hash: null,
      onboarding_expires_at: null,
      onboarding_completed_at: null,
      registration_number: null,
      registration_date: null,
      business_type: null,
      incorporation_country: null,
      sector: null,
      disclosure_accepted_at: null,
      disclosure_version: null,
      reverse_solicitation_required: 0,
      reverse_solicitation_accepted: 0,
      reverse_solicitation_attestation: null,
      verification_completed_at: null,
      verification_reason: null,
      address: null,
      identification_document: null,
      tags: '[]',
      metadata: '{}',
      linked_crypto_wallets: '[]',
      business: null,
      business_persons: null,
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    };
    return { ...empty, ...columns };
  }

  /**
   * Everything has been checked: the quota allows the reports, the provider registers the end user (undoably, see
   * providers/provisioning.ts), and the end user, its report documents and its event land in one transaction that
   * leaves no report file behind if it fails.
   */
  private async create(
    caller: AuthenticatedKey,
    type: EndUserRow['end_user_type'],
    name: string,
    columns: Partial<EndUserRow>,
    reports: CheckedReport[],
    onCreated: OnCreated<EndUserRecord> | undefined,
  ): Promise<EndUserRecord> {
    const reportBytes = reports.reduce((sum, report) => sum + report.file.bytes.length, 0);
    if (reports.length > 0) await assertWithinStorageQuota(this.storage.db, caller.customerId, reportBytes, this.storageQuotaBytes);
    const request = { ownerBusinessId: caller.frOwnerBusinessId, endUserType: type, name };
    return this.provisioning.create(caller.customerId, 'register_end_user', request, async (registered, markDone) => {
      const row = this.newRow(caller, type, registered, columns);
      const record = presentEndUser(row, caller.frOwnerBusinessId);
      const contents = reports.map((report) => report.file.bytes);
      // A hosted_kyc end user is decided on the hosted page (or by the simulation endpoint), not by the clock.
      const { upcomingDecision: decision } = registered;
      const announced = decision !== undefined && row.verification_method !== 'hosted_kyc' ? { decision, write: await this.announcedDecisions(caller.customerId) } : undefined;
      const firstSync = await customerTimeOf(this.customerClocks, this.clock, caller.customerId);
      await recordWithFiles(this.storage, this.files, caller.customerId, contents, async (trx, storagePaths) => {
        await insertEndUser(trx, row);
        if (announced) await announced.write(trx, row.id, announced.decision);
        const documents = reports.map((report, index) =>
          storedDocumentRow({
            customerId: caller.customerId,
            endUserId: row.id,
            documentType: report.documentType,
            file: report.file,
            storagePath: storagePaths[index]!,
            now: this.clock.now(),
            firstSync,
          }),
        );
        await insertStoredDocuments(trx, caller.customerId, documents, this.storageQuotaBytes);
        await appendEvent(trx, { customerId: caller.customerId, type: 'end_user.created', data: record, createdAt: this.clock.now() });
        await markDone(trx);
        await onCreated?.(trx, record);
      });
      return record;
    });
  }
}
