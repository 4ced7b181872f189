import fs from 'node:fs';
import { jitteredBackoffMs } from '../backoff.js';
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { Kysely, PostgresAdapter, PostgresDialect, sql, type CompiledQuery, type DialectAdapter, type Transaction } from 'kysely';
import pg from 'pg';
import { ConfigError, type Config } from '../config/config.js';
import {
  connectionRetryAttemptsMax,
  connectionRetryBaseMs,
  moneyOperationsPerCustomerDefault,
  postgresConnectTimeoutMs,
  postgresKeepAliveInitialDelayMs,
  postgresPoolWaitTimeoutMs,
  preparedStatementCacheSize,
  sqliteBusyTimeoutMs,
  sqlitePageCacheKib,
  transactionAttemptsMax,
  transactionRetryBaseMs,
} from '../config/limits.js';
import { storageFaultOf } from './faults.js';
import { statementNameOf } from './named-statements.js';
import { GroupAbandonedError, GroupCommitDriver, GroupCommitSqliteDialect, type GroupCommitStats } from './sqlite-group-commit.js';
import { makePrivate, privateDirectoryMode, privateFileMode } from './files.js';
import { PerKeyLimiter } from './per-key-limiter.js';
import type { Database } from './tables.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Storage {
  readonly db: Kysely<Database>;
  readonly dialect: Dialect;
  /** Human-readable location for logs, without credentials. */
  readonly location: string;
  /** SQLite only: how many commits made how many transactions durable (sqlite-group-commit.ts). */
  readonly groupCommits?: GroupCommitStats;
  /**
   * Runs a read outside any transaction and returns each row as an array of its values in select order, for the
   * hot read paths where building named-property rows is a large share of the cost.
   */
  selectArrays(query: CompiledQuery): Promise<unknown[][]>;
  /**
   * The one way to run a transaction: `work` may run more than once, so it must do nothing but database work (or
   * work that is safe to repeat). Transient failures are retried a bounded number of times: on PostgreSQL a
   * serialization failure or deadlock (40001, 40P01) and a connection lost before the COMMIT was sent, on SQLite a
   * commit group lost to another member's failure (then the transaction runs alone). Inside `work`, writes go
   * through `trx`: a write through `db` is refused.
   */
  transaction<T>(work: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Runs one customer's money operation, at most `moneyOperationsPerCustomer` of them at once per process on
   * PostgreSQL: a busy customer's operations queue on its row lock, and without the cap they would hold every pooled
   * connection while they wait, stalling every other customer (docs/operations.md). SQLite has one writer anyway.
   */
  perCustomer<T>(customerId: string, work: () => Promise<T>): Promise<T>;
  /**
   * SQLite only, for tests: runs a PRAGMA on the writing connection (`max_page_count` makes the file full,
   * `query_only` read-only, as a full or read-only disk would).
   */
  readonly sqliteWriterPragma?: (pragma: string) => unknown;
  /**
   * Told after every committed write (a transaction, a money movement): the storage takes writes again, so a storage
   * fault noted earlier has passed (storage/fault-state.ts). Requests and workers alike commit through here.
   */
  readonly committed: CommitSignal;
  close(): Promise<void>;
}

/** Listeners of committed writes; one call per commit, cheap when nobody listens. */
class CommitSignal {
  #listeners: Array<() => void> = [];

  listen(listener: () => void): void {
    this.#listeners.push(listener);
  }

