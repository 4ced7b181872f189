import type { Config } from '../../config/config.js';
import type { Clock } from '../../clock.js';
import type { ApiKeyService } from '../../modules/api-keys/index.js';
import type { CustomerService } from '../../modules/customers/index.js';
import type { DashboardReveals, DashboardUserService } from '../../modules/dashboard-users/index.js';
import type { DepositService } from '../../modules/deposits/index.js';
import type { DocumentService } from '../../modules/documents/index.js';
import type { OnboardingLinks } from '../../modules/end-users/index.js';
import type { EndUserService } from '../../modules/end-users/index.js';
import type { EndUserRecord } from '../../modules/end-users/index.js';
import type { SandboxVerification } from '../../providers/sandbox/verification.js';
import type { EventService } from '../../modules/events/index.js';
import type { FiatAccountRecord, FiatAccountService } from '../../modules/fiat-accounts/index.js';
import type { OtcServices } from '../../modules/otc/index.js';
import type { PayeeServices } from '../../modules/payees/index.js';
import type { PaymentServices } from '../../modules/payments/index.js';
import type { TransactionService } from '../../modules/transactions/index.js';
import type { VirtualAccountRecord, VirtualAccountService } from '../../modules/virtual-accounts/index.js';
import type { SandboxStatuses } from '../../providers/sandbox/statuses.js';
import type { WalletServices } from '../../modules/wallets/index.js';
import type { WebhookService } from '../../modules/webhooks/index.js';
import type { FormTokens } from '../form-tokens.js';

/**
 * What the pages call: the same services as the JSON API, so every rule holds in both (web/ never talks SQL).
 * The pages act as the signed-in customer with every scope (docs/dashboard.md).
 */
export interface WebServices {
  config: Config;
  clock: Clock;
  customers: CustomerService;
  formTokens: FormTokens;
  users: DashboardUserService;
  /** Secrets shown once, on their reveal page (docs/dashboard.md "Forms"). */
  reveals: DashboardReveals;
  apiKeys: ApiKeyService;
  endUsers: EndUserService;
  onboardingLinks: OnboardingLinks;
  verification: SandboxVerification<EndUserRecord>;
  documents: DocumentService;
  fiatAccounts: FiatAccountService;
  virtualAccounts: VirtualAccountService;
  /** The simulated bank's status changes of accounts; undefined outside the sandbox. */
  accountStatuses: { fiat: SandboxStatuses<FiatAccountRecord>; virtual: SandboxStatuses<VirtualAccountRecord> } | undefined;
  /** Payees, and in the sandbox the simulated bank's status changes of them. */
  payees: PayeeServices;
  /** The OTC exchange, and in the sandbox the simulated liquidity provider. */
  otc: OtcServices;
  wallets: WalletServices;
  payments: PaymentServices;
  transactions: TransactionService;
  /** The sandbox's deposits; undefined outside the sandbox. */
  deposits: DepositService | undefined;
  webhooks: WebhookService;
  events: EventService;
}
