import { sql, type CompiledQuery, type Transaction } from 'kysely';
import { DomainError } from '../errors.js';
import { insertRowsTemplate, queryTemplate, type QueryTemplate } from '../storage/query-template.js';
import { storeIdempotentAnswerQuery } from '../storage/idempotency-answers.js';
import { runOnWriter, type WriterStatement } from '../storage/sqlite-group-commit.js';
import { insertOutboxRows } from '../events/outbox.js';
import type { Database, LedgerPostingsTable, PaymentsTable, SandboxTimersTable, TransactionsTable, WalletTransfersTable } from '../storage/tables.js';
import { plainDecimalText } from './money.js';
import { accountNotActive, idempotencyKeyLost, insufficientFunds, postingAccountId, walletCeilingReached, walletFundsShort } from './ledger.js';
import type { BalanceMove } from './ledger-entry.js';
import type { MoneyMovement, MovementResult } from './money-movement.js';
import type { PayloadValue } from './unit-of-work.js';

/**
 * Executes a money movement as statements of the caller's SQLite transaction, in the order docs/ledger.md "The money
 * path" gives — the same steps the PostgreSQL function `apply_money_plan` takes (src/storage/sql/apply-money-plan.sql). The statements every
 * movement runs are compiled once (storage/query-template.ts).
 */

interface BalanceUpdate {
  accountId: string;
  delta: bigint;
  updatedAt: string;
}

const reserveSequences = queryTemplate<{ customerId: string; count: number }>()(['customerId', 'count'], (db, { customerId, count }) =>
  db
    .updateTable('customers')
    .set({ transaction_count: sql`transaction_count + ${count}` })
    .where('id', '=', customerId)
    .returning('transaction_count'),
);

/**
 * Only the unallocated part of a master pays its own debits: its virtual accounts' money stays theirs. Money leaves
 * only an active account (ledger.ts accountNotActive), checked by the statement that debits it.
 */
const moveFiatBalance = queryTemplate<BalanceUpdate>()(['accountId', 'delta', 'updatedAt'], (db, { accountId, delta, updatedAt }) =>
  db
    .updateTable('fiat_accounts')
    .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: updatedAt })
    .where('id', '=', accountId)
    .where(sql<boolean>`balance_minor - allocated_minor + ${delta} >= 0`)
    .where(sql<boolean>`(${delta} >= 0 or status = 'active')`)
    .returning(['balance_minor', 'status']),
);

/** The master's status is checked by its paired move, the debit of the fiat account that holds the money. */
const moveVirtualBalance = queryTemplate<BalanceUpdate>()(['accountId', 'delta', 'updatedAt'], (db, { accountId, delta, updatedAt }) =>
  db
    .updateTable('virtual_accounts')
    .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: updatedAt })
    .where('id', '=', accountId)
    .where(sql<boolean>`balance_minor + ${delta} >= 0`)
    .where(sql<boolean>`(${delta} >= 0 or status = 'active')`)
    .returning(['balance_minor', 'status']),
);

/** Why a debit was refused: read only after the refusal, to name a status rather than a shortfall. */
const fiatAccountStatus = queryTemplate<{ accountId: string }>()(['accountId'], (db, { accountId }) =>
  db.selectFrom('fiat_accounts').select('status').where('id', '=', accountId),
);

const virtualAccountStatus = queryTemplate<{ accountId: string }>()(['accountId'], (db, { accountId }) =>
  db.selectFrom('virtual_accounts').select('status').where('id', '=', accountId),
);

const moveMasterAllocation = queryTemplate<{ masterAccountId: string; delta: bigint }>()(['masterAccountId', 'delta'], (db, { masterAccountId, delta }) =>
  db
    .updateTable('fiat_accounts')
    .set({ allocated_minor: sql`allocated_minor + ${delta}` })
    .where('id', '=', masterAccountId),
);

interface WalletBalanceUpdate {
  walletId: string;
  asset: string;
  delta: bigint;
  updatedAt: string;
}

/** Reserved money pays only the transfer that reserved it; a balance stays within its ceiling. */
const moveWalletBalance = queryTemplate<WalletBalanceUpdate & { ceiling: bigint }>()(
  ['walletId', 'asset', 'delta', 'updatedAt', 'ceiling'],
  (db, { walletId, asset, delta, updatedAt, ceiling }) =>
    db
      .updateTable('wallet_balances')
      .set({ balance_minor: sql`balance_minor + ${delta}`, updated_at: updatedAt })
      .where('wallet_id', '=', walletId)
      .where('asset', '=', asset)
      .where(sql<boolean>`balance_minor - reserved_minor + ${delta} >= 0`)
      .where(sql<boolean>`balance_minor <= ${ceiling} - ${delta}`)
      .returning('balance_minor'),
);

