import { newId } from '../../ids.js';
import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import { appendEvent } from '../../events/outbox.js';
import type { OnCreated } from '../../storage/idempotency-answers.js';
import type { FiatCurrency } from '../../ledger/assets.js';
import type { IbanCountry } from '../../providers/providers.js';
import type { Provisioning } from '../../providers/provisioning.js';
import type { Storage } from '../../storage/database.js';
import type { AuthenticatedKey } from '../api-keys/index.js';
import { findCustomerById } from '../customers/index.js';
import type { EndUserService } from '../end-users/index.js';
import { findCustomerFiatAccount, type FiatAccountRow } from '../fiat-accounts/index.js';
import { ibanCountries } from '../fiat-accounts/index.js';
import { accountHolderName } from './holder-name.js';
import { presentVirtualAccount } from '../accounts/index.js';
import { findVirtualAccount, insertVirtualAccount, listVirtualAccounts, pageOfVirtualAccounts, virtualAccountsWithIds, type VirtualAccountRow } from './repository.js';
import type { CreateVirtualAccountInput, VirtualAccountRecord } from './schemas.js';

/**
 * docs/spec.md §4 leaves ibanCountry optional. A virtual IBAN is issued by the bank that holds the master account, so it
 * defaults to the country of the master's IBAN (docs/virtual-accounts.md).
 */
function defaultIbanCountry(master: FiatAccountRow): IbanCountry {
  const country = master.iban.slice(0, 2);
  if ((ibanCountries as readonly string[]).includes(country)) return country as IbanCountry;
  // Unreachable while masters are opened with one of the same four countries; kept so a new one cannot crash here.
  const byCurrency: Record<FiatCurrency, IbanCountry> = { EUR: 'DE', GBP: 'GB', USD: 'LU' };
  return byCurrency[master.currency as FiatCurrency];
}

export class VirtualAccountService {
  constructor(
    private readonly storage: Storage,
    private readonly provisioning: Provisioning,
    private readonly clock: Clock,
    private readonly endUsers: EndUserService,
  ) {}

  /**
   * Checks run in a fixed order and the first failure answers (docs/virtual-accounts.md): the master account
   * exists for this caller (404), the end user exists for this caller (404), the master is a master (422
   * ACCOUNT_NOT_MASTER), the currencies agree (422 CURRENCY_MISMATCH), the master is not closed (422
   * ACCOUNT_NOT_ACTIVE: it could never receive money). Every "is it yours" check comes before
   * any rule about the account, so another customer's account answers 404 whatever its type or currency.
   */
  /** `onCreated` runs in the transaction that writes the account (an Idempotency-Key's answer is stored there). */
  async create(caller: AuthenticatedKey, input: CreateVirtualAccountInput, onCreated?: OnCreated<VirtualAccountRecord>): Promise<VirtualAccountRecord> {
    const master = await findCustomerFiatAccount(this.storage, caller.customerId, input.masterFiatAccountId.toLowerCase());
    if (!master) throw notFound('fiat account');
    const endUser = input.endUserId === undefined ? undefined : await this.endUsers.require(caller, input.endUserId);
    if (!master.is_master) {
      throw new DomainError('ACCOUNT_NOT_MASTER', 'masterFiatAccountId must be a master fiat account (is_master true).', {
        masterFiatAccountId: master.id,
      });
    }
    if (master.currency !== input.currency) {
      throw new DomainError('CURRENCY_MISMATCH', `currency must equal the master account's currency ${master.currency}.`, {
        currency: input.currency,
        master_currency: master.currency,
      });
    }
    if (master.status === 'closed') {
      throw new DomainError('ACCOUNT_NOT_ACTIVE', 'The master fiat account is closed: a virtual account under it could never receive money.', {
        account_id: master.id,
        status: master.status,
      });
    }
    const customer = await findCustomerById(this.storage.db, caller.customerId);
    if (!customer) throw notFound('customer');

    // The provider is called outside any database transaction, undoably (providers/provisioning.ts); the row and its
    // event land together.
    const request = {
      ownerBusinessId: caller.frOwnerBusinessId,
      masterFrAccountId: master.fr_account_id,
      accountName: input.accountName,
      accountHolderName: accountHolderName(endUser, customer.name),
      currency: input.currency,
      ibanCountry: input.ibanCountry ?? defaultIbanCountry(master),
    };
    return this.provisioning.create(caller.customerId, 'open_virtual_account', request, async (opened, markDone) => {
      const now = this.clock.now().toISOString();
      const row: VirtualAccountRow = {
        id: newId(),
        customer_id: caller.customerId,
        master_fiat_account_id: master.id,
        end_user_id: endUser?.id ?? null,
        fr_virtual_account_id: opened.frVirtualAccountId,
        account_name: input.accountName,
        currency: input.currency,
        status: 'active',
        // Money arrives through the ledger only; a new virtual account holds nothing of its master's yet.
        balance_minor: 0n,
        iban: opened.iban,
        bic: opened.bic,
        bank_name: opened.bankName,
        account_holder_name: opened.accountHolderName,
        bank_country: opened.bankCountry,
        account_number: opened.accountNumber,
        sort_code: opened.sortCode,
        umbrella_link_id: input.umbrellaLinkId?.toLowerCase() ?? null,
        created_at: now,
        updated_at: now,
      };
      const record = presentVirtualAccount(row, caller.frOwnerBusinessId);
      await this.storage.transaction(async (trx) => {
        await insertVirtualAccount(trx, row);
        await appendEvent(trx, { customerId: caller.customerId, type: 'virtual_account.created', data: record, createdAt: this.clock.now() });
        await markDone(trx);
        await onCreated?.(trx, record);
      });
      return record;
    });
  }

  async list(caller: AuthenticatedKey): Promise<VirtualAccountRecord[]> {
    const rows = await listVirtualAccounts(this.storage.db, caller.customerId);
    return rows.map((row) => presentVirtualAccount(row, caller.frOwnerBusinessId));
  }

  /** A page of the caller's virtual accounts, newest first, with the API's pagination figures (the dashboard's list). */
  async page(caller: AuthenticatedKey, page: number, limit: number): Promise<{ data: VirtualAccountRecord[]; pagination: { page: number; limit: number; total: number } }> {
    const { rows, total } = await pageOfVirtualAccounts(this.storage.db, caller.customerId, (page - 1) * limit, limit);
    return { data: rows.map((row) => presentVirtualAccount(row, caller.frOwnerBusinessId)), pagination: { page, limit, total: Number(total) } };
  }

  /** The caller's virtual accounts among these ids, in no order: the dashboard names the accounts a page shows. */
  async withIds(caller: AuthenticatedKey, ids: readonly string[]): Promise<VirtualAccountRecord[]> {
    const rows = await virtualAccountsWithIds(this.storage.db, caller.customerId, ids.map((id) => id.toLowerCase()));
    return rows.map((row) => presentVirtualAccount(row, caller.frOwnerBusinessId));
  }

  async get(caller: AuthenticatedKey, id: string): Promise<VirtualAccountRecord> {
    const row = await findVirtualAccount(this.storage.db, caller.customerId, id.toLowerCase());
    if (!row) throw notFound('virtual account');
    return presentVirtualAccount(row, caller.frOwnerBusinessId);
  }
}
