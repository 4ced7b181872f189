import { customerAccountLookup } from './accounts/index.js';
import { fiatAccountWithOwner } from './fiat-accounts/index.js';
import { virtualAccountWithOwner } from './virtual-accounts/index.js';

/**
 * The caller's accounts as money moves them (the accounts module), read through the modules that own their tables.
 * Those modules depend on accounts, so accounts takes their reads instead of importing them; this file, which belongs
 * to no module, hands them in. Payments, deposits and OTC orders look their accounts up here.
 */
export const { findCustomerAccount, currentCustomerAccount, addBalanceEvents } = customerAccountLookup({
  fiatAccount: fiatAccountWithOwner,
  virtualAccount: virtualAccountWithOwner,
});