/** A reservation is taken only from what is available, and released only as far as it was taken. */
const holdWalletBalance = queryTemplate<WalletBalanceUpdate>()(['walletId', 'asset', 'delta', 'updatedAt'], (db, { walletId, asset, delta, updatedAt }) =>
  db
    .updateTable('wallet_balances')
    .set({ reserved_minor: sql`reserved_minor + ${delta}`, updated_at: updatedAt })
    .where('wallet_id', '=', walletId)
    .where('asset', '=', asset)
    .where(sql<boolean>`reserved_minor + ${delta} >= 0`)
    .where(sql<boolean>`balance_minor - reserved_minor - ${delta} >= 0`)
    .returning('reserved_minor'),
);

const insertJournal = queryTemplate<{ id: string; customerId: string; kind: string; referenceId: string; createdAt: string }>()(
  ['id', 'customerId', 'kind', 'referenceId', 'createdAt'],
  (db, { id, customerId, kind, referenceId, createdAt }) =>
    db.insertInto('ledger_journal').values({ id, customer_id: customerId, kind, reference_id: referenceId, created_at: createdAt }),
);

const insertPostings = insertRowsTemplate<Omit<LedgerPostingsTable, 'sequence'>>()(
  ['journal_id', 'account_kind', 'account_id', 'asset', 'amount_minor'],
  (db, rows) => db.insertInto('ledger_postings').values(rows),
);

/** Every column, in the order the INSERT lists them (bench/raw-payment-server.mjs runs the same SQL). */
const statementLineColumns = [
  'id', 'customer_id', 'customer_seq', 'fr_transaction_id', 'transaction_type', 'amount_minor', 'currency', 'status', 'direction',
  'account_id', 'virtual_account_id', 'from_account_id', 'from_account_type', 'to_account_id', 'to_account_type', 'description',
  'reference', 'counterparty_name', 'counterparty_account', 'fee_amount_minor', 'fee_currency', 'payee_id', 'payment_id',
  'balance_before_minor', 'balance_after_minor', 'completed_at', 'created_at', 'updated_at',
] as const;

const paymentColumns = [
  'id', 'customer_id', 'fr_payment_id', 'status', 'transaction_type', 'payment_scheme', 'amount_minor', 'fee_minor', 'fee_schedule_id',
  'currency', 'reference', 'from_account_id', 'from_virtual_account_id', 'to_account_id', 'to_virtual_account_id', 'payee_id',
  'payee_verification_id', 'umbrella_link_id', 'transaction_id', 'submit_at', 'failure_reason', 'completed_at', 'created_at', 'updated_at',
] as const;

const insertPayment = queryTemplate<PaymentsTable>()(paymentColumns, (db, row) => db.insertInto('payments').values(row));

const walletTransferColumns = [
  'id', 'customer_id', 'wallet_id', 'fr_transfer_id', 'direction', 'status', 'asset', 'network', 'amount_minor', 'destination', 'note',
  'tx_hash', 'failure_reason', 'completed_at', 'created_at', 'updated_at',
] as const;

const insertWalletTransfer = queryTemplate<WalletTransfersTable>()(walletTransferColumns, (db, row) => db.insertInto('wallet_transfers').values(row));

/** The sandbox's timer of a new payment or wallet transfer (providers/sandbox/timers.ts), on the same hot paths. */
const insertSandboxTimer = queryTemplate<SandboxTimersTable>()(['id', 'resource', 'customer_id', 'due_at', 'answer', 'clock_id'], (db, row) => db.insertInto('sandbox_timers').values(row));

const insertStatementLine = queryTemplate<TransactionsTable>()(statementLineColumns, (db, row) => db.insertInto('transactions').values(row));

const updateStatementLine = queryTemplate<{ id: string; status: string; completedAt: string | null; updatedAt: string }>()(
  ['id', 'status', 'completedAt', 'updatedAt'],
  (db, { id, status, completedAt, updatedAt }) => db.updateTable('transactions').set({ status, completed_at: completedAt, updated_at: updatedAt }).where('id', '=', id),
);

/**
 * Runs the movement inside `trx`, its statements executed synchronously on the writer (storage/sqlite-group-commit.ts
 * runOnWriter): one member of the group commit, like any transaction, without a promise per statement.
 */
export async function applyMovementOnSqlite(trx: Transaction<Database>, movement: MoneyMovement): Promise<MovementResult> {
  return runOnWriter(trx, (run) => applyMovement(trx, run, movement));
}

