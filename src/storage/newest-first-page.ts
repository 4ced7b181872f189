import { sql, type SelectQueryBuilder } from 'kysely';
import type { Database } from './tables.js';

/**
 * One page of a customer's collection (payments, wallet transfers, OTC orders), newest first — by `created_at`, ties
 * by `id` — and the size of the whole collection. `query` selects the collection's rows (table and filters, no
 * columns): the count and the page are both read from it.
 */
export async function newestFirstPage<Row>(
  query: SelectQueryBuilder<Database, keyof Database, object>,
  offset: number,
  limit: number,
): Promise<{ rows: Row[]; total: bigint }> {
  const counted = await query.select(sql<bigint>`count(*)`.as('total')).executeTakeFirstOrThrow();
  const rows = await query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute();
  return { rows: rows as Row[], total: BigInt((counted as { total: bigint | string | number }).total) };
}
