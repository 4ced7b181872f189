import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, claimUndeliveredEvents, markEventsPublished } from '../../src/events/outbox.js';
import type { Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { claimDue, deleteDue } from '../../src/workers/claim.js';
import { insertCustomerRow } from '../helpers/rows.js';
import { postgresUrl, testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/**
 * The one claim pattern of the workers (src/workers/claim.ts) and the outbox's delivery claim (src/events/outbox.ts),
 * on the dialect of this project: each due row goes to exactly one claimer, comes back when its lease runs out, and
 * an event that commits late is still delivered. The reaper's deletion picks its rows the same way.
 */
describe(`claims on ${testDialect}`, () => {
  let storage: Storage;
  let customerId: string;

  useFreshStorage((fresh) => (storage = fresh));
  beforeAll(async () => {
    await migrateToLatest(storage);
    customerId = await insertCustomerRow(storage, 'Claims');
  });

  const at = (iso: string) => new Date(iso);
  const addEvents = (count: number, createdAt = '2026-01-01T00:00:00.000Z') =>
    appendEvents(
      storage.db,
      Array.from({ length: count }, (_, index) => ({ customerId, type: 'payee.created' as const, data: { index }, createdAt: at(createdAt) })),
    );
  const undelivered = async () =>
    Number((await storage.db.selectFrom('outbox_events').select((eb) => eb.fn.countAll().as('n')).where('published_at', 'is', null).executeTakeFirstOrThrow()).n);

  it('hands each undelivered event to one claimer, oldest first, and takes it back after its lease', async () => {
    await addEvents(5);
    const now = at('2026-01-01T00:00:00.000Z');
    const first = await claimUndeliveredEvents(storage, now, 60_000, 3);
    expect(first.map((row) => JSON.parse(row.payload).data.index)).toEqual([0, 1, 2]);
    const second = await claimUndeliveredEvents(storage, now, 60_000, 10);
    expect(second.map((row) => JSON.parse(row.payload).data.index)).toEqual([3, 4]);
    expect(await claimUndeliveredEvents(storage, now, 60_000, 10)).toEqual([]);
    await markEventsPublished(storage.db, first.map((row) => row.id), now);
    // The second claimer stopped without delivering: after its lease the events are due again, the delivered ones never.
    const later = await claimUndeliveredEvents(storage, at('2026-01-01T00:01:01.000Z'), 60_000, 10);
    expect(later.map((row) => row.id).sort()).toEqual(second.map((row) => row.id).sort());
    await markEventsPublished(storage.db, later.map((row) => row.id), now);
    expect(await undelivered()).toBe(0);
  });

  it('gives concurrent claimers disjoint rows that together are all the due ones', async () => {
    const ids = Array.from({ length: 40 }, () => randomUUID());
    for (const id of ids) await storage.db.insertInto('customers').values({ id, name: 'due', fr_owner_business_id: `busi_${id}`, created_at: '2026-01-01T00:00:00.000Z' }).execute();
    const claim = () =>
      claimDue<{ id: string }>(storage, {
        table: 'customers',
        due: sql`name = 'due'`,
        leaseColumn: 'created_at',
        now: '2026-01-01T00:00:00.000Z',
        leaseUntil: '2026-01-01T00:05:00.000Z',
        orderBy: 'created_at',
        limit: 7,
      });
    const batches = await Promise.all(Array.from({ length: 8 }, claim));
    const claimed = batches.flatMap((batch) => batch.map((row) => row.id));
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.sort()).toEqual([...ids].sort());
  });

  it.skipIf(testDialect !== 'postgres')('delivers an event whose transaction commits after later events were claimed and delivered (PostgreSQL)', async () => {
    const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db);
    const client = new pg.Client({ connectionString: postgresUrl(), options: `-c search_path=${rows[0]!.schema}` });
    await client.connect();
    try {
      // A transaction takes its sequence number now and commits later, as a slow money operation does.
      await client.query('begin');
      await client.query(
        "insert into outbox_events (id, customer_id, event_type, payload, created_at) values ($1, $2, 'payee.created', '{\"late\":true}', '2026-01-01T00:00:00.000Z')",
        [randomUUID(), customerId],
      );
      await addEvents(2);
      const now = at('2026-01-01T00:00:00.000Z');
      const early = await claimUndeliveredEvents(storage, now, 60_000, 10);
      expect(early).toHaveLength(2);
      await markEventsPublished(storage.db, early.map((row) => row.id), now);
      await client.query('commit');
      const late = await claimUndeliveredEvents(storage, now, 60_000, 10);
      expect(late.map((row) => row.payload)).toEqual(['{"late":true}']);
      // Its sequence is below those delivered before it: a "last sequence" cursor would have skipped it.
      expect(BigInt(late[0]!.sequence as unknown as bigint)).toBeLessThan(BigInt(early[0]!.sequence as unknown as bigint));
    } finally {
      await client.end();
    }
  });

  describe('the reaper\'s deletion', () => {
    const addEventsOn = (days: readonly string[]) =>
      appendEvents(storage.db, days.map((day) => ({ customerId, type: 'payee.created' as const, data: { day }, createdAt: at(`${day}T00:00:00.000Z`) })));
    const daysBefore = async (end: string) =>
      (await storage.db.selectFrom('outbox_events').select('created_at').where('created_at', '<', end).orderBy('created_at').execute()).map((row) => row.created_at.slice(0, 10));
    const deleteBefore = (end: string, limit: number) => deleteDue(storage, { table: 'outbox_events', key: ['id'], due: sql`created_at < ${end}`, orderBy: 'created_at', limit });

    it('deletes at most `limit` due rows a statement, oldest first, and none that is not due', async () => {
      await addEventsOn(['2025-03-01', '2025-01-01', '2025-02-01', '2025-04-01']);
      expect(await deleteBefore('2025-04-01', 2)).toBe(2);
      expect(await daysBefore('2025-12-31')).toEqual(['2025-03-01', '2025-04-01']);
      expect(await deleteBefore('2025-04-01', 2)).toBe(1);
      expect(await deleteBefore('2025-04-01', 2)).toBe(0);
      expect(await daysBefore('2025-12-31')).toEqual(['2025-04-01']);
    });

    it.skipIf(testDialect !== 'postgres')('leaves a row another transaction holds to a later pass instead of waiting for it (PostgreSQL)', async () => {
      await addEventsOn(['2024-01-01', '2024-02-01']);
      const held = await storage.db.selectFrom('outbox_events').select('id').where('created_at', '=', '2024-01-01T00:00:00.000Z').executeTakeFirstOrThrow();
      const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(storage.db);
      const client = new pg.Client({ connectionString: postgresUrl(), options: `-c search_path=${rows[0]!.schema}` });
      await client.connect();
      try {
        await client.query('begin');
        await client.query('select id from outbox_events where id = $1 for update', [held.id]);
        // A reaper that waited for the lock would never return here.
        expect(await deleteBefore('2024-12-31', 10)).toBe(1);
        expect(await daysBefore('2024-12-31')).toEqual(['2024-01-01']);
        await client.query('commit');
        expect(await deleteBefore('2024-12-31', 10)).toBe(1);
        expect(await daysBefore('2024-12-31')).toEqual([]);
      } finally {
        await client.end();
      }
    });
  });
});
