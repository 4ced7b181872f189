import type BetterSqlite3 from 'better-sqlite3';
import {
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
} from 'kysely';
import { sqliteGroupTransactionsMax } from '../config/limits.js';

/**
 * Group commit for the embedded database (docs/decisions/0004-sqlite-group-commit.md).
 *
 * With synchronous=FULL every COMMIT waits for an fsync, about a millisecond here, and better-sqlite3 waits on the
 * event loop's thread: one commit per payment caps the whole server at the disk's flush rate. Instead, the
 * transactions that run during one turn of the event loop share one database transaction: each runs inside its own
 * SAVEPOINT (so one that fails rolls back alone), and a single COMMIT, scheduled with setImmediate, makes them all
 * durable at once. No caller is answered before the COMMIT that holds its changes has returned, and if that COMMIT
 * fails every transaction in the group fails with it.
 *
 * Reads outside a transaction go to a second connection of the same file. In WAL mode it sees only committed data,
 * so nothing outside the group ever reads a change that is not yet durable, and reads never wait for writers.
 */

/** What an operator can watch: commits made, the transactions (or single writes) they made durable, writer time. */
export interface GroupCommitStats {
  commits: number;
  transactions: number;
  /** Seconds the writing connection has been held, in total (by transactions, single writes and COMMITs). */
  writerHeldSeconds: number;
  /** Told each time the writer is let go, with how long it was held (the metrics histogram listens). */
  onWriterReleased?: (heldSeconds: number) => void;
}

/**
 * A transaction that did nothing wrong lost its work because another member of its group made SQLite roll the whole
 * group back, or because the group's COMMIT failed. Storage.transaction runs it again, alone
 * (GroupCommitDriver.runAlone), so that whichever member is at fault fails by itself.
 */
export class GroupAbandonedError extends Error {
  override name = 'GroupAbandonedError';
  constructor(override readonly cause: unknown) {
    super(`the commit group was rolled back: ${(cause as Error)?.message ?? String(cause)}`);
  }
}

/**
 * A transaction or write waited longer than the driver's `writerWaitMs` for the writing connection. Under any sane
 * load the writer is free again within milliseconds; the usual cause is a write through `storage.db` (or a second
 * `storage.transaction`) inside a transaction callback, which waits for the very transaction it runs in.
 */
export class WriterWaitTimeoutError extends Error {
  override name = 'WriterWaitTimeoutError';
  constructor(waitedMs: number) {
    super(
      `waited ${waitedMs / 1000} s for the database writer: a write through storage.db (or another storage.transaction) ` +
        'inside a transaction callback waits for that very transaction for ever; write through the callback’s trx instead',
    );
  }
}

/** Strict first-come-first-served lock on the writing connection; `released` hears how long each holder kept it. */
class WriterLock {
  #held = false;
  #heldSince = 0;
  readonly #waiting: Array<{ grant: () => void }> = [];

  constructor(private readonly released: (heldSeconds: number) => void) {}

  /** Resolves once the lock is this caller's; with `timeoutMs`, rejects with WriterWaitTimeoutError after that long. */
  lock(timeoutMs?: number): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      this.#heldSince = performance.now();
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.#waiting.splice(this.#waiting.indexOf(waiter), 1);
              reject(new WriterWaitTimeoutError(timeoutMs));
            }, timeoutMs);
      this.#waiting.push(waiter);
    });
  }

  unlock(): void {
    const now = performance.now();
    const heldSeconds = (now - this.#heldSince) / 1000;
    this.#heldSince = now;
    const next = this.#waiting.shift();
    if (next) next.grant();
    else this.#held = false;
    // Told after the hand-over: a listener that throws cannot keep the lock.
    this.released(heldSeconds);
  }
}

/** The transactions sharing one database transaction, and the promise of its COMMIT. */
class CommitGroup {
  transactions = 0;
  readonly durable: Promise<void>;
  resolve!: () => void;
  reject!: (error: unknown) => void;

  constructor() {
    this.durable = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // A group whose only transaction rolled back has nobody waiting on it; its failure must not be "unhandled".
    this.durable.catch(() => undefined);
  }
}

