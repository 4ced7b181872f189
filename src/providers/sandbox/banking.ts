import type {
  BankingProvider,
  OpenAccountRequest,
  OpenedAccount,
  OpenedVirtualAccount,
  OpenVirtualAccountRequest,
  RegisterPayeeRequest,
} from '../banking.js';
import { providerId } from '../provider-ids.js';
import { domesticAccountNumber, randomDigits, sandboxBic, sandboxIban, sandboxRoutingNumber, sandboxSortCode } from './bank-details.js';

const usAccountNumberDigits = 12;
export const sandboxBankName = 'Sandbox Bank';

/**
 * The simulated bank. Every account gets an IBAN in the requested country; GBP accounts are also reachable by
 * sort code and account number, USD accounts by routing and account number (docs/decisions/0002-fiat-account-details.md).
 */
export class SandboxBankingProvider implements BankingProvider {
  async openAccount(request: OpenAccountRequest): Promise<OpenedAccount> {
    const domestic = domesticAccountNumber(request.ibanCountry);
    const iban = sandboxIban(request.ibanCountry, domestic);
    const base = { frAccountId: providerId('facc'), iban, bic: sandboxBic(request.ibanCountry) };
    switch (request.currency) {
      case 'GBP':
        // A GB IBAN already embeds sort code and account number; elsewhere the UK details are separate.
        return {
          ...base,
          accountNumber: request.ibanCountry === 'GB' ? domestic : randomDigits(8),
          sortCode: sandboxSortCode,
          routingNumber: null,
        };
      case 'USD':
        return { ...base, accountNumber: randomDigits(usAccountNumberDigits), sortCode: null, routingNumber: sandboxRoutingNumber };
      case 'EUR':
        return { ...base, accountNumber: domestic, sortCode: null, routingNumber: null };
    }
  }

  async openVirtualAccount(request: OpenVirtualAccountRequest): Promise<OpenedVirtualAccount> {
    const domestic = domesticAccountNumber(request.ibanCountry);
    const isGbp = request.currency === 'GBP';
    return {
      frVirtualAccountId: providerId('vacc'),
      iban: sandboxIban(request.ibanCountry, domestic),
      bic: sandboxBic(request.ibanCountry),
      bankName: sandboxBankName,
      accountHolderName: request.accountHolderName,
      bankCountry: request.ibanCountry,
      accountNumber: isGbp && request.ibanCountry !== 'GB' ? randomDigits(8) : domestic,
      sortCode: isGbp ? sandboxSortCode : null,
    };
  }

  async registerPayee(_request: RegisterPayeeRequest): Promise<{ frPayeeId: string }> {
    return { frPayeeId: providerId('pay') };
  }
}
