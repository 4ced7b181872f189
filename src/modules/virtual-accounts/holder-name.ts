import type { EndUserRow } from '../end-users/index.js';

/**
 * The name a virtual account is held in (docs/virtual-accounts.md): a business end user's company name, an
 * individual's full name (first, middle, last), or — without an end user — the customer's own name.
 */
export function accountHolderName(endUser: EndUserRow | undefined, customerName: string): string {
  if (endUser === undefined) return customerName;
  if (endUser.end_user_type === 'BUSINESS' && endUser.company_name) return endUser.company_name;
  const parts = [endUser.first_name, endUser.middle_name, endUser.last_name].filter((part): part is string => Boolean(part && part.trim()));
  return parts.length > 0 ? parts.join(' ') : (endUser.company_name ?? customerName);
}
