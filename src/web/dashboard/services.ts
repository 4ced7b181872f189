import type { Config } from '../../config/config.js';
import type { Clock } from '../../clock.js';
import type { ApiKeyService } from '../../modules/api-keys/service.js';
import type { DashboardUserService } from '../../modules/dashboard-users/service.js';
import type { DocumentService } from '../../modules/documents/service.js';
import type { OnboardingLinks } from '../../modules/end-users/onboarding.js';
import type { EndUserService } from '../../modules/end-users/service.js';
import type { EndUserRecord } from '../../modules/end-users/schemas.js';
import type { SandboxVerification } from '../../providers/sandbox/verification.js';
import type { FiatAccountService } from '../../modules/fiat-accounts/service.js';
import type { PaymentServices } from '../../modules/payments/module.js';
import type { VirtualAccountService } from '../../modules/virtual-accounts/service.js';
import type { WalletServices } from '../../modules/wallets/module.js';
import type { WebhookService } from '../../modules/webhooks/service.js';
import type { Storage } from '../../storage/database.js';
import type { FormTokens } from '../form-tokens.js';

/**
 * What the pages call: the same services as the JSON API, so every rule holds in both (web/ never talks SQL).
 * The pages act as the signed-in customer with every scope (docs/dashboard.md).
 */
export interface WebServices {
  config: Config;
  clock: Clock;
  storage: Storage;
  formTokens: FormTokens;
  users: DashboardUserService;
  apiKeys: ApiKeyService;
  endUsers: EndUserService;
  onboardingLinks: OnboardingLinks;
  verification: SandboxVerification<EndUserRecord>;
  documents: DocumentService;
  fiatAccounts: FiatAccountService;
  virtualAccounts: VirtualAccountService;
  wallets: WalletServices;
  payments: PaymentServices;
  webhooks: WebhookService;
}
