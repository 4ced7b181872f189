import { randomUUID } from 'node:crypto';
import {
  Kysely,
  NoResultError,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
} from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { insertRowsTemplate, queryTemplate } from '../../src/storage/query-template.js';
import type { Database, FeeSchedulesTable, LedgerPostingsTable } from '../../src/storage/tables.js';
import { insertCustomerRow } from '../helpers/rows.js';
import { testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/**
 * Query templates (src/storage/query-template.ts): the SQL and parameters a template sends are those Kysely's builder
 * compiles for the same values, on both dialects' compilers; what the template refuses; when it compiles; and
 * executions against the real database of this vitest project.
 */

type Compiler = 'sqlite' | 'postgres';

/** A Kysely compiling for `compiler` whose connection records each query it is sent and answers with `answer`. */
function recordingDb(compiler: Compiler) {
  const sent: CompiledQuery[] = [];
  const recorder = { sent, answer: [] as unknown[] };
  const connection: DatabaseConnection = {
    executeQuery: async <R>(query: CompiledQuery) => {
      sent.push(query);
      return { rows: recorder.answer as R[] };
    },
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  const driver: Driver = {
    init: async () => undefined,
    acquireConnection: async () => connection,
    beginTransaction: async () => undefined,
    commitTransaction: async () => undefined,
    rollbackTransaction: async () => undefined,
    releaseConnection: async () => undefined,
    destroy: async () => undefined,
  };
  const dialect: Dialect =
    compiler === 'sqlite'
      ? { createAdapter: () => new SqliteAdapter(), createDriver: () => driver, createIntrospector: (db) => new SqliteIntrospector(db), createQueryCompiler: () => new SqliteQueryCompiler() }
      : { createAdapter: () => new PostgresAdapter(), createDriver: () => driver, createIntrospector: (db) => new PostgresIntrospector(db), createQueryCompiler: () => new PostgresQueryCompiler() };
  return Object.assign(recorder, { db: new Kysely<Database>({ dialect }) });
}

const now = '2025-01-01T00:00:00.000Z';
type ScheduleRow = FeeSchedulesTable;
type PostingRow = Omit<LedgerPostingsTable, 'sequence'>;

/** Every column of fee_schedules, in an order that differs from the table's, to show the names decide it. */
const scheduleColumns = [
  'scope', 'id', 'customer_id', 'name', 'transaction_type', 'payment_scheme', 'currency', 'flat_fee_minor', 'percentage_millionths',
  'min_fee_minor', 'max_fee_minor', 'umbrella_link_id', 'created_at', 'updated_at',
] as const;

function scheduleRow(customerId: string, flatFeeMinor: bigint): ScheduleRow {
  return {
    scope: customerId,
    id: randomUUID(),
    customer_id: customerId,
    name: 'Template test',
    transaction_type: 'payment',
    payment_scheme: 'SEPA',
    currency: 'EUR',
    flat_fee_minor: flatFeeMinor,
    percentage_millionths: 2500n,
    min_fee_minor: null,
    max_fee_minor: 5000n,
    umbrella_link_id: null,
    created_at: now,
    updated_at: now,
  };
}

const insertSchedule = queryTemplate<ScheduleRow>()(scheduleColumns, (db, row) => db.insertInto('fee_schedules').values(row));

const schedulesOf = queryTemplate<{ customerId: string; scheme: string }>()(['customerId', 'scheme'], (db, { customerId, scheme }) =>
  db
    .selectFrom('fee_schedules')
    .innerJoin('customers', 'customers.id', 'fee_schedules.customer_id')
    .selectAll('fee_schedules')
    .select('customers.name as customer_name')
    .where('fee_schedules.scope', 'in', [customerId, 'default'])
    .where('fee_schedules.payment_scheme', '=', scheme)
    .orderBy('fee_schedules.created_at'),
);

const addToCount = queryTemplate<{ customerId: string; delta: bigint }>()(['customerId', 'delta'], (db, { customerId, delta }) =>
  db
    .updateTable('customers')
    .set({ transaction_count: sql`transaction_count + ${delta}` })
    .where('id', '=', customerId)
    .where(sql<boolean>`transaction_count + ${delta} >= 0`)
    .returning('transaction_count'),
);

const insertPostings = insertRowsTemplate<PostingRow>()(['journal_id', 'account_kind', 'account_id', 'asset', 'amount_minor'], (db, rows) =>
  db.insertInto('ledger_postings').values(rows),
);

function postingRows(journalId: string, count: number): PostingRow[] {
  return Array.from({ length: count }, (_, index) => ({
    journal_id: journalId,
    account_kind: index % 2 === 0 ? 'system' : 'fiat_account',
    account_id: `account-${index}`,
    asset: 'EUR',
    amount_minor: index % 2 === 0 ? -BigInt(index + 1) : BigInt(index),
  }));
}

describe.each<Compiler>(['sqlite', 'postgres'])('query templates compiled by the %s compiler', (compiler) => {
  const expectSentAsBuilt = (sent: CompiledQuery | undefined, built: CompiledQuery) => {
    expect(sent?.sql).toBe(built.sql);
    expect(sent?.parameters).toEqual(built.parameters);
  };

  it('send the SQL and parameters the builder compiles for a select with a join and an in-list holding a constant', async () => {
    const { db, sent } = recordingDb(compiler);
    for (const [customerId, scheme] of [['c-1', 'SEPA'], ['c-2', 'SWIFT']] as const) {
      await schedulesOf.execute(db, { customerId, scheme });
      const built = db
        .selectFrom('fee_schedules')
        .innerJoin('customers', 'customers.id', 'fee_schedules.customer_id')
        .selectAll('fee_schedules')
        .select('customers.name as customer_name')
        .where('fee_schedules.scope', 'in', [customerId, 'default'])
        .where('fee_schedules.payment_scheme', '=', scheme)
        .orderBy('fee_schedules.created_at')
        .compile();
      expectSentAsBuilt(sent.at(-1), built);
    }
    expect(sent[1]?.parameters).toEqual(['c-2', 'default', 'SWIFT']);
  });

  it('send a value used twice in raw SQL twice, with its bigint type kept', async () => {
    const { db, sent } = recordingDb(compiler);
    await addToCount.execute(db, { customerId: 'c-1', delta: -7n });
    const built = db
      .updateTable('customers')
      .set({ transaction_count: sql`transaction_count + ${-7n}` })
      .where('id', '=', 'c-1')
      .where(sql<boolean>`transaction_count + ${-7n} >= 0`)
      .returning('transaction_count')
      .compile();
    expectSentAsBuilt(sent[0], built);
    expect(sent[0]?.parameters).toEqual([-7n, 'c-1', -7n]);
  });

  it('compile to the same query for another executor, sending nothing themselves', () => {
    const { db, sent } = recordingDb(compiler);
    const compiled = addToCount.compile(db, { customerId: 'c-2', delta: 5n });
    const built = db
      .updateTable('customers')
      .set({ transaction_count: sql`transaction_count + ${5n}` })
      .where('id', '=', 'c-2')
      .where(sql<boolean>`transaction_count + ${5n} >= 0`)
      .returning('transaction_count')
      .compile();
    expectSentAsBuilt(compiled, built);
    expect(sent).toEqual([]);
  });

  it('send a whole-row insert with its columns in the order of the names, nulls included', async () => {
    const { db, sent } = recordingDb(compiler);
    const row = scheduleRow('c-1', 20n);
    await insertSchedule.execute(db, row);
    expectSentAsBuilt(sent[0], db.insertInto('fee_schedules').values(row).compile());
    expect(sent[0]?.sql).toMatch(/^insert into "fee_schedules" \("scope", "id", "customer_id",/);
  });

  it('send an insert of 1, 2 or 4 rows as the builder compiles each', async () => {
    const { db, sent } = recordingDb(compiler);
    for (const count of [2, 1, 4, 2]) {
      const rows = postingRows(randomUUID(), count);
      await insertPostings.execute(db, rows);
      expectSentAsBuilt(sent.at(-1), db.insertInto('ledger_postings').values(rows).compile());
    }
  });

  it('return the rows the driver answers, the first of them, or NoResultError when there is none', async () => {
    const recorder = recordingDb(compiler);
    recorder.answer = [{ transaction_count: 3n }, { transaction_count: 4n }];
    expect(await addToCount.execute(recorder.db, { customerId: 'c-1', delta: 1n })).toEqual([{ transaction_count: 3n }, { transaction_count: 4n }]);
    expect(await addToCount.executeTakeFirst(recorder.db, { customerId: 'c-1', delta: 1n })).toEqual({ transaction_count: 3n });
    recorder.answer = [];
    expect(await addToCount.executeTakeFirst(recorder.db, { customerId: 'c-1', delta: 1n })).toBeUndefined();
    await expect(addToCount.executeTakeFirstOrThrow(recorder.db, { customerId: 'c-1', delta: 1n })).rejects.toThrow(NoResultError);
  });
});

describe('query templates refuse what the builder would treat differently', () => {
  it('refuse an undefined value, which the builder would leave out of an insert, and send nothing', async () => {
    const { db, sent } = recordingDb('sqlite');
    const row = { ...scheduleRow('c-1', 0n), umbrella_link_id: undefined } as unknown as ScheduleRow;
    await expect(insertSchedule.execute(db, row)).rejects.toThrow('parameter "umbrella_link_id" is undefined');
    expect(sent).toEqual([]);
  });

  it('refuse a build that leaves a parameter unbound, before anything is sent', async () => {
    const { db, sent } = recordingDb('sqlite');
    const unbound = queryTemplate<{ id: string; name: string }>()(['id', 'name'], (builder, { id }) =>
      builder.selectFrom('customers').selectAll().where('id', '=', id),
    );
    await expect(unbound.execute(db, { id: 'c-1', name: 'unused' })).rejects.toThrow('parameter "name" is not bound');
    expect(sent).toEqual([]);
  });

  it('refuse a Kysely derived with withSchema, which shares the adapter but compiles other SQL', async () => {
    const { db, sent } = recordingDb('postgres');
    await expect(addToCount.execute(db.withSchema('elsewhere'), { customerId: 'c-1', delta: 1n })).rejects.toThrow('without plugins');
    expect(sent).toEqual([]);
  });
});

describe('query templates compile', () => {
  function countingTemplate() {
    const counter = { builds: 0 };
    const template = queryTemplate<{ id: string }>()(['id'], (db, { id }) => {
      counter.builds += 1;
      return db.selectFrom('customers').select('name').where('id', '=', id);
    });
    return Object.assign(counter, { template });
  }

  it('once for a Kysely instance and every transaction of it', async () => {
    const counting = countingTemplate();
    const { db, sent } = recordingDb('postgres');
    await counting.template.execute(db, { id: 'a' });
    await db.transaction().execute((trx) => counting.template.execute(trx, { id: 'b' }));
    await db.transaction().execute((trx) => counting.template.execute(trx, { id: 'c' }));
    expect(counting.builds).toBe(1);
    expect(sent.map((query) => query.parameters)).toEqual([['a'], ['b'], ['c']]);
  });

  it('again for another Kysely instance, in its own dialect', async () => {
    const counting = countingTemplate();
    const sqlite = recordingDb('sqlite');
    const postgres = recordingDb('postgres');
    await counting.template.execute(sqlite.db, { id: 'a' });
    await counting.template.execute(postgres.db, { id: 'b' });
    await counting.template.execute(sqlite.db, { id: 'c' });
    expect(counting.builds).toBe(2);
    expect(sqlite.sent.map((query) => query.sql)).toEqual(['select "name" from "customers" where "id" = ?', 'select "name" from "customers" where "id" = ?']);
    expect(postgres.sent[0]?.sql).toBe('select "name" from "customers" where "id" = $1');
  });

  it('an insert of rows once per number of rows', async () => {
    const { db, sent } = recordingDb('sqlite');
    const journalId = randomUUID();
    for (const count of [2, 2, 3, 2]) await insertPostings.execute(db, postingRows(journalId, count));
    expect(new Set(sent.map((query) => query.sql)).size).toBe(2);
    expect(sent[0]?.sql).toBe(sent[1]?.sql);
    // The compiled query is shared; each execution still sends its own parameters.
    expect(sent[2]?.parameters).toHaveLength(15);
  });
});

describe(`query templates on ${testDialect}`, () => {
  let storage: Storage;
  let customerId: string;

  useFreshStorage((fresh) => (storage = fresh));
  beforeAll(async () => {
    await migrateToLatest(storage);
    customerId = await insertCustomerRow(storage, 'Template customer');
  });

  it('insert a whole row and read it back, bigint beyond 2^53 exact, from the join', async () => {
    const row = scheduleRow(customerId, 9007199254740993n);
    await insertSchedule.execute(storage.db, row);
    const read = await schedulesOf.execute(storage.db, { customerId, scheme: 'SEPA' });
    const own = read.find((candidate) => candidate.id === row.id);
    expect(own).toEqual({ ...row, customer_name: 'Template customer' });
    expect(typeof own?.flat_fee_minor).toBe('bigint');
  });

  it('run inside the transaction it is given: a rollback undoes it', async () => {
    const countOf = async () => BigInt((await storage.db.selectFrom('customers').select('transaction_count').where('id', '=', customerId).executeTakeFirstOrThrow()).transaction_count);
    const before = await countOf();
    const rolledBack = new Error('roll back');
    await expect(
      storage.db.transaction().execute(async (trx) => {
        const row = await addToCount.executeTakeFirstOrThrow(trx, { customerId, delta: 5n });
        expect(BigInt(row.transaction_count)).toBe(before + 5n);
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    expect(await countOf()).toBe(before);
    await storage.db.transaction().execute((trx) => addToCount.execute(trx, { customerId, delta: 2n }));
    expect(await countOf()).toBe(before + 2n);
  });

  it('apply the condition of a conditional update: no row when it fails', async () => {
    expect(await addToCount.executeTakeFirst(storage.db, { customerId, delta: -1_000_000n })).toBeUndefined();
  });

  it('insert rows in one statement, whatever their number', async () => {
    const journalId = randomUUID();
    await storage.db.insertInto('ledger_journal').values({ id: journalId, customer_id: customerId, kind: 'test', reference_id: randomUUID(), created_at: now }).execute();
    const rows = [...postingRows(journalId, 2), ...postingRows(journalId, 4)];
    await insertPostings.execute(storage.db, rows.slice(0, 2));
    await insertPostings.execute(storage.db, rows.slice(2));
    const read = await storage.db
      .selectFrom('ledger_postings')
      .select(['journal_id', 'account_kind', 'account_id', 'asset', 'amount_minor'])
      .where('journal_id', '=', journalId)
      .orderBy('sequence')
      .execute();
    expect(read).toEqual(rows);
  });
});
