import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Storage } from '../../src/storage/database.js';
import { nameStatement } from '../../src/storage/named-statements.js';
import { testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/**
 * Statements prepared by name (src/storage/named-statements.ts): on PostgreSQL a named text is prepared once on each
 * connection that runs it, under its name, and answers as the same text unnamed does; other texts are not prepared.
 */
describe.runIf(testDialect === 'postgres')('named statements on PostgreSQL', () => {
  let storage: Storage;

  useFreshStorage((fresh) => (storage = fresh));

  it('prepares a named text once per connection, under its name, with the answers of the text unnamed', async () => {
    const doubled = (values: number[]) => sql<{ n: number }>`select n * 2 as n from unnest(cast(${values} as integer[])) as given (n) order by n`;
    await storage.db.connection().execute(async (db) => {
      const named = nameStatement('test_doubled', doubled([1, 2]).compile(db));
      expect((await db.executeQuery(named)).rows).toEqual([{ n: 2 }, { n: 4 }]);
      // The same text with other values: the prepared statement again, bound to them.
      expect((await db.executeQuery(doubled([5, 3, 4]).compile(db))).rows).toEqual([{ n: 6 }, { n: 8 }, { n: 10 }]);
      await sql`select 1 as unnamed`.execute(db);
      const { rows } = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements order by name`.execute(db);
      expect(rows).toEqual([{ name: 'test_doubled', statement: named.sql }]);
    });
  });

  it('refuses one name for two texts, and two names for one text', () => {
    const first = sql`select 1 as first_named`.compile(storage.db);
    nameStatement('test_first', first);
    expect(() => nameStatement('test_first', sql`select 2 as other_text`.compile(storage.db))).toThrow(/two texts/);
    expect(() => nameStatement('test_second', first)).toThrow(/named both/);
  });
});
