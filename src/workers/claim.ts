import { sql, type RawBuilder } from 'kysely';
import type { Storage } from '../storage/database.js';
import type { Database } from '../storage/tables.js';

export interface ClaimOptions {
  table: keyof Database;
  /** What makes a row due besides its lease, e.g. sql`status = 'pending'`. */
  due: RawBuilder<unknown>;
  /** The column holding until when a claim is owned; a row is claimable when it is null or past. */
  leaseColumn: string;
  now: string;
  /** The new value of leaseColumn for the rows claimed. */
  leaseUntil: string;
  /** Oldest first by this column. */
  orderBy: string;
  limit: number;
  /** Further columns the claim sets, e.g. { sync_attempts: sql`sync_attempts + 1` }. */
  set?: Record<string, unknown>;
  /**
   * Claims from each group alone instead of from the whole table: for each value of `column` listed, at most its
   * number of rows (oldest first), each group read from its own index range — how webhook deliveries are claimed per
   * subscription, so one receiver never takes every slot and a claim never ranks the whole backlog. `limit` then
   * bounds the sum, which the caller keeps within it.
   */
  perGroup?: { column: string; limits: ReadonlyMap<string, number> };
}

/**
 * The one way a worker takes work that several instances may see at once (docs/operations.md "Several instances"):
 * a single UPDATE … RETURNING moves the lease of the due rows forward. On PostgreSQL the rows are picked with
 * FOR UPDATE SKIP LOCKED, so concurrent claimers take different rows instead of queueing, and the condition is
 * checked again on the locked row. On SQLite the one writer makes the statement atomic. Each row is returned to
 * exactly one claimer, and comes back when its lease runs out (the claimer stopped mid-work).
 */
export async function claimDue<Row>(storage: Storage, options: ClaimOptions): Promise<Row[]> {
  const table = sql.table(options.table);
  const lease = sql.ref(options.leaseColumn);
  const claimable = sql`(${options.due}) and (${lease} is null or ${lease} <= ${options.now})`;
  const assignments = [sql`${lease} = ${options.leaseUntil}`, ...Object.entries(options.set ?? {}).map(([column, value]) => sql`${sql.ref(column)} = ${value}`)];
  const order = sql.ref(options.orderBy);
  const lock = storage.dialect === 'postgres' ? sql` for update skip locked` : sql``;
  const pick = (condition: RawBuilder<unknown>, limit: number) => sql`select id from ${table} where ${condition} order by ${order} limit ${limit}${lock}`;
  const { perGroup } = options;
  const groups = [...(perGroup?.limits ?? [])].filter(([, limit]) => limit > 0);
  if (perGroup && groups.length === 0) return [];
  // Each group's pick is a subquery of its own: a LIMIT and a lock clause apply to one SELECT of a UNION only there.
  const picked = perGroup
    ? sql.join(
        groups.map(([value, limit], index) => sql`select id from (${pick(sql`${claimable} and ${sql.ref(perGroup.column)} = ${value}`, Math.min(limit, options.limit))}) ${sql.raw(`g${index}`)}`),
        sql` union all `,
      )
    : pick(claimable, options.limit);
  const result =
    storage.dialect === 'postgres'
      ? // Materialised once: as an IN subquery the planner may run it again, and SKIP LOCKED then picks more than `limit`.
        await sql<Row>`
          with picked as materialized (${picked})
          update ${table} set ${sql.join(assignments)} from picked
          where ${table}.id = picked.id and ${claimable}
          returning ${table}.*`.execute(storage.db)
      : await sql<Row>`update ${table} set ${sql.join(assignments)} where id in (${picked}) returning *`.execute(storage.db);
  return result.rows;
}
