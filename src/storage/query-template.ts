import {
  NoResultError,
  type Compilable,
  type CompiledQuery,
  type DeleteResult,
  type DialectAdapter,
  type InsertResult,
  type Kysely,
  type QueryNode,
  type UpdateResult,
} from 'kysely';
import type { Database } from './tables.js';

/**
 * Queries compiled once and executed many times, for the statements every payment runs.
 *
 * Building a query with Kysely and compiling it to SQL costs tens of microseconds of CPU each time, and a payment
 * runs about a dozen statements whose SQL never changes: only the values do. A template builds its query once with
 * the ordinary, type-checked builder, passing placeholders where the values go. Kysely binds a placeholder like any
 * other value, so the compiled query lists it among its parameters, in SQL order. Each execution sends that same SQL
 * with the caller's values put where the placeholders are; parameters that are not placeholders (constants written
 * in the builder) are sent as they are. The SQL text and the parameters are those the builder would produce.
 *
 * Executing sends the same CompiledQuery shape through the same executor (the connection of a Transaction when given
 * one), so drivers, logging and PostgreSQL's handling of values see no difference.
 */

/** Stands where a value goes while the query is built: the parameter `name` of the `row`-th parameter object. */
class Placeholder {
  constructor(
    readonly row: number,
    readonly name: string,
  ) {}
}

/** A Transaction is a Kysely too. */
type Db = Kysely<Database>;

/** A statement without RETURNING yields no rows (Kysely's builder would summarise them as an InsertResult etc.). */
type ResultRow<Output> = Output extends InsertResult | UpdateResult | DeleteResult ? never : Output;

/** `Names` when it lists every key of Params; otherwise a type naming the missing ones, which no list matches. */
type EveryName<Params, Names extends readonly string[]> = [Exclude<keyof Params, Names[number]>] extends [never]
  ? Names
  : readonly [`missing parameter name: ${Exclude<keyof Params, Names[number]> & string}`];

export interface QueryTemplate<Params, Row> {
  execute(db: Db, params: Params): Promise<Row[]>;
  executeTakeFirst(db: Db, params: Params): Promise<Row | undefined>;
  /** Throws Kysely's NoResultError when there is no row, as the builder's executeTakeFirstOrThrow does. */
  executeTakeFirstOrThrow(db: Db, params: Params): Promise<Row>;
  /** The query with these values, for an executor other than Kysely's (Storage.selectArrays). */
  compile(db: Db, params: Params): CompiledQuery;
}

/** The parameter objects as the build sees them: placeholders where the values will be. */
type PlaceholderRows = Array<Record<string, Placeholder>>;

/**
 * The compiled SQL depends on the dialect's compiler, so it is kept per dialect adapter, which a Kysely instance
 * shares with its transactions; then per number of parameter objects (one, or one per inserted row).
 */
class CompiledTemplate<Params, Row> implements QueryTemplate<Params, Row> {
  readonly #compiled = new WeakMap<DialectAdapter, Map<number, CompiledQuery>>();

  constructor(
    private readonly names: readonly string[],
    private readonly build: (db: Db, rows: PlaceholderRows) => Compilable<unknown>,
    /** The parameter objects of one execution, in the order the build received their placeholders. */
    private readonly parameterObjects: (params: Params) => readonly object[],
  ) {}

