import { pageLimitMax } from '../../config/limits.js';
import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { notFound, validationError, type FieldError } from '../../errors.js';
import { appendEvent } from '../../events/outbox.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import type { Provisioning } from '../../providers/provisioning.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import type { EndUserService } from '../end-users/index.js';
import { resolveBankDetails } from './bank-details.js';
import { presentPayee, type StoredBankDetails } from './presenter.js';
import { findPayee, insertPayee, listPayees, pageOfPayees, type PayeeRow, type PayeeSearch } from './repository.js';
import type { CreatePayeeInput, PayeeBankDetailsInput, PayeeRecord } from './schemas.js';

/** Optional free text: an empty string (what web forms send for an empty input) is the same as no value. */
function text(value: string | undefined): string | null {
  return value === undefined || value === '' ? null : value;
}

/** The bank and intermediary-bank details the docs/spec.md §2 record has no column for, kept for the rails that use them. */
function storedBankDetails(details: PayeeBankDetailsInput): StoredBankDetails {
  const stored: StoredBankDetails = {};
  const copy = (key: keyof StoredBankDetails, value: string | null) => {
    if (value !== null) stored[key] = value;
  };
  copy('bankAddressLine1', text(details.bankAddressLine1));
  copy('bankAddressCity', text(details.bankAddressCity));
  copy('bankAddressPostalCode', text(details.bankAddressPostalCode));
  copy('bankAddressCountry', text(details.bankAddressCountry));
  copy('intermediaryBicSwift', text(details.intermediaryBicSwift?.toUpperCase()));
  copy('intermediaryBankName', text(details.intermediaryBankName));
  copy('intermediaryBankAddressLine1', text(details.intermediaryBankAddressLine1));
  copy('intermediaryBankAddressCity', text(details.intermediaryBankAddressCity));
  copy('intermediaryBankAddressPostalCode', text(details.intermediaryBankAddressPostalCode));
  copy('intermediaryBankAddressCountry', text(details.intermediaryBankAddressCountry));
  return stored;
}

export class PayeeService {
  constructor(
    private readonly storage: Storage,
    private readonly provisioning: Provisioning,
    private readonly clock: Clock,
    private readonly endUsers: EndUserService,
  ) {}

  /** `onCreated` runs in the transaction that writes the payee (an Idempotency-Key's answer is stored there). */
  async create(caller: AuthenticatedKey, input: CreatePayeeInput, onCreated?: OnCreated<PayeeRecord>): Promise<PayeeRecord> {
    const errors: FieldError[] = [];
    // The schema counts characters; a name of spaces alone would reach the rails as no name at all.
    if (input.name.trim() === '') errors.push({ location: 'body', path: '/name', reason: 'must not be blank' });
    if (input.bankDetails.accountHolderName !== undefined && input.bankDetails.accountHolderName.trim() === '') {
      errors.push({ location: 'body', path: '/bankDetails/accountHolderName', reason: 'must not be blank' });
    }
    const bank = resolveBankDetails(input.bankDetails, input.currency);
    errors.push(...bank.errors);
    if (errors.length > 0 || bank.resolved === null) throw validationError(errors);
    const details = bank.resolved;

    // Another customer's end user answers 404 exactly like an unknown id.
    const endUser = input.endUserId === undefined ? null : await this.endUsers.require(caller, input.endUserId);

    // The provider is called outside any database transaction, undoably (providers/provisioning.ts); the row and its
    // event land together.
    const request = { ownerBusinessId: caller.frOwnerBusinessId, payeeName: input.name, currency: details.currency };
    return this.provisioning.create(caller.customerId, 'register_payee', request, async (registered, markDone) => {
      const now = this.clock.now().toISOString();
      const row: PayeeRow = {
        id: newId(),
        customer_id: caller.customerId,
        end_user_id: endUser?.id ?? null,
        fr_payee_id: registered.frPayeeId,
        payee_name: input.name,
        currency: details.currency,
        status: 'active',
        iban: details.iban,
        swift: details.bic,
        account_number: details.accountNumber,
        sort_code: details.sortCode,
        routing_number: details.routingNumber,
        account_holder_name: input.bankDetails.accountHolderName ?? null,
        bank_name: text(input.bankDetails.bankName),
        address_line1: input.address.line1,
        address_line2: text(input.address.line2),
        city: input.address.city,
        state_region: text(input.address.stateRegion),
        postal_code: text(input.address.postalCode),
        country_code: input.address.country,
        requires_vop: details.requiresVop ? 1 : 0,
        umbrella_link_id: input.umbrellaLinkId?.toLowerCase() ?? null,
        bank_details: JSON.stringify(storedBankDetails(input.bankDetails)),
        created_at: now,
        updated_at: now,
      };
      const record = presentPayee(row, caller.frOwnerBusinessId);
      await this.storage.transaction(async (trx) => {
        await insertPayee(trx, row);
        await appendEvent(trx, { customerId: caller.customerId, type: 'payee.created', data: record, createdAt: this.clock.now() });
        await markDone(trx);
        await onCreated?.(trx, record);
      });
      return record;
    });
  }

  async list(caller: AuthenticatedKey): Promise<PayeeRecord[]> {
    const rows = await listPayees(this.storage.db, caller.customerId);
    return rows.map((row) => presentPayee(row, caller.frOwnerBusinessId));
  }

  /** A page of the caller's payees, newest first, that match the search (the dashboard's list), with the API's pagination figures. */
  async page(caller: AuthenticatedKey, search: PayeeSearch, page: number, limit: number): Promise<{ data: PayeeRecord[]; pagination: { page: number; limit: number; total: number } }> {
    const size = Math.min(limit, pageLimitMax);
    const { rows, total } = await pageOfPayees(this.storage.db, this.storage.dialect, caller.customerId, search, (page - 1) * size, size);
    return { data: rows.map((row) => presentPayee(row, caller.frOwnerBusinessId)), pagination: { page, limit: size, total: Number(total) } };
  }

  async get(caller: AuthenticatedKey, id: string): Promise<PayeeRecord> {
    const row = await findPayee(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('payee');
    return presentPayee(row, caller.frOwnerBusinessId);
  }
}
