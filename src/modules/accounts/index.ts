/**
 * The accounts module: the accounts money moves between as payments, deposits and OTC orders see them (a customer's
 * fiat and virtual accounts), their statuses, the postings and guards that move them, the records
 * their balance events carry. It owns no table of its own (docs/architecture.md "Modules").
 */
export { explainedBy } from './balance-events.js';
export {
  type CustomerAccount,
  accountPostings,
  accountStatuses,
  balanceAccountOf,
  customerAccountLookup,
  finalAccountStatuses,
  forgetCustomerAccounts,
  requireCanReceive,
  requireCanSend,
  unchangedStatusGuards,
} from './customer-accounts.js';
export { presentFiatAccount } from './fiat-account-presenter.js';
export { presentVirtualAccount } from './virtual-account-presenter.js';
