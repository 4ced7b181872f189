import { accountStatusCacheTtlMs, descriptorCacheEntriesMax } from '../../config/limits.js';
import { DomainError, notFound } from '../../errors.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';

/** A payee as a payment needs it. */
export interface PayeeTarget {
  id: string;
  currency: string;
  name: string;
  account: string;
  requiresSwift: boolean;
  status: string;
}

const payeeTargets = (caches: ReadCaches) => caches.named<string, PayeeTarget>('payee-targets', accountStatusCacheTtlMs, descriptorCacheEntriesMax);

/**
 * The caller's payee as a payment needs it, or a 404 (another customer's answers like an unknown one). Cached like
 * the accounts: the details never change, the status is read again after `accountStatusCacheTtlMs`.
 */
export async function findPayeeTarget(storage: Storage, caches: ReadCaches, customerId: string, id: string): Promise<PayeeTarget> {
  const payee = await payeeTargets(caches).getOrLoad(`${customerId}|${id}`, async () => {
    const row = await storage.db
      .selectFrom('payees')
      .select(['id', 'currency', 'payee_name', 'iban', 'account_number', 'sort_code', 'routing_number', 'requires_vop', 'status'])
      .where('customer_id', '=', customerId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      id: row.id,
      currency: row.currency,
      name: row.payee_name,
      account: row.iban ?? row.account_number ?? '',
      // An IBAN outside SEPA, or an account number with only a BIC, is reached over SWIFT (docs/payees.md).
      requiresSwift: row.iban !== null ? !row.requires_vop : row.sort_code === null && row.routing_number === null,
      status: row.status,
    };
  });
  if (!payee) throw notFound('payee');
  return payee;
}

/** Forgets the cached payee after its status changed. */
export function forgetPayeeTarget(caches: ReadCaches, customerId: string, id: string): void {
  payeeTargets(caches).delete(`${customerId}|${id}`);
}

/** Payments go only to an `active` payee (checked at load time, like the accounts). */
export function requirePayeeActive(payee: PayeeTarget): void {
  if (payee.status !== 'active') {
    throw new DomainError('PAYEE_NOT_ACTIVE', `The payee is ${payee.status}: it cannot be paid.`, { payee_id: payee.id, status: payee.status });
  }
}
