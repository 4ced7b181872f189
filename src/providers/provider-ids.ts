import { randomHex } from '../ids.js';

/** docs/spec.md §2 conventions: provider-side ids are strings with a type prefix (`facc_`, `busi_`, `eu_` …). */
export type ProviderIdPrefix = 'busi' | 'facc' | 'vacc' | 'eu' | 'pay' | 'doc' | 'pmt' | 'txn' | 'wal' | 'wtx';

export function providerId(prefix: ProviderIdPrefix, hex = randomHex(12)): string {
  return `${prefix}_${hex}`;
}
