import type { Kysely } from 'kysely';
import { queryTemplate } from '../../storage/query-template.js';
import type { Database, FeeSchedulesTable } from '../../storage/tables.js';

export type FeeScheduleRow = FeeSchedulesTable;

/** The `scope` of the default schedule's rows; a customer's rows have the customer id (0004-fees.ts). */
export const defaultScope = 'default';

interface ScheduleKey {
  customerId: string;
  transactionType: string;
  paymentScheme: string;
  currency: string;
}

/** Every payment and fee preview prices itself with this lookup, so it is compiled once. */
const candidateSchedules = queryTemplate<ScheduleKey>()(
  ['customerId', 'transactionType', 'paymentScheme', 'currency'],
  (db, { customerId, transactionType, paymentScheme, currency }) =>
    db
      .selectFrom('fee_schedules')
      .selectAll()
      .where('scope', 'in', [customerId, defaultScope])
      .where('transaction_type', '=', transactionType)
      .where('payment_scheme', '=', paymentScheme)
      .where('currency', '=', currency),
);

/** The rows that can price this (type, scheme, currency) for the customer: its own and the default's (0-2 rows). */
export async function findCandidateSchedules(
  db: Kysely<Database>,
  customerId: string,
  key: { transactionType: string; paymentScheme: string; currency: string },
): Promise<FeeScheduleRow[]> {
  return candidateSchedules.execute(db, {
    customerId,
    transactionType: key.transactionType,
    paymentScheme: key.paymentScheme,
    currency: key.currency,
  });
}

/** Every row of the given scopes (the default, and a customer's own when asked). */
export async function listSchedules(db: Kysely<Database>, scopes: string[]): Promise<FeeScheduleRow[]> {
  return db.selectFrom('fee_schedules').selectAll().where('scope', 'in', scopes).execute();
}

/**
 * Inserts the customer's row for (type, scheme, currency) or replaces its terms; an existing row keeps its id
 * (the schedule_id previews show) and created_at. One statement, so two operators setting the same row at
 * once cannot create two.
 */
export async function upsertSchedule(db: Kysely<Database>, row: FeeScheduleRow): Promise<FeeScheduleRow> {
  return db
    .insertInto('fee_schedules')
    .values(row)
    .onConflict((conflict) =>
      conflict.columns(['scope', 'transaction_type', 'payment_scheme', 'currency']).doUpdateSet({
        name: row.name,
        flat_fee_minor: row.flat_fee_minor,
        percentage_millionths: row.percentage_millionths,
        min_fee_minor: row.min_fee_minor,
        max_fee_minor: row.max_fee_minor,
        umbrella_link_id: row.umbrella_link_id,
        updated_at: row.updated_at,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}
