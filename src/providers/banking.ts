import type { FiatCurrency } from '../ledger/assets.js';

/** The banking side of the provider behind the `fr_*` ids (docs/architecture.md, Layers): the sandbox simulates it. */

export type IbanCountry = 'DE' | 'DK' | 'GB' | 'LU';

export interface OpenAccountRequest {
  ownerBusinessId: string;
  accountName: string;
  currency: FiatCurrency;
  ibanCountry: IbanCountry;
}

export interface OpenedAccount {
  frAccountId: string;
  iban: string;
  bic: string;
  accountNumber: string;
  /** UK sort code, for GBP accounts only. */
  sortCode: string | null;
  /** US ABA routing number, for USD accounts only. */
  routingNumber: string | null;
}

export interface OpenVirtualAccountRequest {
  ownerBusinessId: string;
  masterFrAccountId: string;
  accountName: string;
  /** The name the account is held in: the end user's, or the customer's own accounts' name. */
  accountHolderName: string;
  currency: FiatCurrency;
  ibanCountry: IbanCountry;
}

export interface OpenedVirtualAccount {
  frVirtualAccountId: string;
  iban: string;
  bic: string;
  bankName: string;
  accountHolderName: string;
  bankCountry: IbanCountry;
  accountNumber: string;
  /** UK sort code, for GBP virtual accounts only. */
  sortCode: string | null;
}

export interface RegisterPayeeRequest {
  ownerBusinessId: string;
  payeeName: string;
  currency: FiatCurrency;
}

/**
 * What the bank decides later — a payment settled or failed, an account or payee's status changed — is not the
 * answer to a call: the adapter reports it as a provider event (providers/events.ts: `payment.*`,
 * `fiat_account.status_changed`, `virtual_account.status_changed`, `payee.status_changed`) into the inbox, from its
 * webhook route or a poller, and the resource's lifecycle applies it (docs/providers.md "Reporting outcomes").
 *
 * Calls that create an object take an idempotency key: a repeated call with the same key answers the same object
 * (providers/provisioning.ts relies on it to find, and undo, an object whose creation was not recorded). Each has
 * its undo, for when the row that would record the object cannot be written.
 */
export interface BankingProvider {
  openAccount(request: OpenAccountRequest, idempotencyKey: string): Promise<OpenedAccount>;
  closeAccount(frAccountId: string): Promise<void>;
  openVirtualAccount(request: OpenVirtualAccountRequest, idempotencyKey: string): Promise<OpenedVirtualAccount>;
  closeVirtualAccount(frVirtualAccountId: string): Promise<void>;
  registerPayee(request: RegisterPayeeRequest, idempotencyKey: string): Promise<{ frPayeeId: string }>;
  removePayee(frPayeeId: string): Promise<void>;
}
