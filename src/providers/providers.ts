import { ConfigError, type Config } from '../config/config.js';
import type { BankingProvider } from './banking.js';
import type { CustodyProvider } from './custody.js';
import type { KycProvider } from './kyc.js';
import type { OtcPriceProvider } from './otc.js';
import { SandboxBankingProvider } from './sandbox/banking.js';
import { SandboxCustodyProvider } from './sandbox/custody.js';
import { SandboxKycProvider } from './sandbox/kyc.js';
import { SandboxOtcPriceProvider } from './sandbox/otc.js';

/** Every foreign system the service talks to, behind its interface (docs/architecture.md, Layers). */
export type { IbanCountry } from './banking.js';

export interface Providers {
  banking: BankingProvider;
  kyc: KycProvider;
  custody: CustodyProvider;
  otc: OtcPriceProvider;
}

export function sandboxProviders(): Providers {
  return { banking: new SandboxBankingProvider(), kyc: new SandboxKycProvider(), custody: new SandboxCustodyProvider(), otc: new SandboxOtcPriceProvider() };
}

/** The providers the configuration asks for; production has no real integration yet, so it refuses clearly. */
export function configuredProviders(config: Pick<Config, 'apiEnvironment'>): Providers {
  if (config.apiEnvironment === 'sandbox') return sandboxProviders();
  throw new ConfigError('API_ENVIRONMENT=production needs a real banking provider, and this build ships only the sandbox simulator');
}
