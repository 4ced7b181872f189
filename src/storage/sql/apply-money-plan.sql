-- The live PL/pgSQL functions of the money path on PostgreSQL: the one source of their text.
--
-- src/storage/migrate.ts runs this file after the migrations whenever its SHA-256 differs from the one recorded in
-- the table function_checksums (and records the new one), under the migration lock: edit the functions here, never
-- in a migration. Migrations 0006, 0010 and 0014 created earlier versions; they stay as they were (history).
--
-- apply_money_plan(plan jsonb) executes a money plan (src/ledger/money-plan.ts, sent by
-- src/ledger/apply-plan-postgres.ts) inside one statement: one network round trip, and no row lock held while the
-- server waits for the client. SQLite runs the same plan as statements (src/ledger/apply-plan-sqlite.ts); both
-- follow the order documented in money-plan.ts. A failed guard, an overdraft or a debit of an account that is not
-- active raises SQLSTATE P0001 with the error code as message and JSON details as DETAIL, which rolls the whole
-- statement back.

-- A payload template (an event, a stored answer) with its values written in: a balance as a plain decimal
-- (trim_scale(units / 10^scale), the text src/ledger/money.ts plainDecimalText writes on SQLite), or an account's
-- status as a JSON string.
create or replace function money_plan_fill(template text, numbers jsonb, balances jsonb) returns text
language plpgsql immutable as $function$
declare
  filled text := template;
  number jsonb;
begin
  for number in select value from jsonb_array_elements(numbers) loop
    filled := replace(filled, number->>'placeholder',
      case when number->>'which' = 'status'
        then coalesce(to_jsonb(balances->(number->>'account')->>'status')::text, 'null')
        else trim_scale(((balances->(number->>'account')->>(number->>'which'))::numeric) / (10::numeric ^ (number->>'scale')::integer))::text
      end);
  end loop;
  return filled;
end
$function$;

create or replace function apply_money_plan(plan jsonb) returns jsonb
language plpgsql as $function$
declare
  history_count integer := jsonb_array_length(plan->'history');
  first_sequence bigint;
  balances jsonb := '{}'::jsonb;
  item jsonb;
  moved bigint;
  moved_status text;
  account_status text;
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
    moved_status := null;
    account_status := null;
    if item->>'kind' = 'fiat_account' then
      -- Only the unallocated part of a master pays its own debits: its virtual accounts' money stays theirs.
      -- Money leaves only an active account (a credit may arrive in a frozen one): checked in the statement that
      -- debits, so a freeze committed a moment earlier is never overtaken.
      update fiat_accounts set balance_minor = balance_minor + delta, updated_at = plan->>'createdAt'
        where id = item->>'id' and balance_minor - allocated_minor + delta >= 0 and (delta >= 0 or status = 'active')
        returning balance_minor, status into moved, moved_status;
      if moved is null then
        select status into account_status from fiat_accounts where id = item->>'id';
      end if;
    elsif item->>'kind' = 'virtual_account' then
      -- The master's own status is checked by its paired move, the debit of the fiat account that holds the money.
      update virtual_accounts set balance_minor = balance_minor + delta, updated_at = plan->>'createdAt'
        where id = item->>'id' and balance_minor + delta >= 0 and (delta >= 0 or status = 'active')
        returning balance_minor, status into moved, moved_status;
      if moved is not null then
        update fiat_accounts set allocated_minor = allocated_minor + delta where id = item->>'masterId';
      else
        select status into account_status from virtual_accounts where id = item->>'id';
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
    if moved is null and delta < 0 and account_status <> 'active' then
      raise exception using errcode = 'P0001', message = 'ACCOUNT_NOT_ACTIVE',
        detail = json_build_object('account_id', item->>'id', 'status', account_status)::text;
    end if;
    if moved is null then
      raise exception using errcode = 'P0001', message = 'INSUFFICIENT_FUNDS', detail = json_build_object('account_id', item->>'id')::text;
    end if;
    balances := balances || jsonb_build_object(item->>'key',
      jsonb_build_object('before', (moved - delta)::text, 'after', moved::text, 'status', moved_status));
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
      when 'sandbox_timers' then insert into sandbox_timers select * from jsonb_populate_record(null::sandbox_timers, item->'values');
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
