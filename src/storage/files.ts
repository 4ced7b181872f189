import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Transaction } from 'kysely';
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
}

export interface StagedFile {
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
 * Files under `<DATA_DIR>/documents/<customer id>/<uuid>`, mode 0600 in directories of mode 0700. The file is
 * fsynced when staged, so a row that points to it never outlives a crash that lost it.
 */
export class LocalFileStore implements FileStore {
  private readonly root: string;
  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'documents');
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
    return {
      storagePath: `documents/${relative.split(path.sep).join('/')}`,
      commit: async () => undefined,
      discard: () => fs.rm(absolute, { force: true }),
    };
  }

  async get(storagePath: string): Promise<Buffer> {
    return fs.readFile(this.absolutePath(storagePath));
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
    return await storage.db.transaction().execute(async (trx) => {
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
