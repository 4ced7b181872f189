import type { BankingProvider } from './banking.js';
import { SandboxBankingProvider } from './sandbox/banking.js';

/** Every foreign system the service talks to, behind its interface (DESIGN §4). */
export type { FiatCurrency, IbanCountry } from './banking.js';

export interface Providers {
  banking: BankingProvider;
}

export function sandboxProviders(): Providers {
  return { banking: new SandboxBankingProvider() };
}
