import type { AuthenticatedKey } from '../../modules/api-keys/index.js';
import type { DepositService } from '../../modules/deposits/index.js';
import type { WalletServices } from '../../modules/wallets/index.js';
import type { WebServices } from './services.js';

const address = { line1: 'Friedrichstraße 68', city: 'Berlin', postalCode: '10117', country: 'DE' };

/** Why sample data was not created: the sandbox holds data already, or another click is creating it now. */
export class SandboxNotEmpty extends Error {
  override name = 'SandboxNotEmpty';
}

/**
 * "Create sample data" (docs/dashboard.md "Sample data"): a whole small business in an empty sandbox, made through the
 * same services as the API, so every rule, event and webhook applies — a business end user with two directors, a
 * EUR and a GBP account funded by deposits, a payee paid from the EUR account, a wallet with a USDC deposit, and an
 * OTC order from the EUR account into that wallet.
 *
 * It runs only where the customer has no end user, account, wallet or payee yet, and one at a time per customer
 * on this instance: a double click is refused rather than making it twice.
 */
export class SampleData {
  private readonly running = new Set<string>();

  constructor(
    private readonly services: WebServices,
    private readonly simulations: { deposits: DepositService; wallets: NonNullable<WalletServices['sandbox']> },
  ) {}

  /** Whether the customer's sandbox is empty: the page offers the button only then. */
  async isEmpty(caller: AuthenticatedKey): Promise<boolean> {
    const { endUsers, fiatAccounts, wallets, payees } = this.services;
    const lists = await Promise.all([endUsers.list(caller), fiatAccounts.list(caller), wallets.wallets.list(caller), payees.payees.list(caller)]);
    return lists.every((list) => list.length === 0);
  }

  async create(caller: AuthenticatedKey): Promise<void> {
    if (this.running.has(caller.customerId)) throw new SandboxNotEmpty('Sample data is being created already: reload the overview in a moment.');
    this.running.add(caller.customerId);
    try {
      if (!(await this.isEmpty(caller))) throw new SandboxNotEmpty('Your sandbox holds data already: sample data is created only in an empty one.');
      await this.fill(caller);
    } finally {
      this.running.delete(caller.customerId);
    }
  }

  private async fill(caller: AuthenticatedKey): Promise<void> {
    const { endUsers, fiatAccounts, payees, payments, wallets, otc } = this.services;
    const director = (firstName: string, lastName: string, dob: string) => ({ firstName, lastName, dob, email: `${firstName.toLowerCase()}@sample-logistics.example`, address });
    const business = await endUsers.createBusiness(caller, {
      business: {
        companyName: 'Sample Logistics GmbH',
        registrationNumber: 'HRB 100001',
        registrationDate: '2018-03-01',
        email: 'office@sample-logistics.example',
        incorporationCountry: 'DE',
        registeredAddress: address,
      },
      businessPersons: [
        { person: director('Marie', 'Schmidt', '1980-05-14'), types: ['director', 'ubo'], ownership: 60 },
        { person: director('Jonas', 'Weber', '1975-11-02'), types: ['director'], ownership: 40 },
      ],
    });
    const eur = await fiatAccounts.create(caller, { accountName: 'Operating EUR', currency: 'EUR', linkedBusinessId: business.id });
    const gbp = await fiatAccounts.create(caller, { accountName: 'Operating GBP', currency: 'GBP', linkedBusinessId: business.id });
    await this.simulations.deposits.deposit(caller, eur.id, { amount: 25000, reference: 'Sample funding', counterpartyName: 'Sample Bank AG' });
    await this.simulations.deposits.deposit(caller, gbp.id, { amount: 8000, reference: 'Sample funding', counterpartyName: 'Sample Bank plc' });
    const payee = await payees.payees.create(caller, {
      name: 'Müller Logistik GmbH',
      address: { line1: 'Hauptstraße 12', city: 'Berlin', postalCode: '10115', country: 'DE' },
      bankDetails: { iban: 'DE89370400440532013000', bic: 'COBADEFFXXX' },
    });
    await payments.payments.create(caller, { fromAccountId: eur.id, payeeId: payee.id, amount: 1250, currency: 'EUR', reference: 'Invoice 2026-0042' });
    const wallet = await wallets.wallets.create(caller, { displayName: 'Treasury wallet' });
    await this.simulations.wallets.deposit(caller, wallet.local_id, { asset: 'USDC', network: 'ETH', amount: '500' });
    const quote = await otc.otc.quote(caller, { sourceFrAccountId: eur.id, destinationProviderWalletId: wallet.local_id, sourceAmountEur: '1000.00' });
    await otc.otc.confirm(caller, { quoteId: quote.quoteId }, undefined);
  }
}