  async execute(db: Db, params: Params): Promise<Row[]> {
    return (await this.#run(db, params)).rows;
  }

  async executeTakeFirst(db: Db, params: Params): Promise<Row | undefined> {
    return (await this.#run(db, params)).rows[0];
  }

  async executeTakeFirstOrThrow(db: Db, params: Params): Promise<Row> {
    const { compiled, rows } = await this.#run(db, params);
    // Templates are built from query builders, whose root node is a query.
    if (rows[0] === undefined) throw new NoResultError(compiled.query as QueryNode);
    return rows[0];
  }

  compile(db: Db, params: Params): CompiledQuery {
    const objects = this.parameterObjects(params);
    const compiled = this.#compiledFor(db, objects.length);
    const parameters = compiled.parameters.map((parameter) => {
      if (!(parameter instanceof Placeholder)) return parameter;
      const value = (objects[parameter.row] as Record<string, unknown>)[parameter.name];
      // The builder would have left an undefined column out of the statement; the compiled SQL has it, so refuse.
      if (value === undefined) throw new Error(`query template: parameter "${parameter.name}" is undefined in: ${compiled.sql}`);
      return value;
    });
    return { ...compiled, parameters };
  }

  async #run(db: Db, params: Params): Promise<{ compiled: CompiledQuery; rows: Row[] }> {
    const compiled = this.compile(db, params);
    const result = await db.getExecutor().executeQuery<Row>(compiled);
    return { compiled, rows: result.rows };
  }

  #compiledFor(db: Db, objectCount: number): CompiledQuery {
    const executor = db.getExecutor();
    // withSchema and withPlugin derive a Kysely that shares the adapter but compiles other SQL: the cache would mix them.
    if (executor.plugins.length > 0) throw new Error('query templates run on a Kysely without plugins (withSchema, withPlugin)');
    const adapter = executor.adapter;
    let byObjectCount = this.#compiled.get(adapter);
    if (byObjectCount === undefined) {
      byObjectCount = new Map();
      this.#compiled.set(adapter, byObjectCount);
    }
    let compiled = byObjectCount.get(objectCount);
    if (compiled === undefined) {
      // Object key order is the names' order: for an insert of whole rows, that is the order of the columns.
      const rows = Array.from({ length: objectCount }, (_, row) => Object.fromEntries(this.names.map((name) => [name, new Placeholder(row, name)])));
      compiled = this.build(db, rows).compile();
      assertEveryPlaceholderBound(compiled, rows);
      byObjectCount.set(objectCount, compiled);
    }
    return compiled;
  }
}

/**
 * Kysely leaves out an insert column whose value is undefined; a build that did so (or dropped a value otherwise)
 * would compile SQL that silently ignores that parameter.
 */
function assertEveryPlaceholderBound(compiled: CompiledQuery, rows: PlaceholderRows): void {
  const bound = new Set(compiled.parameters.filter((parameter) => parameter instanceof Placeholder));
  for (const placeholder of rows.flatMap((row) => Object.values(row))) {
    if (!bound.has(placeholder)) throw new Error(`query template: parameter "${placeholder.name}" is not bound in: ${compiled.sql}`);
  }
}

/**
 * A query with named parameters. `names` lists every key of Params (TypeScript checks it); `build` receives
 * placeholders typed as the values, so the builder checks them as it would real values. For an insert of a whole row,
 * `build` may pass the parameter object itself to `values`, and the columns come in the order of `names`.
 *
 *   const findKey = queryTemplate<{ keyHash: string }>()(['keyHash'], (db, { keyHash }) =>
 *     db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash));
 *   const row = await findKey.executeTakeFirst(db, { keyHash });
 */
export function queryTemplate<Params extends object>() {
  return <const Names extends ReadonlyArray<keyof Params & string>, Output>(
    names: Names & EveryName<Params, Names>,
    build: (db: Db, params: Params) => Compilable<Output>,
  ): QueryTemplate<Params, ResultRow<Output>> =>
    new CompiledTemplate<Params, ResultRow<Output>>(names, (db, rows) => build(db, rows[0] as unknown as Params), (params) => [params]);
}

/**
 * An insert of any number of rows in one statement. The SQL differs with the number of rows, so it is compiled once
 * per number seen. `columns` lists every key of Row, in the order the statement lists them.
 */
export function insertRowsTemplate<Row extends object>() {
  return <const Columns extends ReadonlyArray<keyof Row & string>, Output>(
    columns: Columns & EveryName<Row, Columns>,
    build: (db: Db, rows: Row[]) => Compilable<Output>,
  ): QueryTemplate<readonly Row[], ResultRow<Output>> =>
    new CompiledTemplate<readonly Row[], ResultRow<Output>>(columns, (db, rows) => build(db, rows as unknown as Row[]), (rows) => rows);
}
