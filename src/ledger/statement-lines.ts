import { newId } from '../ids.js';
import { providerId } from '../providers/provider-ids.js';
import type { FiatCurrency } from './assets.js';
import { balanceKey } from './ledger-entry.js';
import type { PlannedStatementLine } from './unit-of-work.js';

/**
 * Statement lines (docs/glossary.md): the rows of `transactions` that GET /transactions lists, one per movement of a
 * customer's fiat or virtual account that the customer sees. Every money operation builds its lines here, so a line
 * says the same thing the same way whichever operation wrote it.
 */

/** The customer account whose statement shows the line: a fiat account, or a virtual account inside its master. */
interface StatementAccount {
  kind: 'fiat_account' | 'virtual_account';
  id: string;
  /** The fiat account holding the money: the account itself, or a virtual account's master. */
  fiatAccountId: string;
  currency: FiatCurrency;
}

/** The other side of the line: where the money came from (incoming) or went to (outgoing). */
export interface Counterpart {
  id: string | null;
  type: string;
}

/** From outside the platform (a deposit, a return): no account of ours. */
export const external: Counterpart = { id: null, type: 'external' };

export interface StatementLineInput {
  customerId: string;
  account: StatementAccount;
  direction: 'incoming' | 'outgoing';
  /** The API's `transaction_type`: payment, payment_return, deposit, otc_exchange, otc_exchange_return. */
  type: string;
  amountMinor: bigint;
  /** A pending line completes (or fails) later, by a StatementLineUpdate of the movement that settles it. */
  status: 'pending' | 'completed';
  counterpart: Counterpart;
  description: string;
  reference: string | null;
  counterpartyName?: string | null;
  counterpartyAccount?: string | null;
  /** In the account's currency. */
  feeMinor?: bigint;
  payeeId?: string | null;
  paymentId?: string | null;
  /** When it happened: created, updated and (completed lines) completed then. */
  at: string;
  /** Given when the line's id is referenced before it is built (a payment names its line). */
  id?: string;
  /** The provider's id of the money movement, when the provider gave one (a deposit its bank reported); else a new one. */
  frTransactionId?: string;
}

/** The line, numbered and given its balances by the executor, which shows the balance of `account` it moved. */
export function statementLine(line: StatementLineInput): PlannedStatementLine {
  const { account, counterpart } = line;
  const own: Counterpart = { id: account.id, type: account.kind };
  const [from, to] = line.direction === 'incoming' ? [counterpart, own] : [own, counterpart];
  return {
    id: line.id ?? newId(),
    customer_id: line.customerId,
    fr_transaction_id: line.frTransactionId ?? providerId('txn'),
    transaction_type: line.type,
    amount_minor: line.amountMinor,
    currency: account.currency,
    status: line.status,
    direction: line.direction,
    account_id: account.fiatAccountId,
    virtual_account_id: account.kind === 'virtual_account' ? account.id : null,
    from_account_id: from.id,
    from_account_type: from.type,
    to_account_id: to.id,
    to_account_type: to.type,
    description: line.description,
    reference: line.reference,
    counterparty_name: line.counterpartyName ?? null,
    counterparty_account: line.counterpartyAccount ?? null,
    fee_amount_minor: line.feeMinor ?? 0n,
    fee_currency: account.currency,
    payee_id: line.payeeId ?? null,
    payment_id: line.paymentId ?? null,
    completed_at: line.status === 'completed' ? line.at : null,
    created_at: line.at,
    updated_at: line.at,
    balanceOf: balanceKey(account.kind === 'fiat_account' ? { kind: 'fiat_account', id: account.id } : { kind: 'virtual_account', id: account.id, masterId: account.fiatAccountId }),
  };
}
