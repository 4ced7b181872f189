import { randomBytes } from 'node:crypto';

/** Spec §2 conventions: provider-side ids are strings with a type prefix (`facc_`, `busi_`, `eu_` …). */
export type ProviderIdPrefix = 'busi' | 'facc' | 'vacc' | 'eu' | 'pay' | 'doc' | 'pmt' | 'txn';

export function providerId(prefix: ProviderIdPrefix, hex = randomBytes(12).toString('hex')): string {
  return `${prefix}_${hex}`;
}
