import { sql, type Kysely } from 'kysely';
import type { Storage } from '../../storage/database.js';
import type { Database, DashboardRevealsTable, DashboardSessionsTable, DashboardSignInLinksTable, DashboardUsersTable } from '../../storage/tables.js';
import { deleteDue } from '../../workers/claim.js';

export type DashboardUserRow = DashboardUsersTable;
export type SessionRow = DashboardSessionsTable;

const userColumns = ['id', 'customer_id', 'email', 'password_hash', 'created_at', 'updated_at'] as const;

export async function insertUser(db: Kysely<Database>, row: DashboardUserRow): Promise<void> {
  await db.insertInto('dashboard_users').values(row).execute();
}

export async function findUserByEmail(db: Kysely<Database>, email: string): Promise<DashboardUserRow | undefined> {
  return db.selectFrom('dashboard_users').select(userColumns).where('email', '=', email).executeTakeFirst();
}

export async function findUserById(db: Kysely<Database>, id: string): Promise<DashboardUserRow | undefined> {
  return db.selectFrom('dashboard_users').select(userColumns).where('id', '=', id).executeTakeFirst();
}

export async function listUsers(db: Kysely<Database>, customerId: string): Promise<DashboardUserRow[]> {
  return db.selectFrom('dashboard_users').select(userColumns).where('customer_id', '=', customerId).orderBy('created_at', 'asc').execute();
}

export async function insertLink(db: Kysely<Database>, row: DashboardSignInLinksTable): Promise<void> {
  await db.insertInto('dashboard_sign_in_links').values(row).execute();
}

/** The link's user, if the link is unused and unexpired at `now`. */
export async function findUsableLink(db: Kysely<Database>, tokenHash: string, now: string): Promise<DashboardSignInLinksTable | undefined> {
  return db
    .selectFrom('dashboard_sign_in_links')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks the link used; false if another request used it first (or it expired meanwhile). */
export async function useLink(db: Kysely<Database>, tokenHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('dashboard_sign_in_links')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function setPassword(db: Kysely<Database>, userId: string, passwordHash: string, now: string): Promise<void> {
  await db.updateTable('dashboard_users').set({ password_hash: passwordHash, updated_at: now }).where('id', '=', userId).execute();
}

export async function insertSession(db: Kysely<Database>, row: SessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

export async function findSession(db: Kysely<Database>, idHash: string): Promise<SessionRow | undefined> {
  return db.selectFrom('dashboard_sessions').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
}

export async function touchSession(db: Kysely<Database>, idHash: string, now: string): Promise<void> {
  await db.updateTable('dashboard_sessions').set({ last_seen_at: now }).where('id_hash', '=', idHash).execute();
}

export async function deleteSession(db: Kysely<Database>, idHash: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('id_hash', '=', idHash).execute();
}

/** Setting a password ends every session of the user (a reset link must lock out whoever knew the old one). */
export async function deleteSessionsOfUser(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('user_id', '=', userId).execute();
}

/** Drops the user's unused links: a new link replaces them (an older link lying in a mailbox stops working). */
export async function deleteUnusedLinks(db: Kysely<Database>, userId: string): Promise<void> {
  await db.deleteFrom('dashboard_sign_in_links').where('user_id', '=', userId).where('used_at', 'is', null).execute();
}

export async function insertReveal(db: Kysely<Database>, row: DashboardRevealsTable): Promise<void> {
  await db.insertInto('dashboard_reveals').values(row).execute();
}

/** Deletes the session's reveal of this id and answers it: of two requests taking it at once, one gets it. */
export async function takeReveal(db: Kysely<Database>, idHash: string, sessionIdHash: string): Promise<DashboardRevealsTable | undefined> {
  return db.deleteFrom('dashboard_reveals').where('id_hash', '=', idHash).where('session_id_hash', '=', sessionIdHash).returningAll().executeTakeFirst();
}

/**
 * The reaper's batch (workers/reaper.ts): up to `limit` sessions past their absolute end, `limit` idle since
 * `idleSince`, `limit` links and `limit` unshown reveals past their expiry, each picked from its own index; how many
 * rows went.
 */
export async function deleteExpired(storage: Storage, now: string, idleSince: string, limit: number): Promise<number> {
  const ended = await deleteDue(storage, { table: 'dashboard_sessions', key: ['id_hash'], due: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit });
  const idle = await deleteDue(storage, { table: 'dashboard_sessions', key: ['id_hash'], due: sql`last_seen_at <= ${idleSince}`, orderBy: 'last_seen_at', limit });
  const links = await deleteDue(storage, { table: 'dashboard_sign_in_links', key: ['token_hash'], due: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit });
  const reveals = await deleteDue(storage, { table: 'dashboard_reveals', key: ['id_hash'], due: sql`expires_at <= ${now}`, orderBy: 'expires_at', limit });
  return ended + idle + links + reveals;
}