  notify(): void {
    for (const listener of this.#listeners) listener();
  }
}

const postgresTransientCodes = new Set(['40001', '40P01']);

function isTransient(error: unknown, dialect: Dialect): boolean {
  if (dialect === 'sqlite') return error instanceof GroupAbandonedError;
  return postgresTransientCodes.has((error as { code?: string })?.code ?? '');
}

/**
 * PostgreSQL: a transaction lost its connection before its COMMIT was sent. The server discards a transaction whose
 * connection ends uncommitted, so nothing of it happened and it can run again (docs/operations.md "Faults").
 */
class LostBeforeCommitError extends Error {
  override name = 'LostBeforeCommitError';
  constructor(override readonly cause: unknown) {
    super((cause as Error)?.message ?? String(cause));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Storage.transaction for both dialects. */
export async function retryTransient<T>(dialect: Dialect, attempt: (rerun: boolean) => Promise<T>): Promise<T> {
  let connectionRetries = 0;
  for (let attempts = 1; ; attempts += 1) {
    try {
      return await attempt(attempts > 1);
    } catch (error) {
      if (error instanceof LostBeforeCommitError) {
        if (connectionRetries >= connectionRetryAttemptsMax) throw error.cause;
        connectionRetries += 1;
        await sleep(jitteredBackoffMs(connectionRetries, connectionRetryBaseMs));
        continue;
      }
      if (attempts >= transactionAttemptsMax || !isTransient(error, dialect)) throw error;
      if (dialect === 'postgres') await sleep(transactionRetryBaseMs * 2 ** attempts * Math.random());
    }
  }
}

/**
 * On SQLite a re-run after GroupAbandonedError commits alone (`driver.runAlone`). PostgreSQL runs it again after a
 * serialization failure or deadlock, and after a connection lost before COMMIT; a connection lost while the COMMIT
 * was on its way leaves the outcome unknown, so that failure is passed on (503), never run again.
 */
function transactionRunner(db: Kysely<Database>, dialect: Dialect, committed: CommitSignal, driver?: GroupCommitDriver): Storage['transaction'] {
  const run = dialect === 'sqlite' ? sqliteTransactionRunner(db, driver) : postgresTransactionRunner(db);
  return async (work) => {
    const result = await run(work);
    committed.notify();
    return result;
  };
}

function sqliteTransactionRunner(db: Kysely<Database>, driver: GroupCommitDriver | undefined): Storage['transaction'] {
  return (work) => retryTransient('sqlite', (rerun) => (rerun && driver ? driver.runAlone(() => db.transaction().execute(work)) : db.transaction().execute(work)));
}

function postgresTransactionRunner(db: Kysely<Database>): Storage['transaction'] {
  const dialect = 'postgres';
  return (work) =>
    retryTransient(dialect, async () => {
      // Only a transaction that had its connection and lost it before COMMIT is run again here: a connection that
      // could not be made was tried again already (retryingConnects), and a timeout is not tried at all.
      let begun = false;
      let committing = false;
      try {
        return await db.transaction().execute(async (trx) => {
          begun = true;
          const result = await work(trx);
          committing = true;
          return result;
        });
      } catch (error) {
        if (begun && !committing && storageFaultOf(error, dialect) === 'unavailable') throw new LostBeforeCommitError(error);
        throw error;
      }
    });
}

/** PRAGMA synchronous = FULL, as SQLite reads it back. */
const sqliteSynchronousFull = 2;
const sqliteFileName = 'customer-api.sqlite';
/** SQLite: how long a transaction or write may wait for the one writing connection, as long as for a pooled one. */
const sqliteWriterWaitMs = postgresPoolWaitTimeoutMs;

// pg returns int8 (bigint, count(*)) as strings by default; money is bigint minor units, so parse it as bigint.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => BigInt(value));

/**
 * Kysely prepares every query anew; better-sqlite3 statements are reusable, so keep the most recent ones.
 * A statement is only reused once the previous use has finished (better-sqlite3 is synchronous).
 */
function withStatementCache(database: BetterSqlite3.Database): BetterSqlite3.Database {
  const cache = new Map<string, BetterSqlite3.Statement>();
  const prepare = database.prepare.bind(database);
  database.prepare = ((source: string) => {
    let statement = cache.get(source);
    if (statement === undefined) {
      statement = prepare(source);
      if (cache.size >= preparedStatementCacheSize) cache.delete(cache.keys().next().value as string);
      cache.set(source, statement);
    }
    return statement;
  }) as BetterSqlite3.Database['prepare'];
  return database;
}

function ensureWritableDirectory(dataDir: string): void {
  try {
    // Private to the server's user: created so, or tightened if an earlier version left it readable by others.
    fs.mkdirSync(dataDir, { recursive: true, mode: privateDirectoryMode });
    makePrivate(dataDir, privateDirectoryMode);
    fs.accessSync(dataDir, fs.constants.W_OK);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'not writable';
    throw new ConfigError(`DATA_DIR ${dataDir} is not a writable directory (${reason})`);
  }
}

/**
 * The database holds every customer's data and the secret that signs CSRF tokens, so its files are readable by the
 * server's user only: created 0600 (SQLite gives its -wal and -shm files the mode of the database file), and
 * tightened to 0600 if an earlier version left them readable by others.
 */
function makeDatabaseFilesPrivate(file: string): void {
  fs.closeSync(fs.openSync(file, 'a', privateFileMode));
  for (const candidate of [file, `${file}-wal`, `${file}-shm`]) makePrivate(candidate, privateFileMode);
}

/**
 * better-sqlite3 ships its binary inside the npm package, built for Node-API 10 (Node 24, and Node 22 from 22.14). An
 * older Node (Debian's Node 20, Node 22.12) loads it and then dies of a segmentation fault when the first database
 * opens, without a word: refuse with a sentence instead (docs/decisions/0010-node-24-runtime.md).
 */
const sqliteDriverNodeApiVersion = 10;

export function checkSqliteDriverRuntime(versions: { node: string; napi?: string | undefined } = process.versions): void {
  if (Number(versions.napi ?? 0) < sqliteDriverNodeApiVersion) {
    throw new ConfigError(
      `the SQLite driver needs Node.js 24 (Node-API ${sqliteDriverNodeApiVersion}), this is Node.js ${versions.node}; the README's requirements say how to install it`,
    );
  }
}

export function openSqliteDatabase(dataDir: string): BetterSqlite3.Database {
  checkSqliteDriverRuntime();
  ensureWritableDirectory(dataDir);
  const file = path.join(dataDir, sqliteFileName);
  let database: BetterSqlite3.Database;
  try {
    makeDatabaseFilesPrivate(file);
    database = new BetterSqlite3(file);
  } catch (error) {
    throw new ConfigError(`cannot open the SQLite database ${file}: ${(error as Error).message}`);
  }
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = FULL');
  database.pragma('foreign_keys = ON');
  database.pragma(`busy_timeout = ${sqliteBusyTimeoutMs}`);
  database.pragma(`cache_size = -${sqlitePageCacheKib}`);
  assertSqlitePragmas(database);
  // Money columns are bigint; without this better-sqlite3 would hand them back as lossy JS numbers.
  database.defaultSafeIntegers(true);
  return database;
}

/** Reads the pragmas back: a filesystem that cannot do WAL, for example, must stop start-up, not weaken it. */
function assertSqlitePragmas(database: BetterSqlite3.Database): void {
  const read = (name: string) => database.pragma(name, { simple: true });
  const problems: string[] = [];
  if (String(read('journal_mode')).toLowerCase() !== 'wal') problems.push('journal_mode is not WAL');
  if (Number(read('synchronous')) !== sqliteSynchronousFull) problems.push('synchronous is not FULL');
  if (Number(read('foreign_keys')) !== 1) problems.push('foreign_keys is not ON');
  if (Number(read('busy_timeout')) < sqliteBusyTimeoutMs) problems.push(`busy_timeout is below ${sqliteBusyTimeoutMs} ms`);
  if (problems.length > 0) {
    database.close();
    throw new ConfigError(`the SQLite database cannot run safely: ${problems.join(', ')}`);
  }
}

function describePostgres(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `postgres://${url.hostname}:${url.port || 5432}${url.pathname}`;
}

export interface StorageOptions {
  /** PostgreSQL only: the schema to use (tests give each app its own). */
  readonly postgresSchema?: string;
  /** SQLite only: how long a transaction or write waits for the writer before it fails (default 30 s). */
  readonly sqliteWriterWaitMs?: number;
}

export async function openStorage(
  config: Pick<Config, 'dataDir' | 'databaseUrl' | 'databasePoolSize'> & Partial<Pick<Config, 'moneyOperationsPerCustomer'>>,
  options: StorageOptions = {},
): Promise<Storage> {
  if (config.databaseUrl === undefined) {
    const writer = withStatementCache(openSqliteDatabase(config.dataDir));
    const reader = withStatementCache(openSqliteDatabase(config.dataDir));
    // The reading connection only ever runs statements SQLite calls read-only; this makes sure of it.
    reader.pragma('query_only = ON');
    // Every grouped transaction runs in a savepoint, whose journal of original pages spills to a temporary file
    // past 64 KiB (a payment touches more): kept in memory, a payment's inserts cost a third of the time.
    writer.pragma('temp_store = MEMORY');
    const driver = new GroupCommitDriver(writer, reader, options.sqliteWriterWaitMs ?? sqliteWriterWaitMs);
    const db = new Kysely<Database>({ dialect: new GroupCommitSqliteDialect(driver) });
    const committed = new CommitSignal();
    return {
      db,
      dialect: 'sqlite',
      location: path.join(config.dataDir, sqliteFileName),
      groupCommits: driver.stats,
      selectArrays: async (query) => driver.selectArrays(query),
      transaction: transactionRunner(db, 'sqlite', committed, driver),
      committed,
      perCustomer: (_customerId, work) => work(),
      sqliteWriterPragma: (pragma) => driver.writerPragma(pragma),
      close: () => db.destroy(),
    };
  }
  const location = describePostgres(config.databaseUrl);
  const connection = {
    // Names the server's connections in pg_stat_activity; an application_name in DATABASE_URL takes precedence.
    application_name: postgresApplicationName,
    connectionString: config.databaseUrl,
    keepAlive: true,
    keepAliveInitialDelayMillis: postgresKeepAliveInitialDelayMs,
    ...(options.postgresSchema ? { options: `-c search_path=${options.postgresSchema}` } : {}),
  };
  // Start-up gives up on an unreachable server after this long (one clear line instead of a hang).
  const probe = new pg.Client({ ...connection, connectionTimeoutMillis: postgresConnectTimeoutMs });
  try {
    await probe.connect();
  } catch (error) {
    throw new ConfigError(`cannot connect to PostgreSQL at ${location}: ${(error as Error).message}`);
  } finally {
    await probe.end().catch(() => undefined);
  }
  const pool = new pg.Pool({ ...connection, Client: QuickConnectClient, max: config.databasePoolSize, connectionTimeoutMillis: postgresPoolWaitTimeoutMs });
  // A pooled client whose connection ends (a restart, pg_terminate_backend, a dropped TCP connection) emits 'error',
  // and an 'error' nobody listens to ends the process. The pool listens while a client is idle (and removes it);
  // while a query or transaction has it checked out nothing does, though that query fails with the same error.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db = new Kysely<Database>({ dialect: new SchemaLockingPostgresDialect({ pool: retryingConnects(pool) }) });
  const selectArrays = async (query: CompiledQuery) => {
    const result = await pool.query<unknown[]>({ text: query.sql, values: [...query.parameters], rowMode: 'array' });
    return result.rows;
  };
  const perCustomer = new PerKeyLimiter(config.moneyOperationsPerCustomer ?? moneyOperationsPerCustomerDefault);
  const committed = new CommitSignal();
  return {
    db,
    dialect: 'postgres',
    location,
    selectArrays,
    transaction: transactionRunner(db, 'postgres', committed),
    committed,
    perCustomer: (customerId, work) => perCustomer.run(customerId, work),
    close: () => db.destroy(),
  };
}

const postgresApplicationName = 'customer-api';

/** The first key of the migration lock: "CAPI", this server's migrations; the second is the schema's hash. */
const migrationLockKey = 0x43415049;
/** The migration lock's two keys, as the arguments of PostgreSQL's advisory lock functions. */
const migrationLockKeys = sql`${sql.lit(migrationLockKey)}, hashtext(current_schema())`;

/**
 * Kysely's migration lock on PostgreSQL is one advisory lock id for the whole database, so the instances of every
 * schema in it (other deployments, every test) would wait for each other's migrations: this one is the schema's.
 */
class SchemaMigrationLockAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`select pg_advisory_lock(${migrationLockKeys})`.execute(db);
  }

