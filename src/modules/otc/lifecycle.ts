import type { Clock } from '../../clock.js';
import { DomainError, notFound } from '../../errors.js';
import type { CryptoAsset } from '../../ledger/assets.js';
import { executeMoneyMovement, moneyMovement, type MoneyMovement } from '../../ledger/money-movement.js';
import { external, statementLine } from '../../ledger/statement-lines.js';
import { plannedEvent } from '../../ledger/unit-of-work.js';
import type { Network } from '../../ledger/networks.js';
import type { AppliedMark, Lifecycle, ProviderEvent } from '../../providers/events.js';
import type { ReadCaches } from '../../storage/cache.js';
import type { Storage } from '../../storage/database.js';
import type { OtcOrdersTable } from '../../storage/tables.js';
import { addBalanceEvents, currentCustomerAccount, findCustomerAccount } from '../account-lookup.js';
import { accountPostings, explainedBy, requireCanSend, unchangedStatusGuards } from '../accounts/index.js';
import { addArrival, defaultWalletAddress } from '../wallets/index.js';
import { presentOrder } from './presenter.js';
import { findOrder, findOrderByReference } from './repository.js';
import type { OrderRecord } from './schemas.js';

/** Said of a failure whose liquidity provider gave no reason. */
const unexplainedFailure = 'Rejected by the liquidity provider';

/**
 * The OTC order lifecycle (docs/otc.md), whatever the liquidity provider: debit_pending → debited → settled, and
 * debit_pending | debited → failed, moved by the provider events `otc_order.debited`, `otc_order.settled` and
 * `otc_order.failed` (payload `{ reason? }`); the reference is the order's id, which the liquidity provider is given.
 * An order's EUR is debited (suspense → clearing), then the crypto is credited to the wallet (clearing → wallet, the
 * spread to fee income), or the order fails and its EUR is returned. Each step is one money movement with the event's
 * applied mark, guarded by the order's status, so a step happens once.
 */
