import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.js';
import { dashboardRevealTtlMs, dashboardTokenLengthMax, dashboardTokenRandomBytes } from '../../config/limits.js';
import type { Storage } from '../../storage/database.js';
import type { SecretBox } from '../../storage/secret-box.js';
import type { DashboardRevealsTable } from '../../storage/tables.js';
import { insertReveal, takeReveal } from './repository.js';
import type { DashboardSession } from './service.js';

type RevealKind = DashboardRevealsTable['kind'];

/** What a reveal page shows: the secret, what it belongs to. */
interface Reveal {
  kind: RevealKind;
  subjectId: string;
  secret: string;
}

const hashId = (id: string) => createHash('sha256').update(id).digest('hex');
/** Authenticated with the sealed text: a sealed secret moved to another reveal or session does not open. */
const sealContext = (idHash: string, sessionIdHash: string) => `dashboard-reveal:${idHash}:${sessionIdHash}`;

/**
 * Secrets the dashboard shows once (docs/dashboard.md "Forms"): the form that made one stores it here, sealed, for
 * dashboardRevealTtlMs against a random one-time id and the session, then redirects to the reveal page, which takes
 * it (deletes it as it reads it). A reload of that page, another session, or a late visit finds nothing, so the
 * secret is on one page once and never in a URL, a cookie or the browser's history.
 */
export class DashboardReveals {
  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly box: SecretBox,
  ) {}

  /** Stores the secret; the one-time id for the reveal page's address. */
  async store(session: DashboardSession, kind: RevealKind, subjectId: string, secret: string): Promise<string> {
    const id = randomBytes(dashboardTokenRandomBytes).toString('base64url');
    const idHash = hashId(id);
    const now = this.clock.now();
    await insertReveal(this.storage.db, {
      id_hash: idHash,
      session_id_hash: session.idHash,
      kind,
      subject_id: subjectId,
      sealed_secret: this.box.seal(secret, sealContext(idHash, session.idHash)),
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + dashboardRevealTtlMs).toISOString(),
    });
    return id;
  }

  /** The secret, once: deleted as it is read. Undefined when unknown, already shown, expired or another session's. */
  async take(session: DashboardSession, id: string): Promise<Reveal | undefined> {
    if (id.length > dashboardTokenLengthMax) return undefined;
    const idHash = hashId(id);
    const row = await takeReveal(this.storage.db, idHash, session.idHash);
    if (!row || row.expires_at <= this.clock.now().toISOString()) return undefined;
    return { kind: row.kind, subjectId: row.subject_id, secret: this.box.open(row.sealed_secret, sealContext(idHash, session.idHash)) };
  }
}
