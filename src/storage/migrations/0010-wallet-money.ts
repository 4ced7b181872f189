import { sql, type Kysely } from 'kysely';
import type { Migration } from 'kysely/migration';

/** Declared here: a migration imports nothing of the application (src/storage/migrate.ts). */
type Dialect = 'sqlite' | 'postgres';

/**
 * Money in wallets (docs/wallets.md "Balances and transfers"):
 *
 * - `wallet_balances`: one row per wallet and asset it has an address for. `balance_minor` is the ledger balance
 *   (the sum of the wallet's postings in that asset); `reserved_minor` is what pending outgoing transfers hold, so
 *   `balance_minor - reserved_minor` is what can still be sent. The CHECKs refuse an overdraft or an over-reservation
 *   even if the code were wrong.
 * - `wallet_transfers`: transfers out of a wallet and deposits into it, with their on-chain hash once settled.
 * - ledger postings may name a wallet (`account_kind` 'wallet', `account_id` the wallet, `asset` the balance).
 * - on PostgreSQL, `apply_money_plan` learns the wallet balance moves, the reservations ("holds"), the
 *   wallet_transfers rows, and rows of any other table; the steps and their order are those of src/ledger/money-plan.ts.
 *
 * The asset and network CHECKs list the registries as they were when this migration was written; a test compares
 * them with `src/ledger/assets.ts` and `src/ledger/networks.ts`.
 */
export function walletMoneyMigration(dialect: Dialect): Migration {
  return {
    async up(db: Kysely<any>) {
      await widenPostingAccountKinds(db, dialect);

      await db.schema
        .createTable('wallet_balances')
        .addColumn('wallet_id', 'text', (col) => col.notNull().references('wallets.id'))
        .addColumn('asset', 'text', (col) => col.notNull().check(sql`asset in ('USDC', 'USDT', 'EURC', 'BTC', 'SOL', 'ETH')`))
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('balance_minor', 'bigint', (col) => col.notNull().check(sql`balance_minor >= 0`))
        .addColumn('reserved_minor', 'bigint', (col) => col.notNull().check(sql`reserved_minor >= 0`))
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .addPrimaryKeyConstraint('wallet_balances_pkey', ['wallet_id', 'asset'])
        .addCheckConstraint('wallet_balances_reserved_covered', sql`reserved_minor <= balance_minor`)
        .execute();
      // A wallet holds the assets it has addresses for: the balances of the wallets made before this migration.
      await sql`insert into wallet_balances (wallet_id, asset, customer_id, balance_minor, reserved_minor, updated_at)
        select wallet_id, asset, customer_id, 0, 0, created_at from wallet_addresses where is_default = 1`.execute(db);

      await db.schema
        .createTable('wallet_transfers')
        .addColumn('id', 'text', (col) => col.primaryKey())
        .addColumn('customer_id', 'text', (col) => col.notNull().references('customers.id'))
        .addColumn('wallet_id', 'text', (col) => col.notNull().references('wallets.id'))
        .addColumn('fr_transfer_id', 'text', (col) => col.notNull().unique())
        .addColumn('direction', 'text', (col) => col.notNull().check(sql`direction in ('incoming', 'outgoing')`))
        .addColumn('status', 'text', (col) => col.notNull().check(sql`status in ('pending', 'completed', 'failed')`))
        .addColumn('asset', 'text', (col) => col.notNull().check(sql`asset in ('USDC', 'USDT', 'EURC', 'BTC', 'SOL', 'ETH')`))
        .addColumn('network', 'text', (col) => col.notNull().check(sql`network in ('ETH', 'ARB', 'BASE', 'MATIC', 'SOL', 'TRX', 'BTC')`))
        .addColumn('amount_minor', 'bigint', (col) => col.notNull().check(sql`amount_minor > 0`))
        .addColumn('destination', 'text', (col) => col.notNull())
        .addColumn('note', 'text')
        .addColumn('tx_hash', 'text')
        .addColumn('failure_reason', 'text')
        .addColumn('settle_at', 'text')
        .addColumn('completed_at', 'text')
        .addColumn('created_at', 'text', (col) => col.notNull())
        .addColumn('updated_at', 'text', (col) => col.notNull())
        .execute();
      await db.schema.createIndex('wallet_transfers_wallet_idx').on('wallet_transfers').columns(['wallet_id', 'created_at']).execute();
      await db.schema.createIndex('wallet_transfers_settle_idx').on('wallet_transfers').columns(['status', 'settle_at']).execute();

      if (dialect === 'postgres') await sql.raw(applyMoneyPlanFunction).execute(db);
    },
  };
}

const postingAccountKinds = sql`account_kind in ('fiat_account', 'virtual_account', 'system', 'wallet')`;