/** What Kysely calls a connection: one caller's use of the database, a single query or a transaction. */
class Session implements DatabaseConnection {
  /** Inside a SAVEPOINT of the current group, holding the writer lock. */
  inTransaction = false;
  holdsWriter = false;
  /** Began while a re-run was pending (GroupCommitDriver.runAlone): its group holds it alone and commits at once. */
  solo = false;
  /** The group the transaction began in: if that group is abandoned, the rest of the transaction must not run. */
  group: CommitGroup | undefined;

  constructor(private readonly driver: GroupCommitDriver) {}

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    return this.driver.execute<R>(this, query);
  }

  /** Runs `work` at once, its statements going straight to the writer inside this transaction (runOnWriter). */
  runOnWriter<T>(work: (run: WriterStatement) => T): T {
    if (!this.inTransaction) throw new Error('statements run on the writer only inside a transaction of the group commit');
    return work((query) => this.driver.executeInTransaction(this, query));
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming queries are not supported by the SQLite storage');
  }
}

/** A statement of a transaction, run synchronously on the writer. */
export type WriterStatement = <R>(query: CompiledQuery) => QueryResult<R>;

/**
 * Runs `work` inside the transaction `trx` (of Storage.transaction on SQLite) with its statements executed
 * synchronously on the writer, as one member of the group like any other transaction. better-sqlite3 runs a statement
 * synchronously anyway: going through Kysely's executor costs each statement a chain of promises and async frames
 * for nothing, and the money path, which runs about ten statements per payment, is the hottest path there is.
 */
export async function runOnWriter<T>(trx: Kysely<any>, work: (run: WriterStatement) => T): Promise<T> {
  return trx.getExecutor().provideConnection(async (connection) => {
    if (!(connection instanceof Session)) throw new Error('runOnWriter runs inside a transaction of the SQLite group commit');
    return connection.runOnWriter(work);
  });
}

