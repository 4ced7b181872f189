import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../../src/errors.js';
import type { Posting } from '../../src/ledger/ledger-entry.js';
import { executeMoneyMovement, moneyMovement } from '../../src/ledger/money-movement.js';
import { verifyLedger } from '../../src/ledger/verify.js';
import type { Storage } from '../../src/storage/database.js';
import { migrateToLatest } from '../../src/storage/migrate.js';
import { insertCustomerRow, insertFiatAccountRow } from '../helpers/rows.js';
import { testDialect } from '../helpers/test-app.js';
import { useFreshStorage } from '../helpers/fresh-storage-hooks.js';

/**
 * The ledger at the database level, on the dialect of this vitest project (docs/ledger.md): the CHECK constraints
 * refuse what the conditional updates of a money plan are meant to prevent, even when the code is bypassed; a plan
 * (executed by the PostgreSQL function or the SQLite statements) refuses an unbalanced entry and an overdraft and
 * writes nothing; verifyLedger finds each kind of inconsistency, per asset.
 */

const now = '2025-01-01T00:00:00.000Z';
const unique = () => randomUUID().replaceAll('-', '');

describe(`ledger on ${testDialect}`, () => {
  let storage: Storage;
  let customerId: string;
  /** A master account with a virtual account; reset to empty balances before every test. */
  let master: string;
  let virtual: string;
  let other: string;

  async function insertVirtualAccount(masterId: string): Promise<string> {
    const id = randomUUID();
    await storage.db
      .insertInto('virtual_accounts')
      .values({
        id,
        customer_id: customerId,
        master_fiat_account_id: masterId,
        end_user_id: null,
        fr_virtual_account_id: `vacc_${unique()}`,
        account_name: 'Ledger test VA',
        currency: 'EUR',
        status: 'active',
        balance_minor: 0n,
        iban: `DE${unique()}`,
        bic: 'TESTDEFFXXX',
        bank_name: 'Test',
        account_holder_name: 'Test',
        bank_country: 'DE',
        account_number: '1',
        sort_code: null,
        umbrella_link_id: null,
        created_at: now,
        updated_at: now,
      })
      .execute();
    return id;
  }

  const fiat = async (id: string) => {
    const row = await storage.db.selectFrom('fiat_accounts').select(['balance_minor', 'allocated_minor']).where('id', '=', id).executeTakeFirstOrThrow();
    return { balance: BigInt(row.balance_minor), allocated: BigInt(row.allocated_minor) };
  };
  const virtualBalance = async (id: string) =>
    BigInt((await storage.db.selectFrom('virtual_accounts').select('balance_minor').where('id', '=', id).executeTakeFirstOrThrow()).balance_minor);
  const count = async (table: 'ledger_journal' | 'ledger_postings') =>
    Number((await storage.db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

  /** Executes a movement of these postings; answers each moved balance as `{ beforeMinor, afterMinor }`. */
  const post = async (postings: Posting[]) => {
    const { balances } = await executeMoneyMovement(storage, moneyMovement(customerId, now, 'test', randomUUID(), postings));
    return new Map([...balances].map(([key, { before, after }]) => [key, { beforeMinor: before, afterMinor: after }]));
  };
  const eur = (account: Posting['account'], amount: bigint): Posting => ({ account, asset: 'EUR', amount });
  const clearing = { kind: 'system', code: 'clearing' } as const;
  const suspense = { kind: 'system', code: 'suspense' } as const;
  const fiatAccount = (id: string) => ({ kind: 'fiat_account', id }) as const;
  const virtualAccount = () => ({ kind: 'virtual_account', id: virtual, masterId: master }) as const;
  const fromClearing = (accountId: string, amountMinor: bigint): Posting[] => [eur(clearing, -amountMinor), eur(fiatAccount(accountId), amountMinor)];
  const intoVirtual = (amountMinor: bigint): Posting[] => [eur(clearing, -amountMinor), eur(fiatAccount(master), amountMinor), eur(virtualAccount(), amountMinor)];

  /** An SQL statement that must be refused by a constraint, leaving the row as it was. */
  async function expectRefused(statement: () => Promise<unknown>) {
    await expect(statement()).rejects.toThrow(/check|constraint/i);
  }

  useFreshStorage((fresh) => (storage = fresh));
  beforeAll(async () => {
    await migrateToLatest(storage);
    customerId = await insertCustomerRow(storage, 'Ledger test');
  });
  beforeEach(async () => {
    // Fresh accounts per test; earlier tests' postings stay, and the ledger must still verify.
    master = await insertFiatAccountRow(storage, customerId);
    other = await insertFiatAccountRow(storage, customerId);
    virtual = await insertVirtualAccount(master);
  });

  describe('CHECK constraints (the database refuses even when the code is bypassed)', () => {
    it('refuses a negative fiat balance', async () => {
      await post(fromClearing(master, 100n));
      await expectRefused(() => storage.db.updateTable('fiat_accounts').set({ balance_minor: -1n }).where('id', '=', master).execute());
      await expectRefused(() => storage.db.updateTable('fiat_accounts').set({ balance_minor: sql`balance_minor - 101` }).where('id', '=', master).execute());
      expect(await fiat(master)).toEqual({ balance: 100n, allocated: 0n });
      // Just inside: exactly 0 is allowed.
      await storage.db.updateTable('fiat_accounts').set({ balance_minor: sql`balance_minor - 100` }).where('id', '=', master).execute();
      expect((await fiat(master)).balance).toBe(0n);
      await storage.db.updateTable('fiat_accounts').set({ balance_minor: 100n }).where('id', '=', master).execute();
    });

    it('refuses an allocation above the balance, and a negative allocation', async () => {
      await post(fromClearing(master, 100n));
      await expectRefused(() => storage.db.updateTable('fiat_accounts').set({ allocated_minor: 101n }).where('id', '=', master).execute());
      await expectRefused(() => storage.db.updateTable('fiat_accounts').set({ allocated_minor: -1n }).where('id', '=', master).execute());
      await storage.db.updateTable('fiat_accounts').set({ allocated_minor: 100n }).where('id', '=', master).execute();
      // With everything allocated, the balance cannot drop below the allocation either.
      await expectRefused(() => storage.db.updateTable('fiat_accounts').set({ balance_minor: 99n }).where('id', '=', master).execute());
      expect(await fiat(master)).toEqual({ balance: 100n, allocated: 100n });
      await storage.db.updateTable('fiat_accounts').set({ allocated_minor: 0n }).where('id', '=', master).execute();
    });

    it('refuses a negative virtual account balance', async () => {
      await expectRefused(() => storage.db.updateTable('virtual_accounts').set({ balance_minor: -1n }).where('id', '=', virtual).execute());
      expect(await virtualBalance(virtual)).toBe(0n);
    });

    it('refuses a zero posting and an unknown account kind', async () => {
      const journalId = randomUUID();
      await storage.db.insertInto('ledger_journal').values({ id: journalId, customer_id: customerId, kind: 'test', reference_id: randomUUID(), created_at: now }).execute();
      await expectRefused(() =>
        storage.db.insertInto('ledger_postings').values({ journal_id: journalId, account_kind: 'fiat_account', account_id: master, asset: 'EUR', amount_minor: 0n }).execute(),
      );
      await expectRefused(() =>
        storage.db
          .insertInto('ledger_postings')
          .values({ journal_id: journalId, account_kind: 'vault' as never, account_id: master, asset: 'EUR', amount_minor: 1n })
          .execute(),
      );
      await storage.db.deleteFrom('ledger_journal').where('id', '=', journalId).execute();
    });
  });

  describe('money plans', () => {
    it('applies a balanced entry: balances, postings, before/after from the same transaction', async () => {
      const journals = await count('ledger_journal');
      const postings = await count('ledger_postings');
      const changes = await post(fromClearing(master, 2500n));
      expect(changes.get(`fiat_account:${master}`)).toEqual({ beforeMinor: 0n, afterMinor: 2500n });
      expect(await fiat(master)).toEqual({ balance: 2500n, allocated: 0n });
      expect(await count('ledger_journal')).toBe(journals + 1);
      expect(await count('ledger_postings')).toBe(postings + 2);
      const second = await post(fromClearing(master, 500n));
      expect(second.get(`fiat_account:${master}`)).toEqual({ beforeMinor: 2500n, afterMinor: 3000n });
      expect((await verifyLedger(storage)).problems).toEqual([]);
    });

    it.each([
      ['credits without a debit', (account: string): Posting[] => [eur(fiatAccount(account), 100n)]],
      ['a debit larger than the credit', (account: string): Posting[] => [eur(clearing, -101n), eur(fiatAccount(account), 100n)]],
      ['virtual postings that do not balance the real ones', (account: string): Posting[] => [eur(fiatAccount(account), 100n), eur(virtualAccount(), -100n)]],
      [
        'two assets that balance only together',
        (account: string): Posting[] => [eur(fiatAccount(account), 100n), { account: clearing, asset: 'USDC', amount: -100n }],
      ],
    ])('refuses an unbalanced entry (%s) and writes nothing', async (_name, postings) => {
      await post(fromClearing(master, 1000n));
      const journals = await count('ledger_journal');
      const rows = await count('ledger_postings');
      await expect(post(postings(master))).rejects.toThrow(/do not balance/);
      expect(await count('ledger_journal')).toBe(journals);
      expect(await count('ledger_postings')).toBe(rows);
      expect(await fiat(master)).toEqual({ balance: 1000n, allocated: 0n });
    });

    it('refuses a debit beyond the balance with INSUFFICIENT_FUNDS, rolling back the postings before it', async () => {
      await post(fromClearing(master, 1000n));
      const journals = await count('ledger_journal');
      const rows = await count('ledger_postings');
      const overdraft: Posting[] = [
        // Applied first (a credit of another account), then rolled back with the refused debit.
        eur(fiatAccount(other), 1001n),
        eur(fiatAccount(master), -1001n),
      ];
      const error = await post(overdraft).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(DomainError);
      expect((error as DomainError).code).toBe('INSUFFICIENT_FUNDS');
      expect((error as DomainError).details).toEqual({ account_id: master });
      expect(await fiat(master)).toEqual({ balance: 1000n, allocated: 0n });
      expect(await fiat(other)).toEqual({ balance: 0n, allocated: 0n });
      expect(await count('ledger_journal')).toBe(journals);
      expect(await count('ledger_postings')).toBe(rows);
      // Exactly the balance is allowed.
      await post([eur(fiatAccount(other), 1000n), eur(fiatAccount(master), -1000n)]);
      expect(await fiat(master)).toEqual({ balance: 0n, allocated: 0n });
    });

    it('balances a journal per asset: an exchange of EUR for USDC through the platform’s accounts', async () => {
      await post(fromClearing(master, 1000n));
      await post([
        eur(fiatAccount(master), -1000n),
        eur(clearing, 1000n),
        { account: clearing, asset: 'USDC', amount: -1_080_000n },
        { account: suspense, asset: 'USDC', amount: 1_080_000n },
      ]);
      expect(await fiat(master)).toEqual({ balance: 0n, allocated: 0n });
      const report = await verifyLedger(storage);
      expect(report.problems).toEqual([]);
      expect(report.system_balances_minor['suspense:USDC']).toBe('1080000');
    });

    it('keeps a virtual account’s money inside its master: allocation follows the virtual balance', async () => {
      await post(fromClearing(master, 1000n));
      const changes = await post(intoVirtual(600n));
      expect(changes.get(`fiat_account:${master}`)).toEqual({ beforeMinor: 1000n, afterMinor: 1600n });
      expect(changes.get(`virtual_account:${virtual}`)).toEqual({ beforeMinor: 0n, afterMinor: 600n });
      expect(await fiat(master)).toEqual({ balance: 1600n, allocated: 600n });
      expect(await virtualBalance(virtual)).toBe(600n);
      expect((await verifyLedger(storage)).problems).toEqual([]);
    });

    it('refuses a master debit that would use its virtual accounts’ money', async () => {
      await post(fromClearing(master, 1000n));
      await post(intoVirtual(600n));
      // Free: 1600 - 600 = 1000.
      const spend = (amountMinor: bigint) => post([eur(fiatAccount(master), -amountMinor), eur(suspense, amountMinor)]);
      await expect(spend(1001n)).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
      expect(await fiat(master)).toEqual({ balance: 1600n, allocated: 600n });
      await spend(1000n);
      expect(await fiat(master)).toEqual({ balance: 600n, allocated: 600n });
      await expect(spend(1n)).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
    });

    it('debits a virtual account and its master together, never beyond the virtual balance', async () => {
      await post(fromClearing(master, 1000n));
      await post(intoVirtual(600n));
      const fromVirtual = (amountMinor: bigint): Posting[] => [eur(fiatAccount(master), -amountMinor), eur(virtualAccount(), -amountMinor), eur(suspense, amountMinor)];
      await expect(post(fromVirtual(601n))).rejects.toMatchObject({ code: 'INSUFFICIENT_FUNDS', details: { account_id: virtual } });
      expect(await fiat(master)).toEqual({ balance: 1600n, allocated: 600n });
      const changes = await post(fromVirtual(600n));
      expect(changes.get(`virtual_account:${virtual}`)).toEqual({ beforeMinor: 600n, afterMinor: 0n });
      expect(changes.get(`fiat_account:${master}`)).toEqual({ beforeMinor: 1600n, afterMinor: 1000n });
      expect(await fiat(master)).toEqual({ balance: 1000n, allocated: 0n });
      expect((await verifyLedger(storage)).problems).toEqual([]);
    });

    it('serialises concurrent debits: of 20 parallel debits of 100 against 1000, exactly 10 pass', async () => {
      await post(fromClearing(master, 1000n));
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, () => post([eur(fiatAccount(master), -100n), eur(suspense, 100n)])),
      );
      expect(results.filter((result) => result.status === 'fulfilled')).toHaveLength(10);
      for (const result of results) if (result.status === 'rejected') expect(result.reason).toMatchObject({ code: 'INSUFFICIENT_FUNDS' });
      expect(await fiat(master)).toEqual({ balance: 0n, allocated: 0n });
    });
  });

  describe('verifyLedger', () => {
    it('passes on a consistent ledger, reporting what it checked and the system balances', async () => {
      await post(fromClearing(master, 1234n));
      const report = await verifyLedger(storage);
      expect(report.ok).toBe(true);
      expect(report.problems).toEqual([]);
      expect(report.checked.journals).toBe(await count('ledger_journal'));
      expect(report.checked.fiat_accounts).toBeGreaterThanOrEqual(2);
      expect(report.checked.virtual_accounts).toBeGreaterThanOrEqual(1);
      expect(typeof report.system_balances_minor['clearing:EUR']).toBe('string');
      expect(BigInt(report.system_balances_minor['clearing:EUR']!)).toBeLessThan(0n);
    });

    it('adds the platform accounts exactly beyond 64 bits: 10,000 postings of 10^15 into clearing', async () => {
      const journalId = randomUUID();
      await storage.db.insertInto('ledger_journal').values({ id: journalId, customer_id: customerId, kind: 'test_large', reference_id: journalId, created_at: now }).execute();
      const large = 10n ** 15n;
      for (let batch = 0; batch < 10; batch += 1) {
        const rows = Array.from({ length: 1000 }, () => [
          { journal_id: journalId, account_kind: 'system' as const, account_id: 'clearing:USDT', asset: 'USDT', amount_minor: large },
          { journal_id: journalId, account_kind: 'system' as const, account_id: 'suspense:USDT', asset: 'USDT', amount_minor: -large },
        ]).flat();
        await storage.db.insertInto('ledger_postings').values(rows).execute();
      }
      const report = await verifyLedger(storage);
      expect(report.system_balances_minor['clearing:USDT']).toBe(String(10_000n * large));
      expect(report.system_balances_minor['suspense:USDT']).toBe(String(-10_000n * large));
      await storage.db.deleteFrom('ledger_postings').where('journal_id', '=', journalId).execute();
      await storage.db.deleteFrom('ledger_journal').where('id', '=', journalId).execute();
    });

    it('finds a balance that does not match its postings', async () => {
      await post(fromClearing(master, 100n));
      await storage.db.updateTable('fiat_accounts').set({ balance_minor: 150n }).where('id', '=', master).execute();
      const report = await verifyLedger(storage);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual([{ kind: 'fiat_balance_mismatch', id: master, expected: '100', actual: '150' }]);
      await storage.db.updateTable('fiat_accounts').set({ balance_minor: 100n }).where('id', '=', master).execute();
      expect((await verifyLedger(storage)).ok).toBe(true);
    });

    it('finds a virtual balance and an allocation that do not match', async () => {
      await post(fromClearing(master, 100n));
      await post(intoVirtual(40n));
      await storage.db.updateTable('virtual_accounts').set({ balance_minor: 30n }).where('id', '=', virtual).execute();
      const report = await verifyLedger(storage);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual(
        expect.arrayContaining([
          { kind: 'virtual_balance_mismatch', id: virtual, expected: '40', actual: '30' },
          { kind: 'allocation_mismatch', id: master, expected: '30', actual: '40' },
        ]),
      );
      expect(report.problems).toHaveLength(2);
      await storage.db.updateTable('virtual_accounts').set({ balance_minor: 40n }).where('id', '=', virtual).execute();
      expect((await verifyLedger(storage)).ok).toBe(true);
    });

    it('finds a journal entry whose postings do not sum to zero in an asset, even when all assets together do', async () => {
      const journalId = randomUUID();
      await storage.db.insertInto('ledger_journal').values({ id: journalId, customer_id: customerId, kind: 'forged', reference_id: randomUUID(), created_at: now }).execute();
      await storage.db
        .insertInto('ledger_postings')
        .values([
          { journal_id: journalId, account_kind: 'system', account_id: 'clearing:EUR', asset: 'EUR', amount_minor: 7n },
          { journal_id: journalId, account_kind: 'system', account_id: 'clearing:USDC', asset: 'USDC', amount_minor: -7n },
        ])
        .execute();
      const report = await verifyLedger(storage);
      expect(report.ok).toBe(false);
      expect(report.problems).toEqual(
        expect.arrayContaining([
          { kind: 'unbalanced_journal', id: journalId, asset: 'EUR', expected: '0', actual: '7' },
          { kind: 'unbalanced_journal', id: journalId, asset: 'USDC', expected: '0', actual: '-7' },
        ]),
      );
      expect(report.problems).toHaveLength(2);
      await storage.db.deleteFrom('ledger_postings').where('journal_id', '=', journalId).execute();
      await storage.db.deleteFrom('ledger_journal').where('id', '=', journalId).execute();
      expect((await verifyLedger(storage)).ok).toBe(true);
    });
  });
});
