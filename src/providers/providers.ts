import type { Clock } from '../clock.js';
import { ConfigError, type Config } from '../config/config.js';
import type { BankingProvider } from './banking.js';
import type { CustodyProvider } from './custody.js';
import { HttpPaymentRail } from './http/payments.js';
import type { KycProvider } from './kyc.js';
import type { OtcPriceProvider } from './otc.js';
import type { PaymentRail } from './payments.js';
import { SandboxBankingProvider } from './sandbox/banking.js';
import { SandboxCustodyProvider } from './sandbox/custody.js';
import { SandboxKycProvider } from './sandbox/kyc.js';
import { SandboxOtcPriceProvider } from './sandbox/otc.js';

/**
 * Every foreign system the service talks to, behind its interface (docs/architecture.md, Layers): the provider SPI. Each call the API
 * makes is one of these; outcomes a provider decides later are not answers to a call but provider events written
 * into the inbox (providers/events.ts, docs/providers.md "Reporting outcomes").
 */
export type { IbanCountry } from './banking.js';

export interface Providers {
  banking: BankingProvider;
  kyc: KycProvider;
  custody: CustodyProvider;
  otc: OtcPriceProvider;
  /**
   * Where payments are submitted; absent for the sandbox bank, which needs no submission: its timer reports each
   * payment's outcome (providers/sandbox/payments.ts).
   */
  payments?: PaymentRail;
}

export function sandboxProviders(): Providers {
  return { banking: new SandboxBankingProvider(), kyc: new SandboxKycProvider(), custody: new SandboxCustodyProvider(), otc: new SandboxOtcPriceProvider() };
}

/**
 * The providers the configuration asks for: the sandbox, its payments submitted to the HTTP payment adapter when
 * PAYMENT_PROVIDER_URL is set. Production needs real accounts, KYC, custody and prices, which no adapter of this
 * build provides, so it refuses clearly.
 */
export function configuredProviders(config: Pick<Config, 'apiEnvironment' | 'paymentProvider'>, clock: Clock): Providers {
  if (config.apiEnvironment !== 'sandbox') {
    throw new ConfigError('API_ENVIRONMENT=production needs a real banking provider, and this build ships only the sandbox simulator (and an HTTP adapter for payments alone)');
  }
  const providers = sandboxProviders();
  if (config.paymentProvider) providers.payments = new HttpPaymentRail(config.paymentProvider.url, config.paymentProvider.secret, clock);
  return providers;
}
