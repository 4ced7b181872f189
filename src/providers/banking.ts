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

export interface BankingProvider {
  openAccount(request: OpenAccountRequest): Promise<OpenedAccount>;
}
