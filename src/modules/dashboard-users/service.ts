import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import {
  dashboardEmailLengthMax,
  dashboardPasswordLengthMax,
  dashboardPasswordLengthMin,
  dashboardSessionTouchIntervalMs,
  dashboardSignInLinkTtlMs,
  dashboardTokenLengthMax,
  dashboardTokenRandomBytes,
} from '../../config/limits.js';
import { DomainError, validationError } from '../../errors.js';
import { newId } from '../../ids.js';
import type { Storage } from '../../storage/database.js';
import { findCustomerById } from '../customers/index.js';
import { InvalidInputError } from '../customers/index.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from './passwords.js';
import {
  deleteExpired,
  deleteSession,
  deleteSessionsOfUser,
  deleteUnusedLinks,
  findSession,
  findUsableLink,
  findUserByEmail,
  findUserById,
  insertLink,
  insertSession,
  insertUser,
  listUsers,
  setPassword,
  touchSession,
  useLink,
  type DashboardUserRow,
  type SessionRow,
} from './repository.js';

/** What the operator sees of a dashboard user: never the password hash. */
export interface DashboardUserView {
  id: string;
  customer_id: string;
  email: string;
  password_set: boolean;
  created_at: string;
}

export interface SignInLink {
  sign_in_url: string;
  expires_at: string;
}

export interface SessionSettings {
  /** Where the server is reached from a browser (PUBLIC_URL); sign-in links start with it. */
  publicUrl: string;
  idleMs: number;
  maxMs: number;
}

/** A signed-in browser: who, for which customer, and the session id's hash (the form token is derived from it). */
export interface DashboardSession {
  idHash: string;
  userId: string;
  customerId: string;
  email: string;
}

// No control characters: PostgreSQL cannot even compare a text with a NUL byte in it (sign-in looks addresses up).
const emailPattern = /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+\.[^\s@\p{Cc}]+$/u;
const isEmailAddress = (email: string) => email.length <= dashboardEmailLengthMax && emailPattern.test(email);