export class OtcOrderLifecycle implements Lifecycle<'otc_order'> {
  readonly resource = 'otc_order';

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly caches: ReadCaches,
  ) {}

  /** The caller's order as it is now (404 for anyone else's): its reference, status and record. */
  async find(customerId: string, orderId: string): Promise<{ reference: string; status: OtcOrdersTable['status']; record: OrderRecord }> {
    const order = await findOrder(this.storage.db, customerId, orderId.toLowerCase());
    if (!order) throw notFound('order');
    return { reference: order.id, status: order.status, record: presentOrder(order) };
  }

  async apply(event: ProviderEvent, applied: AppliedMark): Promise<OrderRecord> {
    const order = await findOrderByReference(this.storage.db, event.reference);
    if (!order) throw notFound('order');
    switch (event.type) {
      case 'otc_order.debited':
        if (order.status !== 'debit_pending') throw this.refused(order, 'debited');
        return presentOrder(await this.debit(order, applied));
      case 'otc_order.settled':
        return presentOrder(await this.credit(order, applied));
      default:
        return presentOrder(await this.fail(order, typeof event.payload.reason === 'string' ? event.payload.reason : unexplainedFailure, applied));
    }
  }

  /**
   * debit_pending → debited: the reserved EUR leaves for the liquidity provider; its statement line completes. Only
   * while money may still leave the account it came from (ACCOUNT_NOT_ACTIVE otherwise): decided on its statuses as
   * stored now, and guarded to be the same when the step commits.
   */
  private async debit(order: OtcOrdersTable, applied: AppliedMark): Promise<OtcOrdersTable> {
    const account = await currentCustomerAccount(this.storage, order.customer_id, order.source_account_id);
    if (!account) throw new Error(`order ${order.id} names no account of its customer`);
    requireCanSend(account);
    const nowText = this.clock.now().toISOString();
    const next: OtcOrdersTable = { ...order, status: 'debited', debited_at: nowText, updated_at: nowText };
    const amount = BigInt(order.source_amount_minor);
    const movement = moneyMovement(order.customer_id, nowText, 'otc_debit', order.id, [
      { account: { kind: 'system', code: 'suspense' }, asset: 'EUR', amount: -amount },
      { account: { kind: 'system', code: 'clearing' }, asset: 'EUR', amount },
    ]);
    this.guard(movement, order, next, { debited_at: nowText });
    movement.work.guards.push(...unchangedStatusGuards(account), applied.guard);
    movement.work.statementLineUpdates.push({ id: order.transaction_id, status: 'completed', completed_at: nowText, updated_at: nowText });
    await executeMoneyMovement(this.storage, movement);
    return next;
  }

  /**
   * debited → settled: the crypto arrives in the wallet at the quoted amount, at the asset's default address, and is
   * listed with the wallet's deposits (docs/wallets.md "History"); the spread is the platform's.
   */
  private async credit(order: OtcOrdersTable, applied: AppliedMark): Promise<OtcOrdersTable> {
    if (order.status !== 'debited') throw this.refused(order, 'settled');
    const address = await defaultWalletAddress(this.storage.db, order.wallet_id, order.destination_currency);
    const nowText = this.clock.now().toISOString();
    const next: OtcOrdersTable = { ...order, status: 'settled', settled_at: nowText, updated_at: nowText };
    const asset = order.destination_currency as CryptoAsset;
    const credited = BigInt(order.destination_amount_minor);
    const spread = BigInt(order.spread_minor);
    const movement = moneyMovement(order.customer_id, nowText, 'otc_settle', order.id, [
      { account: { kind: 'system', code: 'clearing' }, asset, amount: -(credited + spread) },
      { account: { kind: 'wallet', id: order.wallet_id, asset }, asset, amount: credited },
      { account: { kind: 'system', code: 'fee_income' }, asset, amount: spread },
    ]);
    this.guard(movement, order, next, { settled_at: nowText });
    movement.work.guards.push(applied.guard);
    addArrival(movement.work, nowText, {
      customerId: order.customer_id,
      walletId: order.wallet_id,
      asset,
      network: address.network as Network,
      amountMinor: credited,
      address: address.address,
      note: `OTC order ${order.id}`,
    });
    await executeMoneyMovement(this.storage, movement);
    return next;
  }

  /**
   * debit_pending or debited → failed: the EUR goes back to the account (from suspense, or from the liquidity provider
   * once debited), with a statement line of the return.
   */
  private async fail(order: OtcOrdersTable, reason: string, applied: AppliedMark): Promise<OtcOrdersTable> {
    if (order.status !== 'debit_pending' && order.status !== 'debited') throw this.refused(order, 'failed');
    const debited = order.status === 'debited';
    const nowText = this.clock.now().toISOString();
    const next: OtcOrdersTable = { ...order, status: 'failed', failure_reason: reason, updated_at: nowText };
    const account = await this.sourceAccount(order);
    const amount = BigInt(order.source_amount_minor);
    const movement = moneyMovement(order.customer_id, nowText, 'otc_failed', order.id, [
      { account: { kind: 'system', code: debited ? 'clearing' : 'suspense' }, asset: 'EUR', amount: -amount },
      ...accountPostings(account, amount),
    ]);
    this.guard(movement, order, next, { failure_reason: reason });
    movement.work.guards.push(applied.guard);
    // Before the debit the EUR never left: its line fails. After it, the line stands and the return balances it.
    if (!debited) movement.work.statementLineUpdates.push({ id: order.transaction_id, status: 'failed', completed_at: null, updated_at: nowText });
    const returned = statementLine({
      customerId: order.customer_id,
      account,
      direction: 'incoming',
      type: 'otc_exchange_return',
      amountMinor: amount,
      status: 'completed',
      counterpart: external,
      description: `Return of exchange ${order.id}: ${reason}`,
      reference: order.id,
      at: nowText,
    });
    movement.work.statementLines.push(returned);
    await addBalanceEvents(this.storage, this.caches, movement, explainedBy(movement, returned.id));
    await executeMoneyMovement(this.storage, movement);
    return next;
  }

  /** The order's status change, once: the movement fails unless the order is still in the status it was read in. */
  private guard(movement: MoneyMovement, order: OtcOrdersTable, next: OtcOrdersTable, set: Record<string, string | null>): void {
    movement.work.guards.push({
      table: 'otc_orders',
      match: { id: order.id, status: order.status },
      set: { status: next.status, updated_at: next.updated_at, ...set },
      error: 'INVALID_STATUS_TRANSITION',
      message: 'The order moved on meanwhile.',
      details: { to: next.status },
    });
    movement.work.events.push(plannedEvent(order.customer_id, 'otc_order.status_updated', presentOrder(next), next.updated_at));
  }

  private async sourceAccount(order: OtcOrdersTable) {
    const account = await findCustomerAccount(this.storage, this.caches, order.customer_id, order.source_account_id);
    if (!account) throw new Error(`order ${order.id} names no account of its customer`);
    return account;
  }

  private refused(order: OtcOrdersTable, to: string): DomainError {
    return new DomainError('INVALID_STATUS_TRANSITION', `A ${order.status} order cannot become ${to}.`, { from: order.status, to });
  }
}
