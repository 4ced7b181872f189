import { sql, type Kysely } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { Database, OtcOrdersTable, OtcQuotesTable } from '../../storage/tables.js';
import { newestFirstPage } from '../../storage/newest-first-page.js';
import { deleteDue } from '../../workers/claim.js';

/** Reads of the OTC tables, always scoped to the customer: another customer's rows answer like unknown ones. */

type Db = Kysely<Database>;

export async function findQuote(db: Db, customerId: string, id: string): Promise<OtcQuotesTable | undefined> {
  return db.selectFrom('otc_quotes').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

export async function findOrder(db: Db, customerId: string, id: string): Promise<OtcOrdersTable | undefined> {
  return db.selectFrom('otc_orders').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** The order a liquidity provider reports on: its reference in provider events is the order's id, whoever's it is. */
export async function findOrderByReference(db: Db, id: string): Promise<OtcOrdersTable | undefined> {
  return db.selectFrom('otc_orders').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The customer's orders, newest first. */
export async function listOrders(db: Db, customerId: string, offset: number, limit: number): Promise<{ rows: OtcOrdersTable[]; total: bigint }> {
  return newestFirstPage<OtcOrdersTable>(db.selectFrom('otc_orders').where('customer_id', '=', customerId), offset, limit);
}

/**
 * The reaper's batch (workers/reaper.ts): up to `limit` quotes never confirmed that expired before `before`, oldest
 * first. A confirmed quote is its order's (the order names it) and is never deleted.
 */
export async function deleteUnconfirmedQuotes(storage: Storage, before: string, limit: number): Promise<number> {
  return deleteDue(storage, { table: 'otc_quotes', key: ['id'], due: sql`order_id is null and expires_at < ${before}`, orderBy: 'expires_at', limit });
}
