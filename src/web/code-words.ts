/**
 * The API's codes as a person reads them, on every dashboard page (docs/dashboard.md "How amounts and times
 * read"): transaction types, statuses, directions, business types, risk tiers, payment schemes, event types. The
 * API keeps its codes; only the pages say them in words. Codes whose words are not simply the code spelt out
 * (abbreviations, names) are listed; any other code is spelt out (`review_required` → "Review required",
 * `LIMITED_COMPANY` → "Limited company", `end_user.status_updated` → "End user: status updated").
 */
const listedWords: Readonly<Record<string, string>> = {
  // Transaction types (docs/transactions.md)
  payment: 'Payment',
  payment_return: 'Payment returned',
  deposit: 'Deposit',
  otc_exchange: 'OTC exchange',
  otc_exchange_return: 'OTC exchange returned',
  // Directions, shown beside a signed amount
  incoming: 'In',
  outgoing: 'Out',
  // End users
  pending_verification: 'Pending verification',
  INDIVIDUAL: 'Individual',
  BUSINESS: 'Business',
  low_risk: 'Low risk',
  medium_risk: 'Medium risk',
  high_risk: 'High risk',
  hosted_kyc: 'Hosted onboarding page',
  pdf_upload: 'PDF upload',
  provider_websdk: 'Provider web SDK',
  // Businesses
  PUBLIC_LIMITED_COMPANY: 'Public limited company (PLC)',
  LIMITED_LIABILITY_PARTNERSHIP: 'Limited liability partnership (LLP)',
  CRYPTO_ASSETS: 'Crypto assets',
  // Payment schemes and account kinds
  SEPA: 'SEPA',
  SEPA_INSTANT: 'SEPA Instant',
  FASTER_PAYMENTS: 'Faster Payments',
  SWIFT: 'SWIFT',
  ACH: 'ACH',
  INTERNAL: 'Internal transfer',
  FIAT_ACCOUNT: 'Fiat account',
  VIRTUAL_ACCOUNT: 'Virtual account',
  // Events
  'webhook.test': 'Webhook test',
  'otc_order.created': 'OTC order: created',
  'otc_order.status_updated': 'OTC order: status updated',
};

function spelledOut(code: string): string {
  const words = code.replace(/[_-]+/g, ' ').trim().toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A code in words; null or empty is a dash. */
export function codeWords(code: string | null | undefined): string {
  if (code === null || code === undefined || code === '') return '—';
  const listed = listedWords[code];
  if (listed !== undefined) return listed;
  // An event type: its resource, then what happened ("Payment: completed").
  const dot = code.indexOf('.');
  if (dot > 0) return `${spelledOut(code.slice(0, dot))}: ${spelledOut(code.slice(dot + 1)).toLowerCase()}`;
  return spelledOut(code);
}
