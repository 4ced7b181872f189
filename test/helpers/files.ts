import fs from 'node:fs';
import path from 'node:path';
import type { TestApp } from './test-app.js';

/**
 * Stored document files, wherever the dialect keeps them (storage/files.ts): on disk under DATA_DIR with SQLite, in
 * the `document_files` table with PostgreSQL.
 */

export async function storedFile(t: TestApp, storagePath: string): Promise<Buffer> {
  if (t.storage.dialect === 'sqlite') return fs.readFileSync(path.join(t.config.dataDir, storagePath));
  const row = await t.storage.db.selectFrom('document_files').select('content').where('storage_path', '=', storagePath).executeTakeFirstOrThrow();
  return row.content;
}

/** The storage paths of every stored file (of one customer, if given), sorted. */
export async function storedFilePaths(t: TestApp, customerId?: string): Promise<string[]> {
  if (t.storage.dialect === 'postgres') {
    let query = t.storage.db.selectFrom('document_files').select('storage_path');
    if (customerId !== undefined) query = query.where('customer_id', '=', customerId);
    return (await query.execute()).map((row) => row.storage_path).sort();
  }
  const root = path.join(t.config.dataDir, 'documents', customerId ?? '');
  if (!fs.existsSync(root)) return [];
  return fs
    .readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => `documents/${path.relative(path.join(t.config.dataDir, 'documents'), path.join(entry.parentPath, entry.name)).split(path.sep).join('/')}`)
    .sort();
}

/** Makes a stored file unreadable, as a lost disk or a deleted row would. */
export async function removeStoredFile(t: TestApp, storagePath: string): Promise<void> {
  if (t.storage.dialect === 'sqlite') fs.rmSync(path.join(t.config.dataDir, storagePath));
  else await t.storage.db.deleteFrom('document_files').where('storage_path', '=', storagePath).execute();
}