function applyMovement(trx: Transaction<Database>, run: WriterStatement, { customerId, createdAt, entry, work }: MoneyMovement): MovementResult {
  const first = <Params, Row>(template: QueryTemplate<Params, Row>, params: Params): Row | undefined => run<Row>(template.compile(trx, params)).rows[0];
  const changed = (query: CompiledQuery) => run(query).numAffectedRows;

  let firstSequence: bigint | null = null;
  const lineCount = work.statementLines.length;
  if (lineCount > 0) {
    const row = first(reserveSequences, { customerId, count: lineCount });
    if (!row) throw new DomainError('NOT_FOUND', 'No such customer.');
    firstSequence = BigInt(row.transaction_count) - BigInt(lineCount) + 1n;
  }

  for (const guard of work.guards) {
    let update = trx.updateTable(guard.table as 'payments').set(guard.set as never);
    for (const [column, value] of Object.entries(guard.match)) update = update.where(column as never, value === null ? 'is' : '=', value as never);
    if (changed(update.compile()) !== 1n) throw new DomainError(guard.error, guard.message, guard.details);
  }

  for (const hold of entry.holds) {
    if (!first(holdWalletBalance, { walletId: hold.walletId, asset: hold.asset, delta: hold.delta, updatedAt: createdAt })) throw walletFundsShort(hold.walletId, hold.asset);
  }

  const balances: MovementResult['balances'] = new Map();
  for (const move of entry.moves) {
    const row = moveBalance(first, move, createdAt);
    if (move.kind === 'virtual_account') run(moveMasterAllocation.compile(trx, { masterAccountId: move.masterId!, delta: move.delta }));
    const after = BigInt(row.balance_minor);
    balances.set(move.key, { before: after - move.delta, after, status: row.status });
  }

  if (entry.postings.length > 0) {
    run(insertJournal.compile(trx, { id: entry.id, customerId, kind: entry.kind, referenceId: entry.referenceId, createdAt }));
    run(
      insertPostings.compile(
        trx,
        entry.postings.map((posting) => ({
          journal_id: entry.id,
          account_kind: posting.account.kind,
          account_id: postingAccountId(posting),
          asset: posting.asset,
          amount_minor: posting.amount,
        })),
      ),
    );
  }

  for (const row of work.rows) {
    // The hot paths' inserts are compiled once; others are built per call.
    if (row.table === 'payments') run(insertPayment.compile(trx, row.values));
    else if (row.table === 'wallet_transfers') run(insertWalletTransfer.compile(trx, row.values));
    else if (row.table === 'sandbox_timers') run(insertSandboxTimer.compile(trx, row.values));
    else run(trx.insertInto(row.table).values(row.values).compile());
  }

  let sequence = firstSequence;
  for (const { balanceOf, ...line } of work.statementLines) {
    const balance = balances.get(balanceOf);
    if (!balance || sequence === null) throw new Error(`statement line ${line.id} shows a balance the movement does not move: ${balanceOf}`);
    run(insertStatementLine.compile(trx, { ...line, customer_seq: sequence, balance_before_minor: balance.before, balance_after_minor: balance.after }));
    sequence += 1n;
  }
  for (const update of work.statementLineUpdates) {
    run(updateStatementLine.compile(trx, { id: update.id, status: update.status, completedAt: update.completed_at, updatedAt: update.updated_at }));
  }

  if (work.events.length > 0) {
    run(
      insertOutboxRows.compile(
        trx,
        work.events.map((event) => ({
          id: event.id,
          customer_id: event.customerId,
          event_type: event.type,
          payload: filledIn(event.payload, event.numbers, balances),
          created_at: event.createdAt,
          published_at: null,
        })),
      ),
    );
  }

  let answerBody: string | null = null;
  if (work.answer) {
    const { answer } = work;
    answerBody = filledIn(answer.body, answer.numbers, balances);
    if (changed(storeIdempotentAnswerQuery(trx, answer, answer.status, answerBody)) !== 1n) throw idempotencyKeyLost();
  }
  return { balances, firstSequence, answerBody };
}

type First = <Params, Row>(template: QueryTemplate<Params, Row>, params: Params) => Row | undefined;

/**
 * Moves one balance; refuses (throws) when the move would overdraw it, take money out of an account that is not
 * active, or take a wallet beyond its ceiling.
 */
function moveBalance(first: First, move: BalanceMove, updatedAt: string): { balance_minor: bigint; status: string | null } {
  if (move.kind === 'wallet') {
    const moved = first(moveWalletBalance, { walletId: move.id, asset: move.asset, delta: move.delta, updatedAt, ceiling: move.ceiling! });
    if (moved) return { balance_minor: moved.balance_minor, status: null };
    throw move.delta > 0n ? walletCeilingReached(move.id, move.asset) : walletFundsShort(move.id, move.asset);
  }
  const update = { accountId: move.id, delta: move.delta, updatedAt };
  const moved = move.kind === 'fiat_account' ? first(moveFiatBalance, update) : first(moveVirtualBalance, update);
  if (moved) return moved;
  const account = first(move.kind === 'fiat_account' ? fiatAccountStatus : virtualAccountStatus, { accountId: move.id });
  if (move.delta < 0n && account && account.status !== 'active') throw accountNotActive(move.id, account.status);
  throw insufficientFunds(move.id);
}

/** A text template (events, stored answers) with its balances and statuses written in. */
function filledIn(text: string, numbers: readonly PayloadValue[], balances: MovementResult['balances']): string {
  let filled = text;
  for (const number of numbers) {
    const balance = balances.get(number.account);
    if (!balance) throw new Error(`a payload shows a balance the movement does not move: ${number.account}`);
    const value = number.which === 'status' ? JSON.stringify(balance.status) : plainDecimalText(balance[number.which], number.asset!);
    filled = filled.replace(number.placeholder, value);
  }
  return filled;
}