function runStatement<R>(statement: BetterSqlite3.Statement, parameters: readonly unknown[]): QueryResult<R> {
  if (statement.reader) return { rows: statement.all(parameters) as R[] };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

export class GroupCommitDriver implements Driver {
  readonly #writer: BetterSqlite3.Database;
  readonly #reader: BetterSqlite3.Database;
  readonly #writerWaitMs: number;
  #group: CommitGroup | undefined;
  /** Re-runs in progress (runAlone): while there are any, every transaction that begins commits in a group of its own. */
  #aloneRuns = 0;
  #commitScheduled = false;
  readonly stats: GroupCommitStats = { commits: 0, transactions: 0, writerHeldSeconds: 0 };
  readonly #writerLock = new WriterLock((heldSeconds) => {
    this.stats.writerHeldSeconds += heldSeconds;
    this.stats.onWriterReleased?.(heldSeconds);
  });

  /**
   * `reader` must be a second connection to the file `writer` has open, in WAL mode. A transaction or write waits at
   * most `writerWaitMs` for the writer (WriterWaitTimeoutError).
   */
  constructor(writer: BetterSqlite3.Database, reader: BetterSqlite3.Database, writerWaitMs: number) {
    this.#writer = writer;
    this.#reader = reader;
    this.#writerWaitMs = writerWaitMs;
  }

  /**
   * Runs `work` (a transaction's re-run after GroupAbandonedError) so that its transaction commits in a group of its
   * own. Transactions that begin meanwhile commit alone too: for that short while nothing is grouped, which costs
   * fsyncs, never correctness.
   */
  async runAlone<T>(work: () => Promise<T>): Promise<T> {
    this.#aloneRuns += 1;
    try {
      return await work();
    } finally {
      this.#aloneRuns -= 1;
    }
  }

  async init(): Promise<void> {}

  /** Storage.sqliteWriterPragma: a PRAGMA on the writing connection (tests make the file full or read-only). */
  writerPragma(pragma: string): unknown {
    return this.#writer.pragma(pragma);
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new Session(this);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    await this.#lockWriter(session);
    session.solo = this.#aloneRuns > 0;
    // A solo transaction starts a group of its own: whatever the earlier members did is committed first.
    if (session.solo) this.#commitGroup();
    this.#openGroup();
    this.#control('savepoint member');
    session.inTransaction = true;
    session.group = this.#group;
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    if (!session.inTransaction) return;
    session.inTransaction = false;
    const group = session.group;
    if (!group || group !== this.#group) throw new GroupAbandonedError(new Error('the group was rolled back by another member'));
    this.#control('release member');
    group.transactions += 1;
    if (session.solo) {
      // Alone in its group, it commits now, and a failure is its own: no retry hides it.
      try {
        this.#commitGroup();
        await group.durable.catch((error: unknown) => {
          throw error instanceof GroupAbandonedError ? error.cause : error;
        });
      } finally {
        this.#unlockWriter(session);
      }
      return;
    }
    this.#unlockWriter(session);
    this.#scheduleCommit();
    await group.durable;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const session = connection as Session;
    // After a failed group COMMIT there is nothing left to undo: the whole group was rolled back.
    if (!session.inTransaction) return;
    session.inTransaction = false;
    try {
      if (session.group === this.#group && this.#writer.inTransaction) {
        this.#control('rollback to member');
        this.#control('release member');
      }
    } finally {
      this.#unlockWriter(session);
      this.#scheduleCommit();
    }
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    // A transaction that failed to begin still holds the lock it waited for; and whatever failed, a group left open
    // (its BEGIN IMMEDIATE holds the file's write lock against other processes) is committed soon.
    this.#unlockWriter(connection as Session);
    this.#scheduleCommit();
  }

  async destroy(): Promise<void> {
    await this.#writerLock.lock();
    try {
      this.#commitGroup();
    } finally {
      this.#writer.close();
      this.#reader.close();
    }
  }

  /** A statement of the session's transaction, on the writer. */
  executeInTransaction<R>(session: Session, query: CompiledQuery): QueryResult<R> {
    // Without its group the writer is outside any transaction: a statement now would commit on its own.
    if (session.group !== this.#group) throw new GroupAbandonedError(new Error('the group was rolled back by another member'));
    return this.#onWriter<R>(query);
  }

  async execute<R>(session: Session, query: CompiledQuery): Promise<QueryResult<R>> {
    if (session.inTransaction) return this.executeInTransaction<R>(session, query);
    const reading = this.#readOnlyStatement(query.sql);
    if (reading) return runStatement<R>(reading, query.parameters);
    // A write outside a transaction joins the group like a transaction of one statement.
    await this.#lockWriter(session);
    let result: QueryResult<R>;
    let group: CommitGroup | undefined;
    try {
      this.#openGroup();
      group = this.#group;
      result = this.#onWriter<R>(query);
      if (group) group.transactions += 1;
    } finally {
      this.#unlockWriter(session);
      this.#scheduleCommit();
    }
    try {
      await group?.durable;
    } catch (error) {
      if (!(error instanceof GroupAbandonedError)) throw error;
      // Rolled back for another member's sake: the statement is run again in a group of its own.
      return this.#writeAlone<R>(session, query);
    }
    return result;
  }

  async #writeAlone<R>(session: Session, query: CompiledQuery): Promise<QueryResult<R>> {
    await this.#lockWriter(session);
    try {
      this.#commitGroup();
      this.#openGroup();
      const group = this.#group!;
      const result = this.#onWriter<R>(query);
      group.transactions += 1;
      this.#commitGroup();
      await group.durable.catch((error: unknown) => {
        throw error instanceof GroupAbandonedError ? error.cause : error;
      });
      return result;
    } finally {
      this.#unlockWriter(session);
    }
  }

  /**
   * A read outside any transaction, each row an array of column values in select order: a page of history is
   * built by better-sqlite3 about twice as fast as rows of named properties (docs/benchmarks.md).
   */
  selectArrays(query: CompiledQuery): unknown[][] {
    const statement = this.#readOnlyStatement(query.sql);
    if (!statement?.reader) throw new Error('selectArrays runs read-only queries that return rows');
    // Statements are cached and shared: switch the mode back at once (better-sqlite3 runs synchronously).
    statement.raw(true);
    try {
      return statement.all(query.parameters) as unknown[][];
    } finally {
      statement.raw(false);
    }
  }

  /** The statement on the reading connection, when it only reads; undefined sends it to the writer. */
  #readOnlyStatement(sqlText: string): BetterSqlite3.Statement | undefined {
    try {
      const statement = this.#reader.prepare(sqlText);
      return statement.readonly ? statement : undefined;
    } catch {
      // Not preparable on the reader (a table the writer is still creating, say): the writer decides.
      return undefined;
    }
  }

  #onWriter<R>(query: CompiledQuery): QueryResult<R> {
    try {
      return runStatement<R>(this.#writer.prepare(query.sql), query.parameters);
    } catch (error) {
      this.#abandonGroupIfRolledBack(error);
      throw error;
    }
  }

  /** Transaction control on the writer (savepoints, BEGIN, COMMIT). */
  #control(statementText: string): void {
    try {
      this.#writer.prepare(statementText).run();
    } catch (error) {
      this.#abandonGroupIfRolledBack(error);
      throw error;
    }
  }

  /**
   * Some errors (disk full, I/O) make SQLite roll the whole transaction back, not just the statement: the group's
   * earlier transactions are gone, so they fail, and the next transaction starts a new group.
   */
  #abandonGroupIfRolledBack(error: unknown): void {
    if (this.#group && !this.#writer.inTransaction) {
      const group = this.#group;
      this.#group = undefined;
      group.reject(new GroupAbandonedError(error));
    }
  }

  #openGroup(): void {
    if (this.#group && this.#group.transactions >= sqliteGroupTransactionsMax) this.#commitGroup();
    if (this.#group) return;
    // The write lock is taken up front: a deferred BEGIN lets two writers of two processes deadlock on the upgrade.
    this.#writer.prepare('begin immediate').run();
    this.#group = new CommitGroup();
  }

  #scheduleCommit(): void {
    if (this.#commitScheduled || !this.#group) return;
    this.#commitScheduled = true;
    // After the I/O callbacks of this turn of the event loop: every request that arrived meanwhile can join.
    setImmediate(() => {
      this.#commitScheduled = false;
      void this.#commitWhenWriterFree();
    });
  }

  async #commitWhenWriterFree(): Promise<void> {
    await this.#writerLock.lock();
    try {
      this.#commitGroup();
    } finally {
      this.#writerLock.unlock();
    }
  }

  /** Call with the writer lock held. */
  #commitGroup(): void {
    const group = this.#group;
    if (!group) return;
    this.#group = undefined;
    try {
      this.#writer.prepare('commit').run();
    } catch (error) {
      try {
        if (this.#writer.inTransaction) this.#writer.prepare('rollback').run();
      } finally {
        // Which member caused it (a deferred constraint, say) is unknown: each is run again alone.
        group.reject(new GroupAbandonedError(error));
      }
      return;
    }
    this.stats.commits += 1;
    this.stats.transactions += group.transactions;
    group.resolve();
  }

  async #lockWriter(session: Session): Promise<void> {
    await this.#writerLock.lock(this.#writerWaitMs);
    session.holdsWriter = true;
  }

  #unlockWriter(session: Session): void {
    if (!session.holdsWriter) return;
    session.holdsWriter = false;
    this.#writerLock.unlock();
  }
}

/**
 * SQLite's adapter, except that the driver takes several connections at once: for a SQLite dialect Kysely (0.29 on)
 * hands out one connection at a time behind a mutex, and a group could never hold more than one transaction. The
 * driver's sessions share the writing connection through its own WriterLock, and reads have a connection of their own.
 */
class GroupCommitSqliteAdapter extends SqliteAdapter {
  override get supportsMultipleConnections(): boolean {
    return true;
  }
}

export class GroupCommitSqliteDialect implements Dialect {
  constructor(private readonly driver: GroupCommitDriver) {}

  createAdapter(): DialectAdapter {
    return new GroupCommitSqliteAdapter();
  }

  createDriver(): Driver {
    return this.driver;
  }

  createQueryCompiler(): QueryCompiler {
    return new SqliteQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SqliteIntrospector(db);
  }
}