/** The address as stored (trimmed, lower case); text that is no address is refused. */
function checkedEmail(emailText: string): string {
  const email = emailText.trim().toLowerCase();
  if (!isEmailAddress(email)) throw new InvalidInputError(`--email "${emailText}" is not an email address`);
  return email;
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const newToken = () => randomBytes(dashboardTokenRandomBytes).toString('base64url');

/** One message for an unknown address and a wrong password, so sign-in does not tell which addresses exist. */
const wrongCredentials = () => new DomainError('UNAUTHENTICATED', 'The email address or the password is not right.');

function present(row: DashboardUserRow): DashboardUserView {
  return { id: row.id, customer_id: row.customer_id, email: row.email, password_set: row.password_hash !== null, created_at: row.created_at };
}

function checkPassword(password: string, confirmation: string): void {
  const reason =
    password.length < dashboardPasswordLengthMin || password.length > dashboardPasswordLengthMax
      ? `must be ${dashboardPasswordLengthMin}-${dashboardPasswordLengthMax} characters`
      : password !== confirmation
        ? 'differs from its confirmation'
        : undefined;
  if (reason) throw validationError([{ location: 'body', path: '/password', reason }], `The password ${reason}.`);
}

/**
 * Dashboard users (docs/dashboard.md): created by the operator CLI with a one-time sign-in link, on which the user
 * chooses a password; then email + password sign-in, and sessions with an idle and an absolute timeout. Link tokens
 * and session ids are random 256-bit values stored as SHA-256 only.
 */
export class DashboardUserService {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly settings: SessionSettings,
  ) {}

  async create(customerId: string, emailText: string): Promise<DashboardUserView & SignInLink> {
    const customer = await this.customer(customerId);
    const email = checkedEmail(emailText);
    if (await findUserByEmail(this.storage.db, email)) throw new InvalidInputError(`a dashboard user with email ${email} exists; use "users link --email ${email}" for a new sign-in link`);
    const now = this.clock.now().toISOString();
    const row: DashboardUserRow = { id: newId(), customer_id: customer.id, email, password_hash: null, created_at: now, updated_at: now };
    await insertUser(this.storage.db, row);
    return { ...present(row), ...(await this.newLink(row.id)) };
  }

  /** A new one-time link for an existing user: the first one expired, or the password is forgotten. */
  async issueLink(emailText: string): Promise<DashboardUserView & SignInLink> {
    const row = await findUserByEmail(this.storage.db, emailText.trim().toLowerCase());
    if (!row) throw new InvalidInputError(`no dashboard user with email ${emailText}`);
    return { ...present(row), ...(await this.newLink(row.id)) };
  }

  /** The user of this address, if any; text that is no address is refused. */
  async findByEmail(emailText: string): Promise<DashboardUserView | undefined> {
    const row = await findUserByEmail(this.storage.db, checkedEmail(emailText));
    return row ? present(row) : undefined;
  }

  /** A customer's users; an unknown customer is refused, as `keys list` refuses it. */
  async list(customerId: string): Promise<DashboardUserView[]> {
    const customer = await this.customer(customerId);
    return (await listUsers(this.storage.db, customer.id)).map(present);
  }

  /** The user a sign-in link is for, while it can still be used. */
  async linkUser(token: string): Promise<DashboardUserRow | undefined> {
    if (token.length > dashboardTokenLengthMax) return undefined;
    const link = await findUsableLink(this.storage.db, hashToken(token), this.clock.now().toISOString());
    return link ? findUserById(this.storage.db, link.user_id) : undefined;
  }

  /**
   * Uses the link once: sets the password and ends the user's other sessions, in one transaction. A link used
   * or expired meanwhile (two tabs) answers as unknown.
   */
  async setPasswordWithLink(token: string, password: string, confirmation: string): Promise<DashboardUserRow> {
    const user = await this.linkUser(token);
    if (!user) throw new DomainError('NOT_FOUND', 'This sign-in link has been used or has expired. Ask your operator for a new one.');
    checkPassword(password, confirmation);
    const passwordHash = await hashPassword(password);
    const now = this.clock.now().toISOString();
    const used = await this.storage.transaction(async (trx) => {
      if (!(await useLink(trx, hashToken(token), now))) return false;
      await setPassword(trx, user.id, passwordHash, now);
      await deleteSessionsOfUser(trx, user.id);
      return true;
    });
    if (!used) throw new DomainError('NOT_FOUND', 'This sign-in link has been used or has expired. Ask your operator for a new one.');
    return user;
  }

  async signIn(emailText: string, password: string): Promise<DashboardUserRow> {
    const email = emailText.trim().toLowerCase();
    // Text that is no address names no user; it is not looked up (but still costs a hash, below).
    const user = isEmailAddress(email) ? await findUserByEmail(this.storage.db, email) : undefined;
    const bounded = password.length <= dashboardPasswordLengthMax;
    // The hash is computed for unknown addresses too: the answer takes as long either way.
    const matches = await verifyPassword(bounded ? password : '', user?.password_hash ?? (await decoyPasswordHash()));
    if (!user || user.password_hash === null || !bounded || !matches) throw wrongCredentials();
    return user;
  }

  /** A new session (a new id on every sign-in: a session id planted before sign-in never becomes valid). */
  async startSession(user: DashboardUserRow): Promise<{ sessionId: string; session: DashboardSession }> {
    const sessionId = newToken();
    const now = this.clock.now();
    const row: SessionRow = {
      id_hash: hashToken(sessionId),
      user_id: user.id,
      customer_id: user.customer_id,
      created_at: now.toISOString(),
      last_seen_at: now.toISOString(),
      expires_at: new Date(now.getTime() + this.settings.maxMs).toISOString(),
    };
    await insertSession(this.storage.db, row);
    return { sessionId, session: { idHash: row.id_hash, userId: user.id, customerId: user.customer_id, email: user.email } };
  }

  /** The session of a cookie, unless it is unknown, idle for too long or past its absolute end. */
  async resumeSession(sessionId: string | undefined): Promise<DashboardSession | undefined> {
    if (sessionId === undefined || sessionId.length > dashboardTokenLengthMax) return undefined;
    const idHash = hashToken(sessionId);
    const row = await findSession(this.storage.db, idHash);
    if (!row) return undefined;
    const nowMs = this.clock.now().getTime();
    const lastSeenMs = Date.parse(row.last_seen_at);
    if (nowMs >= Date.parse(row.expires_at) || nowMs - lastSeenMs >= this.settings.idleMs) {
      await deleteSession(this.storage.db, idHash);
      return undefined;
    }
    const user = await findUserById(this.storage.db, row.user_id);
    if (!user) return undefined;
    if (nowMs - lastSeenMs >= dashboardSessionTouchIntervalMs) await touchSession(this.storage.db, idHash, new Date(nowMs).toISOString());
    return { idHash, userId: row.user_id, customerId: row.customer_id, email: user.email };
  }

  async endSession(session: DashboardSession): Promise<void> {
    await deleteSession(this.storage.db, session.idHash);
  }

  /** The reaper's batch (workers/reaper.ts): sessions past a timeout at `now` and links past their expiry. */
  async deleteExpired(now: Date, limit: number): Promise<number> {
    return deleteExpired(this.storage, now.toISOString(), new Date(now.getTime() - this.settings.idleMs).toISOString(), limit);
  }

  private async customer(customerId: string) {
    const customer = await findCustomerById(this.storage.db, customerId.toLowerCase());
    if (!customer) throw new InvalidInputError(`no customer with id ${customerId}`);
    return customer;
  }

  private async newLink(userId: string): Promise<SignInLink> {
    const token = newToken();
    const now = this.clock.now();
    const expiresAt = new Date(now.getTime() + dashboardSignInLinkTtlMs).toISOString();
    await this.storage.transaction(async (trx) => {
      await deleteUnusedLinks(trx, userId);
      await insertLink(trx, { token_hash: hashToken(token), user_id: userId, expires_at: expiresAt, used_at: null, created_at: now.toISOString() });
    });
    return { sign_in_url: `${this.settings.publicUrl}/dashboard/link/${token}`, expires_at: expiresAt };
  }
}