/** PostgreSQL alters the CHECK; SQLite cannot, so the table is rebuilt with its rows, sequence numbers and indexes. */
async function widenPostingAccountKinds(db: Kysely<any>, dialect: Dialect): Promise<void> {
  if (dialect === 'postgres') {
    await db.schema.alterTable('ledger_postings').dropConstraint('ledger_postings_account_kind_check').execute();
    await db.schema.alterTable('ledger_postings').addCheckConstraint('ledger_postings_account_kind_check', postingAccountKinds).execute();
    return;
  }
  await db.schema
    .createTable('ledger_postings_next')
    .addColumn('sequence', 'integer', (col) => col.primaryKey().autoIncrement())
    .addColumn('journal_id', 'text', (col) => col.notNull().references('ledger_journal.id'))
    .addColumn('account_kind', 'text', (col) => col.notNull().check(postingAccountKinds))
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('asset', 'text', (col) => col.notNull())
    .addColumn('amount_minor', 'bigint', (col) => col.notNull().check(sql`amount_minor <> 0`))
    .execute();
  await sql`insert into ledger_postings_next (sequence, journal_id, account_kind, account_id, asset, amount_minor)
    select sequence, journal_id, account_kind, account_id, asset, amount_minor from ledger_postings`.execute(db);
  await db.schema.dropTable('ledger_postings').execute();
  await db.schema.alterTable('ledger_postings_next').renameTo('ledger_postings').execute();
  await db.schema.createIndex('ledger_postings_journal_idx').on('ledger_postings').column('journal_id').execute();
  await db.schema.createIndex('ledger_postings_account_idx').on('ledger_postings').columns(['account_kind', 'account_id']).execute();
}

/**
 * The function of migration 0006 with the wallet steps added (holds before moves; wallet moves; wallet_transfers
 * rows), rows of any table, and guards an index can answer. Kept whole in one string so the migration creates exactly this text.
 * History: the live text is src/storage/sql/apply-money-plan.sql.
 */
