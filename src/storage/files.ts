import { randomUUID } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Where uploaded files live; behind an interface so an object store can replace the local disk. */
export interface FileStore {
  /** Stores the bytes durably and returns the path to keep in the database. */
  put(customerId: string, bytes: Buffer): Promise<string>;
  get(storagePath: string): Promise<Buffer>;
}

/**
 * Files under `<DATA_DIR>/documents/<customer id>/<uuid>`. The file is fsynced before put() returns, so a row
 * that points to it never outlives a crash that lost it.
 */
export class LocalFileStore implements FileStore {
  private readonly root: string;
  constructor(dataDir: string) {
    this.root = path.join(dataDir, 'documents');
  }

  async put(customerId: string, bytes: Buffer): Promise<string> {
    const relative = path.join(customerId, randomUUID());
    const absolute = path.join(this.root, relative);
    await fs.mkdir(path.dirname(absolute), { recursive: true });
    const handle = await fs.open(absolute, 'wx');
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return `documents/${relative.split(path.sep).join('/')}`;
  }

  async get(storagePath: string): Promise<Buffer> {
    const relative = storagePath.replace(/^documents\//, '');
    const absolute = path.resolve(this.root, relative);
    // storagePath comes from our own rows, but never let a path leave the store.
    if (!absolute.startsWith(this.root + path.sep)) throw new Error('storage path outside the file store');
    return fs.readFile(absolute);
  }
}
