import { randomUUID } from 'node:crypto';
import { newId } from '../ids.js';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Transaction } from 'kysely';
import type { Clock } from '../clock.js';
import type { Storage } from './database.js';
import type { Database } from './tables.js';

/**
 * Where uploaded files live, behind an interface so that a store every instance can read (the database, an object
 * store) can replace the local disk. A file is written in two steps around the transaction that records it, so a
 * failure anywhere leaves no file without its row (docs/documents.md "Storage"):
 * stage() before the transaction, commit() inside it, discard() if it failed.
 */
export interface FileStore {
  stage(customerId: string, bytes: Buffer): Promise<StagedFile>;
  get(storagePath: string): Promise<Buffer>;
  /**
   * Removes files no row records that are older than `olderThan` — left when a process stopped between stage() and
   * its transaction, or a discard failed. Returns how many were removed.
   */
  sweepOrphans(recordedPathsOf: (customerId: string) => Promise<Set<string>>, olderThan: Date): Promise<number>;
}

interface StagedFile {
  /** What the document row keeps to find the file again. */
  readonly storagePath: string;
  /** Inside the transaction that records the file: a store that keeps bytes in the database writes them here. */
  commit(trx: Transaction<Database>): Promise<void>;
  /** After that transaction failed: removes whatever stage() wrote. */
  discard(): Promise<void>;
}

/** Directories the server creates for data are private to its user (docs/operations.md). */
export const privateDirectoryMode = 0o700;
export const privateFileMode = 0o600;

/**
 * Gives an existing file or directory of the server's own the private mode, if others could read it (data left by an
 * earlier version); something of another user, or missing, is left alone.
 */
export function makePrivate(target: string, mode: number): void {
  let stat: fsSync.Stats;
  try {
    stat = fsSync.statSync(target);
  } catch {
    return;
  }
  if ((stat.mode & 0o077) !== 0 && stat.uid === process.getuid?.()) fsSync.chmodSync(target, mode);
}

/** makePrivate over a whole tree (the stored documents), once at start-up. */
function makeTreePrivate(root: string): void {
  if (!fsSync.existsSync(root)) return;
  makePrivate(root, privateDirectoryMode);
  for (const entry of fsSync.readdirSync(root, { withFileTypes: true, recursive: true })) {
    const target = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) makePrivate(target, privateDirectoryMode);
    else if (entry.isFile()) makePrivate(target, privateFileMode);
  }
}

/**
 * Files under `<DATA_DIR>/documents/<customer id>/<uuid>`, mode 0600 in directories of mode 0700. The file is
 * fsynced when staged, so a row that points to it never outlives a crash that lost it.
 */
class LocalFileStore implements FileStore {
  private readonly root: string;
  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'documents');
    makeTreePrivate(this.root);
  }

  async stage(customerId: string, bytes: Buffer): Promise<StagedFile> {
    const relative = path.join(customerId, randomUUID());
    const absolute = path.join(this.root, relative);
    await fs.mkdir(path.dirname(absolute), { recursive: true, mode: privateDirectoryMode });
    const handle = await fs.open(absolute, 'wx', privateFileMode);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await fs.rm(absolute, { force: true });
      throw error;
    }
    await handle.close();
    // The directory entry too: without it a power loss could lose a file whose row is committed.
    const directory = await fs.open(path.dirname(absolute), 'r');
    try {
      await directory.sync();
    } finally {
      await directory.close();
    }
    return {
      storagePath: `documents/${relative.split(path.sep).join('/')}`,
      commit: async () => undefined,
      discard: () => fs.rm(absolute, { force: true }),
    };
  }

  async get(storagePath: string): Promise<Buffer> {
    return fs.readFile(this.absolutePath(storagePath));
  }

  async sweepOrphans(recordedPathsOf: (customerId: string) => Promise<Set<string>>, olderThan: Date): Promise<number> {
    if (!fsSync.existsSync(this.root)) return 0;
    let removed = 0;
    for (const customer of await fs.readdir(this.root, { withFileTypes: true })) {
      if (!customer.isDirectory()) continue;
      const directory = path.join(this.root, customer.name);
      let recorded: Set<string> | undefined;
      for (const file of await fs.readdir(directory, { withFileTypes: true })) {
        if (!file.isFile()) continue;
        const absolute = path.join(directory, file.name);
        const stat = await fs.stat(absolute).catch(() => undefined);
        if (!stat || stat.mtime >= olderThan) continue;
        recorded ??= await recordedPathsOf(customer.name);
        if (recorded.has(`documents/${customer.name}/${file.name}`)) continue;
        await fs.rm(absolute, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  private absolutePath(storagePath: string): string {
    const relative = storagePath.replace(/^documents\//, '');
    const absolute = path.resolve(this.root, relative);
    // storagePath comes from our own rows, but never let a path leave the store.
    if (!absolute.startsWith(this.root + path.sep)) throw new Error('storage path outside the file store');
    return absolute;
  }
}

/**
 * Stages the files, then runs `record` in one transaction that commits them; if anything fails, the staged files
 * are discarded before the error is passed on. The one way documents and end-user reports are stored.
 */
export async function recordWithFiles<T>(
  storage: Storage,
  files: FileStore,
  customerId: string,
  contents: readonly Buffer[],
  record: (trx: Transaction<Database>, storagePaths: string[]) => Promise<T>,
): Promise<T> {
  const staged: StagedFile[] = [];
  try {
    for (const bytes of contents) staged.push(await files.stage(customerId, bytes));
    return await storage.transaction(async (trx) => {
      for (const file of staged) await file.commit(trx);
      return record(
        trx,
        staged.map((file) => file.storagePath),
      );
    });
  } catch (error) {
    await Promise.all(staged.map((file) => file.discard().catch(() => undefined)));
    throw error;
  }
}

/**
 * Files in the database (`document_files`, migration 0008): the store of a PostgreSQL deployment, whose instances
 * share nothing but the database. The bytes are inserted in the transaction that records the document, so a file
 * exists exactly when its row does; there is nothing to discard and nothing to sweep.
 */
class DatabaseFileStore implements FileStore {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
  ) {}

  async stage(customerId: string, bytes: Buffer): Promise<StagedFile> {
    const storagePath = `database/${customerId}/${newId()}`;
    return {
      storagePath,
      commit: async (trx) => {
        await trx.insertInto('document_files').values({ storage_path: storagePath, customer_id: customerId, content: bytes, created_at: this.clock.now().toISOString() }).execute();
      },
      discard: async () => undefined,
    };
  }

  async get(storagePath: string): Promise<Buffer> {
    const row = await this.storage.db.selectFrom('document_files').select('content').where('storage_path', '=', storagePath).executeTakeFirst();
    if (!row) throw new Error('stored file not found');
    return row.content;
  }

  async sweepOrphans(): Promise<number> {
    return 0;
  }
}

/** The file store a deployment uses: local disk with the embedded database, the database itself with PostgreSQL. */
export function defaultFileStore(storage: Storage, dataDir: string, clock: Clock): FileStore {
  return storage.dialect === 'postgres' ? new DatabaseFileStore(storage, clock) : new LocalFileStore(dataDir);
}
