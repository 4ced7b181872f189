import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import { appendEvent } from '../../events/outbox.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { IbanCountry } from '../../providers/providers.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import type { Provisioning } from '../../providers/provisioning.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import type { EndUserService } from '../end-users/index.js';
import { presentFiatAccount } from '../accounts/index.js';
import { fiatAccountsWithIds, findFiatAccount, insertFiatAccount, listFiatAccounts, pageOfFiatAccounts, type FiatAccountRow } from './repository.js';
import type { CreateFiatAccountInput, FiatAccountRecord } from './schemas.js';

/** docs/spec.md §4 leaves ibanCountry optional; the default is the natural home of the currency (docs/decisions). */
const defaultIbanCountry: Record<FiatCurrency, IbanCountry> = { EUR: 'DE', GBP: 'GB', USD: 'LU' };

/**
 * The customer's fiat account as stored, or undefined (another customer's answers like an unknown one): what a
 * virtual account is opened inside is checked against it (its being a master, its currency and status).
 */
export async function findCustomerFiatAccount(storage: Storage, customerId: string, id: string): Promise<FiatAccountRow | undefined> {
  return findFiatAccount(storage.db, customerId, id);
}

export class FiatAccountService {
  constructor(
    private readonly storage: Storage,
    private readonly provisioning: Provisioning,
    private readonly clock: Clock,
    private readonly endUsers: EndUserService,
  ) {}

  /** `onCreated` runs in the transaction that writes the account (an Idempotency-Key's answer is stored there). */
  async create(caller: AuthenticatedKey, input: CreateFiatAccountInput, onCreated?: OnCreated<FiatAccountRecord>): Promise<FiatAccountRecord> {
    if (input.linkedBusinessId !== undefined) {
      // Another customer's end user answers 404 like an unknown one; an individual is refused as such.
      const linked = await this.endUsers.require(caller, input.linkedBusinessId);
      if (linked.end_user_type !== 'BUSINESS') {
        throw new DomainError('END_USER_NOT_BUSINESS', 'linkedBusinessId must be a business end user.', { linked_business_id: linked.id });
      }
    }
    // The provider is called outside any database transaction, undoably (providers/provisioning.ts); the row and its
    // event land together.
    const request = {
      ownerBusinessId: caller.frOwnerBusinessId,
      accountName: input.accountName,
      currency: input.currency,
      ibanCountry: input.ibanCountry ?? defaultIbanCountry[input.currency],
    };
    return this.provisioning.create(caller.customerId, 'open_account', request, async (opened, markDone) => {
      const now = this.clock.now().toISOString();
      const row: FiatAccountRow = {
        id: newId(),
        customer_id: caller.customerId,
        fr_account_id: opened.frAccountId,
        account_name: input.accountName,
        currency: input.currency,
        balance_minor: 0n,
        allocated_minor: 0n,
        status: 'active',
        // An account linked to a business end user belongs to that business; the others are the customer's masters.
        is_master: input.linkedBusinessId === undefined ? 1 : 0,
        linked_business_id: input.linkedBusinessId?.toLowerCase() ?? null,
        umbrella_link_id: input.umbrellaLinkId?.toLowerCase() ?? null,
        iban: opened.iban,
        bic: opened.bic,
        account_number: opened.accountNumber,
        sort_code: opened.sortCode,
        routing_number: opened.routingNumber,
        created_at: now,
        updated_at: now,
      };
      const record = presentFiatAccount(row, caller.frOwnerBusinessId);
      await this.storage.transaction(async (trx) => {
        await insertFiatAccount(trx, row);
        await appendEvent(trx, { customerId: caller.customerId, type: 'fiat_account.created', data: record, createdAt: this.clock.now() });
        await markDone(trx);
        await onCreated?.(trx, record);
      });
      return record;
    });
  }

  async list(caller: AuthenticatedKey): Promise<FiatAccountRecord[]> {
    const rows = await listFiatAccounts(this.storage.db, caller.customerId);
    return rows.map((row) => presentFiatAccount(row, caller.frOwnerBusinessId));
  }

  /** A page of the caller's fiat accounts, newest first, with the API's pagination figures (the dashboard's list). */
  async page(caller: AuthenticatedKey, page: number, limit: number): Promise<{ data: FiatAccountRecord[]; pagination: { page: number; limit: number; total: number } }> {
    const { rows, total } = await pageOfFiatAccounts(this.storage.db, caller.customerId, (page - 1) * limit, limit);
    return { data: rows.map((row) => presentFiatAccount(row, caller.frOwnerBusinessId)), pagination: { page, limit, total: Number(total) } };
  }

  /** The caller's fiat accounts among these ids, in no order: the dashboard names the accounts a page shows. */
  async withIds(caller: AuthenticatedKey, ids: readonly string[]): Promise<FiatAccountRecord[]> {
    const rows = await fiatAccountsWithIds(this.storage.db, caller.customerId, ids.map((id) => id.toLowerCase()));
    return rows.map((row) => presentFiatAccount(row, caller.frOwnerBusinessId));
  }

  async get(caller: AuthenticatedKey, id: string): Promise<FiatAccountRecord> {
    const row = await findFiatAccount(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('fiat account');
    return presentFiatAccount(row, caller.frOwnerBusinessId);
  }
}
