import { randomBytes } from 'node:crypto';
import type { Storage } from './database.js';

/**
 * A random secret generated once per deployment and kept in the database, so every instance sharing the
 * database derives the same values (CSRF tokens) without another setting to distribute.
 */
export async function serverSecret(storage: Storage, name: string, createdAt: Date): Promise<Buffer> {
  await storage.db
    .insertInto('server_secrets')
    .values({ name, value: randomBytes(32).toString('hex'), created_at: createdAt.toISOString() })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const row = await storage.db.selectFrom('server_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'hex');
}