  override async releaseMigrationLock(db: Kysely<unknown>): Promise<void> {
    await sql`select pg_advisory_unlock(${migrationLockKeys})`.execute(db);
  }
}

/**
 * PostgreSQL: takes the migration lock until the end of the transaction `trx`, for schema work done after the
 * migrations (storage/migrate.ts): it waits for another instance's migrations, and they for it.
 */
export async function takeMigrationLockForTransaction(trx: Transaction<Database>): Promise<void> {
  await sql`select pg_advisory_xact_lock(${migrationLockKeys})`.execute(trx);
}

class SchemaLockingPostgresDialect extends PostgresDialect {
  override createAdapter(): DialectAdapter {
    return new SchemaMigrationLockAdapter();
  }
}

/**
 * pg applies connectionTimeoutMillis both to the wait for a pooled connection and to making a new one: the pool's
 * wait stays long (a busy pool), while a new connection to a database that does not answer fails quickly.
 */
class QuickConnectClient extends pg.Client {
  constructor(config: pg.ClientConfig = {}) {
    super({ ...config, connectionTimeoutMillis: postgresConnectTimeoutMs });
    // A statement named in storage/named-statements.ts is sent under its name: prepared on this connection once.
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    this.query = ((...args: unknown[]) => {
      // Kysely's form, query(text, values); a callback's form is left as it is.
      const [text, values, callback] = args;
      const name = typeof text === 'string' && callback === undefined && (values === undefined || Array.isArray(values)) ? statementNameOf(text) : undefined;
      return name === undefined ? query(...args) : query({ name, text, values });
    }) as pg.Client['query'];
  }
}

/** pg's failure to connect that came quickly (refused, reset, "starting up"): another try may well succeed. */
function isQuickConnectFailure(error: unknown): boolean {
  const message = (error as Error)?.message ?? '';
  return storageFaultOf(error, 'postgres') === 'unavailable' && !message.includes('timeout');
}

/**
 * The pool as Kysely sees it, except that a connection refused or reset while being made is tried again a few
 * times with jittered waits: nothing was sent, so any query or transaction can wait for it (a restart of
 * PostgreSQL refuses connections for a moment). A timeout is not tried again: it already took its time.
 */
function retryingConnects(pool: pg.Pool) {
  return {
    Client: QuickConnectClient,
    options: pool.options,
    end: () => pool.end(),
    async connect(): Promise<pg.PoolClient> {
      for (let retries = 0; ; retries += 1) {
        try {
          return await pool.connect();
        } catch (error) {
          if (retries >= connectionRetryAttemptsMax || !isQuickConnectFailure(error)) throw error;
          await sleep(jitteredBackoffMs(retries + 1, connectionRetryBaseMs));
        }
      }
    },
  };
}

/** A cheap round trip proving the database answers. */
export async function pingDatabase(storage: Storage): Promise<void> {
  await sql`select 1`.execute(storage.db);
}
