/** The banking side of the provider behind the `fr_*` ids (DESIGN §4): the sandbox simulates it. */

export type FiatCurrency = 'USD' | 'EUR' | 'GBP';
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

export interface BankingProvider {
  openAccount(request: OpenAccountRequest): Promise<OpenedAccount>;
  openVirtualAccount(request: OpenVirtualAccountRequest): Promise<OpenedVirtualAccount>;
  registerPayee(request: RegisterPayeeRequest): Promise<{ frPayeeId: string }>;
}
