import type {
  BankingProvider,
  OpenAccountRequest,
  OpenedAccount,
  OpenedVirtualAccount,
  OpenVirtualAccountRequest,
  RegisterPayeeRequest,
} from '../banking.js';
import { providerId } from '../provider-ids.js';
import { domesticAccountDigits, sandboxBic, sandboxIban, sandboxRoutingNumber, sandboxSortCode } from './bank-details.js';
import { DerivedRandom } from './derived-random.js';

const usAccountNumberDigits = 12;
const ukAccountNumberDigits = 8;
const sandboxBankName = 'Sandbox Bank';

/**
 * The simulated bank. Every account gets an IBAN in the requested country; GBP accounts are also reachable by
 * sort code and account number, USD accounts by routing and account number (docs/decisions/0002-fiat-account-details.md).
 * Ids and numbers are derived from the idempotency key, so a repeated call answers the same object; closing and
 * removing have nothing to undo in a simulation that keeps no state.
 */
export class SandboxBankingProvider implements BankingProvider {
  async openAccount(request: OpenAccountRequest, idempotencyKey: string): Promise<OpenedAccount> {
    const random = new DerivedRandom(idempotencyKey);
    const frAccountId = providerId('facc', random.hex(12));
    const domestic = random.digits(domesticAccountDigits[request.ibanCountry]);
    const base = { frAccountId, iban: sandboxIban(request.ibanCountry, domestic), bic: sandboxBic(request.ibanCountry) };
    switch (request.currency) {
      case 'GBP':
        // A GB IBAN already embeds sort code and account number; elsewhere the UK details are separate.
        return {
          ...base,
          accountNumber: request.ibanCountry === 'GB' ? domestic : random.digits(ukAccountNumberDigits),
          sortCode: sandboxSortCode,
          routingNumber: null,
        };
      case 'USD':
        return { ...base, accountNumber: random.digits(usAccountNumberDigits), sortCode: null, routingNumber: sandboxRoutingNumber };
      case 'EUR':
        return { ...base, accountNumber: domestic, sortCode: null, routingNumber: null };
    }
  }

  async closeAccount(): Promise<void> {}

  async openVirtualAccount(request: OpenVirtualAccountRequest, idempotencyKey: string): Promise<OpenedVirtualAccount> {
    const random = new DerivedRandom(idempotencyKey);
    const frVirtualAccountId = providerId('vacc', random.hex(12));
    const domestic = random.digits(domesticAccountDigits[request.ibanCountry]);
    const isGbp = request.currency === 'GBP';
    return {
      frVirtualAccountId,
      iban: sandboxIban(request.ibanCountry, domestic),
      bic: sandboxBic(request.ibanCountry),
      bankName: sandboxBankName,
      accountHolderName: request.accountHolderName,
      bankCountry: request.ibanCountry,
      accountNumber: isGbp && request.ibanCountry !== 'GB' ? random.digits(ukAccountNumberDigits) : domestic,
      sortCode: isGbp ? sandboxSortCode : null,
    };
  }

  async closeVirtualAccount(): Promise<void> {}

  async registerPayee(_request: RegisterPayeeRequest, idempotencyKey: string): Promise<{ frPayeeId: string }> {
    return { frPayeeId: providerId('pay', new DerivedRandom(idempotencyKey).hex(12)) };
  }

  async removePayee(): Promise<void> {}
}