const applyMoneyPlanFunction = String.raw`
create or replace function apply_money_plan(plan jsonb) returns jsonb
language plpgsql as $function$
declare
  history_count integer := jsonb_array_length(plan->'history');
  first_sequence bigint;
  balances jsonb := '{}'::jsonb;
  item jsonb;
  moved bigint;
  delta bigint;
  changed integer;
  columns_set text;
  columns_match text;
  position integer;
  answer text;
begin
  -- 1. The customer's history sequence, first: every money operation of one customer takes this row lock before
  --    any account's, always in the same order.
  if history_count > 0 then
    update customers set transaction_count = transaction_count + history_count
      where id = plan->>'customerId'
      returning transaction_count - history_count + 1 into first_sequence;
    if first_sequence is null then
      raise exception using errcode = 'P0001', message = 'NOT_FOUND', detail = '{"message": "No such customer."}';
    end if;
  end if;

  -- 2. Guards: conditional single-row updates. (Each loop over an empty list would still cost a query: skipped.)
  if jsonb_array_length(plan->'guards') > 0 then
    for item in select value from jsonb_array_elements(plan->'guards') loop
      select string_agg(quote_ident(key), ', ') into columns_set from jsonb_object_keys(item->'set') as key;
      -- Each column of match: a null matches a null (IS NULL, as on SQLite), any other value by equality, which an
      -- index can answer (IS NOT DISTINCT FROM cannot: the guard would scan the whole table).
      select string_agg(
          case when jsonb_typeof(item->'match'->key) = 'null' then format('%1$I is null', key)
               else format('%1$I = (jsonb_populate_record(null::%2$I, $2)).%1$I', key, item->>'table') end,
          ' and ')
        into columns_match from jsonb_object_keys(item->'match') as key;
      execute format(
        'update %I set (%s) = (select %s from jsonb_populate_record(null::%I, $1)) where %s',
        item->>'table', columns_set, columns_set, item->>'table', columns_match
      ) using item->'set', item->'match';
      get diagnostics changed = row_count;
      if changed <> 1 then
        raise exception using errcode = 'P0001', message = item->>'error', detail = json_build_object('message', item->>'message')::text;
      end if;
    end loop;
  end if;

  -- 3a. Holds: a wallet's reservation taken (only from what is available) or released.
  if jsonb_array_length(plan->'holds') > 0 then
    for item in select value from jsonb_array_elements(plan->'holds') loop
      delta := (item->>'delta')::bigint;
      update wallet_balances set reserved_minor = reserved_minor + delta, updated_at = plan->>'createdAt'
        where wallet_id = item->>'walletId' and asset = item->>'asset'
          and reserved_minor + delta >= 0 and balance_minor - reserved_minor - delta >= 0;
      get diagnostics changed = row_count;
      if changed <> 1 then
        raise exception using errcode = 'P0001', message = 'INSUFFICIENT_FUNDS',
          detail = json_build_object('wallet_id', item->>'walletId', 'asset', item->>'asset')::text;
      end if;
    end loop;
  end if;

  -- 3b. Balance moves, each conditional on the (available) balance staying non-negative.
  for item in select value from jsonb_array_elements(plan->'moves') loop
    delta := (item->>'delta')::bigint;
    moved := null;
    if item->>'kind' = 'fiat_account' then
      -- Only the unallocated part of a master pays its own debits: its virtual accounts' money stays theirs.
      update fiat_accounts set balance_minor = balance_minor + delta, updated_at = plan->>'createdAt'
        where id = item->>'id' and balance_minor - allocated_minor + delta >= 0
        returning balance_minor into moved;
    elsif item->>'kind' = 'virtual_account' then
      update virtual_accounts set balance_minor = balance_minor + delta, updated_at = plan->>'createdAt'
        where id = item->>'id' and balance_minor + delta >= 0
        returning balance_minor into moved;
      if moved is not null then
        update fiat_accounts set allocated_minor = allocated_minor + delta where id = item->>'masterId';
      end if;
    elsif item->>'kind' = 'wallet' then
      -- Reserved money pays only the transfer that reserved it; a balance stays within its ceiling.
      update wallet_balances set balance_minor = balance_minor + delta, updated_at = plan->>'createdAt'
        where wallet_id = item->>'id' and asset = item->>'asset'
          and balance_minor - reserved_minor + delta >= 0 and balance_minor <= (item->>'ceiling')::bigint - delta
        returning balance_minor into moved;
      if moved is null and delta > 0 then
        raise exception using errcode = 'P0001', message = 'LIMIT_EXCEEDED',
          detail = json_build_object('wallet_id', item->>'id', 'asset', item->>'asset')::text;
      end if;
      if moved is null then
        raise exception using errcode = 'P0001', message = 'INSUFFICIENT_FUNDS',
          detail = json_build_object('wallet_id', item->>'id', 'asset', item->>'asset')::text;
      end if;
    end if;
    if moved is null then
      raise exception using errcode = 'P0001', message = 'INSUFFICIENT_FUNDS', detail = json_build_object('account_id', item->>'id')::text;
    end if;
    balances := balances || jsonb_build_object(item->>'key', jsonb_build_object('before', (moved - delta)::text, 'after', moved::text));
  end loop;

  -- 4. The journal and its postings.
  if jsonb_typeof(plan->'journal') = 'object' then
    insert into ledger_journal (id, customer_id, kind, reference_id, created_at)
      values (plan->'journal'->>'id', plan->>'customerId', plan->'journal'->>'kind', plan->'journal'->>'referenceId', plan->>'createdAt');
    insert into ledger_postings (journal_id, account_kind, account_id, asset, amount_minor)
      select plan->'journal'->>'id', posting->>'accountKind', posting->>'accountId', posting->>'asset', (posting->>'amount')::bigint
      from jsonb_array_elements(plan->'journal'->'postings') as posting;
  end if;

  -- 5. Domain rows, whole rows of the tables a plan may insert into. The hot paths' tables have static statements,
  --    planned once per session; any other table a dynamic one (parsed and planned on every call), so a new kind
  --    of money operation needs no new version of this function.
  for item in select value from jsonb_array_elements(plan->'rows') loop
    case item->>'table'
      when 'payments' then insert into payments select * from jsonb_populate_record(null::payments, item->'values');
      when 'wallet_transfers' then insert into wallet_transfers select * from jsonb_populate_record(null::wallet_transfers, item->'values');
      else execute format('insert into %I select * from jsonb_populate_record(null::%I, $1)', item->>'table', item->>'table') using item->'values';
    end case;
  end loop;

  -- 6. History records, numbered and given their balance; then status updates of earlier ones.
  position := 0;
  for item in select value from jsonb_array_elements(plan->'history') loop
    insert into transactions
      select * from jsonb_populate_record(null::transactions, item || jsonb_build_object(
        'customer_seq', first_sequence + position,
        'balance_before_minor', balances->(item->>'balanceOf')->>'before',
        'balance_after_minor', balances->(item->>'balanceOf')->>'after'));
    position := position + 1;
  end loop;
  if jsonb_array_length(plan->'historyUpdates') > 0 then
    for item in select value from jsonb_array_elements(plan->'historyUpdates') loop
      update transactions set status = item->>'status', completed_at = item->>'completed_at', updated_at = item->>'updated_at'
        where id = item->>'id';
    end loop;
  end if;

  -- 7. Outbox events, their balance numbers written in as plain decimals.
  insert into outbox_events (id, customer_id, event_type, payload, created_at, published_at)
    select event->>'id', event->>'customerId', event->>'type', money_plan_fill(event->>'payload', event->'numbers', balances), event->>'createdAt', null
    from jsonb_array_elements(plan->'events') as event;

  -- 8. The answer of an operation run under an Idempotency-Key, stored with its money, while the key is still ours.
  if jsonb_typeof(plan->'response') = 'object' then
    answer := money_plan_fill(plan->'response'->>'body', plan->'response'->'numbers', balances);
    update idempotency_keys
      set status = 'completed', response_status = (plan->'response'->>'status')::integer, response_body = answer
      where customer_id = plan->'response'->>'customerId' and key = plan->'response'->>'key'
        and attempt_id = plan->'response'->>'attemptId' and status = 'in_progress';
    get diagnostics changed = row_count;
    if changed <> 1 then
      raise exception using errcode = 'P0001', message = 'IDEMPOTENCY_KEY_IN_USE', detail = '{}';
    end if;
  end if;

  return jsonb_build_object('firstSequence', first_sequence::text, 'balances', balances, 'responseBody', answer);
end
$function$;
`;
