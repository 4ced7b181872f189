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
  /**
   * Also answers each row's lease before the claim under this name: for a sandbox timer, when it was due; for a webhook
   * delivery, the lease of an instance that ran out (its first attempt was counted there, by the metrics).
   */
  previousLeaseAs?: string;
  /**
   * PostgreSQL only: what the claimed rows (named `claimed`) are read with in the same statement, e.g. the webhook
   * delivery's event payload and subscription — `select claimed.*, <columns> from claimed <joins>` — so a claim and
   * what the claimer needs next are one round trip. On SQLite (no round trip) the claimer reads them after the claim.
   */
  postgresJoin?: { columns: RawBuilder<unknown>; joins: RawBuilder<unknown> };
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
  const { perGroup, previousLeaseAs } = options;
  const columns = previousLeaseAs === undefined ? sql`id` : sql`id, previous_lease`;
  const picks = previousLeaseAs === undefined ? sql`id` : sql`id, ${lease} as previous_lease`;
  const pick = (condition: RawBuilder<unknown>, limit: number) => sql`select ${picks} from ${table} where ${condition} order by ${order} limit ${limit}${lock}`;
  const groups = [...(perGroup?.limits ?? [])].filter(([, limit]) => limit > 0);
  if (perGroup && groups.length === 0) return [];
  // Each group's pick is a subquery of its own: a LIMIT and a lock clause apply to one SELECT of a UNION only there.
  const picked = perGroup
    ? sql.join(
        groups.map(([value, limit], index) => sql`select ${columns} from (${pick(sql`${claimable} and ${sql.ref(perGroup.column)} = ${value}`, Math.min(limit, options.limit))}) ${sql.raw(`g${index}`)}`),
        sql` union all `,
      )
    : pick(claimable, options.limit);
  const result =
    storage.dialect === 'postgres'
      ? // Materialised once: as an IN subquery the planner may run it again, and SKIP LOCKED then picks more than `limit`.
        // The update joins the picked rows by primary key alone: FOR UPDATE already checked the condition on each locked
        // row's newest version and holds the lock until the statement ends, so nothing can change it in between. Checked
        // again here, the condition let the planner (whose estimates lag a fast-filling table) drive the update from the
        // whole due index range and join it with the picked ids — thousands of rows for a few hundred claimed.
        await sql<Row>`
          with picked as materialized (${picked}), claimed as (
            update ${table} set ${sql.join(assignments)} from picked
            where ${table}.id = picked.id
            returning ${table}.*${previousLeaseAs === undefined ? sql`` : sql`, picked.previous_lease as ${sql.ref(previousLeaseAs)}`})
          select claimed.*${options.postgresJoin ? sql`, ${options.postgresJoin.columns}` : sql``} from claimed ${options.postgresJoin?.joins ?? sql``}`.execute(storage.db)
      : previousLeaseAs === undefined
        ? await sql<Row>`update ${table} set ${sql.join(assignments)} where id in (${picked}) returning *`.execute(storage.db)
        : // RETURNING sees the updated row only; the rows picked, materialised before any update, still hold the lease.
          await sql<Row>`
            with picked as materialized (${picked})
            update ${table} set ${sql.join(assignments)} where id in (select id from picked)
            returning *, (select previous_lease from picked where picked.id = ${table}.id) as ${sql.ref(previousLeaseAs)}`.execute(storage.db);
  return result.rows;
}

interface DeletionOptions {
  table: keyof Database;
  /** The primary key's columns: the rows picked are deleted by them. */
  key: readonly string[];
  /** What makes a row due for deletion, e.g. sql`expires_at <= ${now}`, on columns other than the key. */
  due: RawBuilder<unknown>;
  /** Oldest first by this column, which an index should lead with so a batch reads only the rows it deletes. */
  orderBy: string;
  limit: number;
}

/**
 * The reaper's side of the claim (workers/reaper.ts): deletes up to `limit` due rows, oldest first, in one statement,
 * so no lock is held longer than one small batch takes. On PostgreSQL the rows are picked FOR UPDATE SKIP LOCKED, as
 * claimDue picks them: instances reaping at once take different rows, and a row a request holds (a key whose answer
 * is being stored) is left to a later pass instead of waited for; the condition is checked again on the locked row. On
 * SQLite the one writer makes the statement atomic. Returns how many rows went (not counting cascades).
 */
export async function deleteDue(storage: Storage, options: DeletionOptions): Promise<number> {
  const table = sql.table(options.table);
  const keys = sql.join(options.key.map((column) => sql.ref(column)));
  const picked = sql`select ${keys} from ${table} where ${options.due} order by ${sql.ref(options.orderBy)} limit ${options.limit}`;
  if (storage.dialect === 'postgres') {
    const sameKey = sql.join(
      options.key.map((column) => sql`${table}.${sql.ref(column)} = picked.${sql.ref(column)}`),
      sql` and `,
    );
    // Materialised once, as in claimDue: a subquery run again would skip other rows and delete more than `limit`. The
    // delete joins by key alone, as claimDue's update does: FOR UPDATE checked the condition on the locked rows.
    const result = await sql`
      with picked as materialized (${picked} for update skip locked)
      delete from ${table} using picked where ${sameKey}`.execute(storage.db);
    return Number(result.numAffectedRows ?? 0n);
  }
  const result = await sql`delete from ${table} where (${keys}) in (${picked})`.execute(storage.db);
  return Number(result.numAffectedRows ?? 0n);
}
