import type { CompiledQuery } from 'kysely';

/**
 * PostgreSQL: statements prepared once per connection under a name, then only bound and executed — for the hot
 * statements of the background workers whose text never changes (their rows passed as arrays), which PostgreSQL
 * would otherwise parse and plan on every execution (a quarter of a millisecond for the webhook attempts' record,
 * docs/benchmarks.md). A prepared statement is parsed once; PostgreSQL's plan cache then reuses its generic plan
 * when that costs no more than the plans made for the values given, and plans afresh otherwise. A statement is
 * named by its text: the pool's clients (storage/database.ts) send a text that was named here with its name, so the
 * statement is prepared on a connection's first use of it. Kept for the life of the process: only a handful of texts
 * are ever named.
 */
const namesByText = new Map<string, string>();

/** Names `query`'s text, once: later executions of the same text on a connection reuse its prepared statement. */
export function nameStatement<Row>(name: string, query: CompiledQuery<Row>): CompiledQuery<Row> {
  const known = namesByText.get(query.sql);
  if (known === undefined) {
    if ([...namesByText.values()].includes(name)) throw new Error(`the statement name ${name} is given to two texts`);
    namesByText.set(query.sql, name);
  } else if (known !== name) {
    throw new Error(`one statement text is named both ${known} and ${name}`);
  }
  return query;
}

/** The name of a statement text, when it has one. */
export function statementNameOf(text: string): string | undefined {
  return namesByText.get(text);
}
